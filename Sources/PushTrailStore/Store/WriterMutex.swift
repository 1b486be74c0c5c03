#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Queues this process's threads for the writers' `flock` (see `Store.exclusively`):
/// one recursive mutex for the process, and how deeply its owner holds each lock file.
final class WriterMutex: @unchecked Sendable {
    static let shared = WriterMutex()

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Nesting per lock file, read and written only by the mutex's owner.
    private var depths: [Int32: Int] = [:]

    private init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    /// Takes the mutex; returns how deeply the calling thread now holds `fd` (1: it
    /// must take the `flock`).
    func lock(_ fd: Int32) -> Int {
        pthread_mutex_lock(mutex)
        let depth = depths[fd, default: 0] + 1
        depths[fd] = depth
        return depth
    }

    /// Releases one `lock(fd)`.
    func unlock(_ fd: Int32) {
        let depth = depths[fd, default: 1] - 1
        depths[fd] = depth == 0 ? nil : depth
        pthread_mutex_unlock(mutex)
    }
}
