import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex and condition variable on stable heap memory (pthread objects must not
/// move). Plain pthreads keep the tool free of Foundation, which would not link into
/// a statically linked release binary. The server's threads share it too.
public final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    public func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// For a critical section that does not fit one closure: pair each `lock` with one
    /// `unlock` on the same thread.
    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Waits for a broadcast; call with the lock held (inside `locked`).
    func wait() { pthread_cond_wait(condition, mutex) }
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits for a broadcast or until `seconds` have passed; call with the lock held.
    public func wait(seconds: Double) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = Int(now.tv_nsec) + Int(seconds.truncatingRemainder(dividingBy: 1) * 1e9)
        var until = timespec()
        until.tv_sec = now.tv_sec + Int(seconds) + nanos / 1_000_000_000
        until.tv_nsec = nanos % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &until)
    }
}

/// A counting semaphore: at most `count` holders at once, the others wait in `acquire`.
public final class Slots: @unchecked Sendable {
    private let monitor = Monitor()
    private var free: Int

    public init(_ count: Int) {
        free = max(1, count)
    }

    /// Waits for a free slot and takes it.
    public func acquire() {
        monitor.lock()
        while free == 0 { monitor.wait() }
        free -= 1
        monitor.unlock()
    }

    /// Gives back a slot taken with `acquire`.
    public func release() {
        monitor.locked { free += 1 }
        monitor.broadcast()
    }
}

/// A thread running one closure, joined with `join()` or let go with `detach()`.
final class WorkerThread: @unchecked Sendable {
    #if canImport(Darwin)
        private var thread: pthread_t?
    #else
        private var thread = pthread_t()
    #endif
    private let body: @Sendable () -> Void
    /// Whether `thread` is one: when none could be made, `start` ran the body inline.
    private var started = false

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    func start() {
        if !tryStart() { body() }
    }

    /// Starts the thread; false (and nothing run) when none could be made.
    func tryStart() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                #if canImport(Darwin)
                    let me = Unmanaged<WorkerThread>.fromOpaque(raw).takeRetainedValue()
                #else
                    let me = Unmanaged<WorkerThread>.fromOpaque(raw!).takeRetainedValue()
                #endif
                me.body()
                return nil
            }, context)
        started = rc == 0
        if rc != 0 { Unmanaged<WorkerThread>.fromOpaque(context).release() }
        return started
    }

    func join() {
        guard started else { return }
        #if canImport(Darwin)
            if let thread { pthread_join(thread, nil) }
        #else
            pthread_join(thread, nil)
        #endif
    }

    /// Lets a started thread end on its own, never joined (its resources go back when
    /// it ends).
    func detach() {
        guard started else { return }
        #if canImport(Darwin)
            if let thread { pthread_detach(thread) }
        #else
            pthread_detach(thread)
        #endif
    }
}

/// The system clock, at microsecond precision.
public enum WallClock {
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }
}

/// Runs each job on a thread of its own (the first on the calling thread) and returns
/// their results in order, once all have ended: for the few slow, independent waits of
/// a question put to several shards at once.
public func inParallel<T: Sendable>(_ jobs: [@Sendable () throws -> T]) -> [Result<T, any Error>] {
    let boxes = jobs.map { _ in ResultBox<T>() }
    let threads = zip(jobs, boxes).dropFirst().map { job, box in
        WorkerThread { box.result = Result { try job() } }
    }
    for t in threads { t.start() }
    if let first = jobs.first { boxes[0].result = Result { try first() } }
    for t in threads { t.join() }
    return boxes.map { $0.result! }
}

/// A result one thread writes and another reads after joining it.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
