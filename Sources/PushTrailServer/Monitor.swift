#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex with a condition: what the server's threads (one per connection) share.
final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every thread waiting in `wait`.
    func broadcast() { locked { pthread_cond_broadcast(condition) } }

    /// Waits, with the mutex held by the caller inside `locked`, until woken or until
    /// `seconds` have passed.
    func wait(seconds: Double) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = Int(now.tv_nsec) + Int(seconds.truncatingRemainder(dividingBy: 1) * 1e9)
        var until = timespec()
        until.tv_sec = now.tv_sec + Int(seconds) + nanos / 1_000_000_000
        until.tv_nsec = nanos % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &until)
    }
}

/// The monotonic clock in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
