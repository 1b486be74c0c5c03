import LMDBKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure a store cannot report by throwing: it happens inside a signal handler or
/// inside LMDB, where the transaction in progress can neither finish nor unwind.
public enum StoreFault: Int32, Sendable {
    /// A write through the writable map touched a page the disk cannot back (the disk
    /// is full, or the file was cut short under the writer): SIGBUS, not a failed write.
    case unbackedPage = 1
    /// LMDB found a page that contradicts itself: the file is damaged. Nothing of the
    /// transaction was written (a writer's file is first cut back to its last commit).
    case damagedPage = 2
}

/// What the process does on a `StoreFault`, chosen by the program that embeds the
/// store (the command line prints a line and exits 74; a server may do otherwise).
///
/// Either way the transaction in progress is lost exactly as if the process had been
/// killed: what was committed before is intact, and running the same work again
/// completes it (duplicates are skipped).
public enum StoreFaults {
    /// Called on the faulting thread with the fault, the store's path and, for a damaged
    /// page, LMDB's words (else nil), as C strings. It runs in a signal handler or in
    /// LMDB's assertion hook, so it may do only async-signal-safe work (`write`,
    /// `_exit`), and it should not return: when it does, or when none is installed, the
    /// process ends by SIGBUS or by LMDB's `abort`.
    public typealias Handler = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void

    /// Installs `handler` for the whole process. Call it once, before the first store
    /// is opened.
    public static func install(_ handler: Handler) {
        handlerSlot.pointee = handler
        _ = MapFaultGuard.installed
    }

    /// The installed handler, in memory of its own so that a signal handler reads it
    /// without touching Swift's runtime.
    nonisolated(unsafe) static let handlerSlot: UnsafeMutablePointer<Handler?> = {
        let slot = UnsafeMutablePointer<Handler?>.allocate(capacity: 1)
        slot.initialize(to: nil)
        return slot
    }()
}

/// Turns a fault on the store's writable map during a write transaction into a
/// `StoreFault.unbackedPage` for the installed `StoreFaults` handler.
///
/// Writing through a map, a page the disk cannot back is not a failed `write` but
/// SIGBUS, delivered to the thread that wrote. Each guarded thread keeps its store's
/// path in a thread-specific slot, so stores written at once from several threads each
/// name their own. Outside a write transaction the signal goes back to whatever handled
/// it before.
enum MapFaultGuard {
    /// What the handler reads: the handler that was installed before ours, and the
    /// thread-specific key that holds a guarded thread's store path. Filled in once,
    /// before the handler is installed, and never changed after; nil when the handler
    /// could not be installed.
    struct Installed {
        var previous = sigaction()
        var pathKey = pthread_key_t()
    }

    /// Installs the signal handler, once per process (a `static let` is initialised
    /// once, whichever thread gets there first). The state lives in memory of its own:
    /// with both as static `var`s, the debug build's `sigaction(…, &previous)` was seen
    /// to overwrite the key declared beside it (the fault test caught it).
    nonisolated(unsafe) static let installed: UnsafeMutablePointer<Installed>? = {
        let state = UnsafeMutablePointer<Installed>.allocate(capacity: 1)
        state.initialize(to: Installed())
        guard pthread_key_create(&state.pointee.pathKey, nil) == 0 else { return nil }
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_sigaction = handler
        #else
            action.__sigaction_u.__sa_sigaction = handler
        #endif
        action.sa_flags = SA_SIGINFO
        sigemptyset(&action.sa_mask)
        guard sigaction(SIGBUS, &action, &state.pointee.previous) == 0 else { return nil }
        return state
    }()

    /// Runs `body`, a write transaction through the writable map of the store at
    /// `path`, with the guard on for the calling thread.
    static func guarding<R>(store path: String, _ body: () throws -> R) rethrows -> R {
        guard let key = installed?.pointee.pathKey else { return try body() }
        // A C string, so that the handler needs nothing of Swift's.
        let cPath = strdup(path)
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, cPath)
        defer {
            pthread_setspecific(key, outer)
            free(cPath)
        }
        return try body()
    }

    private static let handler:
        @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
            _, _, _ in
            guard let state = MapFaultGuard.installed else { return }
            if let path = pthread_getspecific(state.pointee.pathKey) {
                if let handler = StoreFaults.handlerSlot.pointee {
                    handler(
                        StoreFault.unbackedPage.rawValue, UnsafePointer(path.assumingMemoryBound(to: CChar.self)), nil)
                }
                // No handler, or it returned: the process cannot go on; end it by the signal.
                signal(SIGBUS, SIG_DFL)
                return
            }
            // Not a write through the map: the previous handler takes it when the faulting
            // access runs again.
            sigaction(SIGBUS, &state.pointee.previous, nil)
        }
}

/// Turns a failed LMDB assertion into a `StoreFault.damagedPage` for the installed
/// `StoreFaults` handler. LMDB asserts when a page contradicts itself, which in a store
/// means a damaged file (pages of garbage behind intact meta pages), and aborts after
/// the hook returns. A writer's file is first cut back to the pages of the last commit,
/// as `Store.trim` does (LMDB extends a writable map's file when it opens it), so a
/// refused write leaves the file as it found it.
enum DamagedPageGuard {
    /// The handler for `EnvironmentOptions.assertionHandler`. It names the store by the
    /// environment's label (the store's path) rather than a global, which stores opened
    /// at once in one process (the tests) would race on.
    static let handler: EnvironmentOptions.AssertionHandler = { env, detail in
        if let env { Environment.trimToLastCommit(env) }
        if let handler = StoreFaults.handlerSlot.pointee {
            handler(StoreFault.damagedPage.rawValue, Environment.labelCString(of: env), detail)
        }
    }
}
