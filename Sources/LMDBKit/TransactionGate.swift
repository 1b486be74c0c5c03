#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps an environment's map still while any thread of this process has a
/// transaction open.
///
/// LMDB may change the map (`mdb_env_set_mapsize`, to grow it or to adopt another
/// process's growth) only while the process has no transaction open: the call unmaps
/// and maps again, and every page pointer another thread holds would then point at
/// nothing. Transactions `enter` the gate and `leave` it; a `resize` waits until none
/// is open, and new ones wait while it is pending or running, so a stream of readers
/// cannot starve it. A thread that already has a transaction open enters again
/// without waiting (the resize is waiting for it anyway).
final class TransactionGate: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Transactions open in this process, across threads.
    private var open = 0
    /// A resize is waiting for the open transactions to end, or running.
    private var resizing = false
    /// This thread's open transactions, as an integer in a thread-specific slot.
    private var depthKey = pthread_key_t()

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        pthread_key_create(&depthKey, nil)
    }

    deinit {
        pthread_key_delete(depthKey)
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Transactions the calling thread has open.
    var depth: Int {
        get { Int(bitPattern: pthread_getspecific(depthKey)) }
        set { pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Counts a transaction about to begin; waits while a resize is pending unless this
    /// thread already has one open, or returns false then when `waiting` is off.
    func enter(waiting: Bool = true) -> Bool {
        let mine = depth
        pthread_mutex_lock(mutex)
        while resizing && mine == 0 {
            guard waiting else {
                pthread_mutex_unlock(mutex)
                return false
            }
            pthread_cond_wait(changed, mutex)
        }
        open += 1
        pthread_mutex_unlock(mutex)
        depth = mine + 1
        return true
    }

    /// Counts a transaction as ended.
    func leave() {
        depth -= 1
        pthread_mutex_lock(mutex)
        open -= 1
        if open == 0 { pthread_cond_broadcast(changed) }
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` while no transaction of this process is open. Throws `EDEADLK`
    /// when the calling thread itself has one open: it would wait for itself.
    func resize<R>(_ body: () throws -> R) throws -> R {
        guard depth == 0 else {
            throw LMDBError(code: EDEADLK, operation: "map resize inside a transaction of the same thread")
        }
        pthread_mutex_lock(mutex)
        while resizing { pthread_cond_wait(changed, mutex) }
        resizing = true
        while open > 0 { pthread_cond_wait(changed, mutex) }
        defer {
            resizing = false
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
