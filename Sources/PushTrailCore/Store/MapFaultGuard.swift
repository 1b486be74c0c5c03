#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

import LMDBKit

/// Turns a fault on the store's writable map during a write transaction into a
/// one-line error and exit 74.
///
/// Writing through a map, a page the disk cannot back (the disk is full, or the file
/// was cut short under us) is not a failed `write` but SIGBUS. The write transaction
/// in progress is then lost, exactly as if the process had been killed; what was
/// committed before is intact, and running the same ingest again completes it
/// (duplicates are skipped). The handler only writes a prepared message and exits,
/// which is all a signal handler may do. Outside a write transaction it hands the
/// signal back to whatever handled it before.
enum MapFaultGuard {
    /// What the handler reads: the handler that was installed before ours, and the
    /// thread-specific key that holds a guarded thread's message. Filled in once,
    /// before the handler is installed, and never changed after; nil when the handler
    /// could not be installed.
    private struct Installed {
        var previous = sigaction()
        var messageKey = pthread_key_t()
    }

    /// Installs the handler, once per process (a `static let` is initialised once,
    /// whichever thread gets there first). The state lives in memory of its own: with
    /// both as static `var`s, the debug build's `sigaction(…, &previous)` was seen to
    /// overwrite the key declared beside it (cause not found; the fault test caught it).
    nonisolated(unsafe) private static let installed: UnsafeMutablePointer<Installed>? = {
        let state = UnsafeMutablePointer<Installed>.allocate(capacity: 1)
        state.initialize(to: Installed())
        guard pthread_key_create(&state.pointee.messageKey, nil) == 0 else { return nil }
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

    /// The exit status of an I/O failure (SPEC: 74).
    static let exitStatus: Int32 = 74

    /// Runs `body`, a write transaction through the writable map of the store at
    /// `path`, with the guard on for the calling thread. A fault is delivered to the
    /// thread that made it, so the message is that thread's: stores written at once
    /// from several threads each name their own.
    static func guarding<R>(store path: String, _ body: () throws -> R) rethrows -> R {
        guard let key = installed?.pointee.messageKey else { return try body() }
        let text = "pushtrail: cannot write store \(path): a page of its file could not be stored (no space left on "
            + "the device, or the file was cut short); what was committed before is intact: free space and run "
            + "the same command again (duplicates are skipped)\n"
        // A C string, so that the handler needs nothing but `strlen` and `write`.
        let message = strdup(text)
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, message)
        defer {
            pthread_setspecific(key, outer)
            free(message)
        }
        return try body()
    }

    private static let handler: @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
        _, _, _ in
        guard let state = MapFaultGuard.installed else { return }
        if let message = pthread_getspecific(state.pointee.messageKey) {
            _ = write(2, message, strlen(message.assumingMemoryBound(to: CChar.self)))
            _exit(MapFaultGuard.exitStatus)
        }
        // Not a write through the map: the previous handler takes it when the faulting
        // access runs again.
        sigaction(SIGBUS, &state.pointee.previous, nil)
    }
}

/// Turns a failed LMDB assertion into a one-line error and exit 74. LMDB asserts when
/// a page contradicts itself, which in a store means a damaged file (pages of
/// garbage behind intact meta pages): LMDB would print its own message and abort. A
/// writer's file is first cut back to the pages of the last commit, as `Store.trim`
/// does (LMDB extends a writable map's file when it opens it), so a refused write
/// leaves the file as it found it: nothing of an uncommitted transaction is reachable.
enum DamagedPageGuard {
    /// The handler for `EnvironmentOptions.assertionHandler`. It names the store by the
    /// environment's label (`EnvironmentOptions.label`, the store's path) rather than a
    /// global, which stores opened at once in one process (the tests) would race on.
    static let handler: EnvironmentOptions.AssertionHandler = { env, detail in
        if let env { Environment.trimToLastCommit(env) }
        let what = detail.map { String(cString: $0) } ?? "an internal check failed"
        let line = "pushtrail: store \(Environment.label(of: env) ?? "(unknown)") is damaged (LMDB: \(what)): nothing was written; "
            + "run pushtrail verify, and restore the store from a copy\n"
        line.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
        _exit(MapFaultGuard.exitStatus)
    }
}
