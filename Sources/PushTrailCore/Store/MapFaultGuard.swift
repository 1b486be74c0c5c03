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
    nonisolated(unsafe) private static var active = false
    nonisolated(unsafe) private static var message: UnsafeMutableBufferPointer<UInt8>?
    nonisolated(unsafe) private static var previous = sigaction()
    nonisolated(unsafe) private static var installed = false

    /// The exit status of an I/O failure (SPEC: 74).
    static let exitStatus: Int32 = 74

    /// Runs `body`, a write transaction through the writable map of the store at
    /// `path`, with the guard on. Call from one thread at a time.
    static func guarding<R>(store path: String, _ body: () throws -> R) rethrows -> R {
        if message == nil {
            let text = Array(
                ("pushtrail: cannot write store \(path): a page of its file could not be stored (no space left on "
                    + "the device, or the file was cut short); what was committed before is intact: free space and run "
                    + "the same command again (duplicates are skipped)\n").utf8)
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: text.count)
            _ = buffer.initialize(from: text)
            message = buffer
        }
        if !installed {
            installed = true
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_sigaction = handler
            #else
                action.__sigaction_u.__sa_sigaction = handler
            #endif
            action.sa_flags = SA_SIGINFO
            sigemptyset(&action.sa_mask)
            sigaction(SIGBUS, &action, &previous)
        }
        active = true
        defer { active = false }
        return try body()
    }

    private static let handler: @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
        _, _, _ in
        if MapFaultGuard.active, let message = MapFaultGuard.message {
            _ = write(2, message.baseAddress, message.count)
            _exit(MapFaultGuard.exitStatus)
        }
        // Not a write through the map: the previous handler takes it when the faulting
        // access runs again.
        sigaction(SIGBUS, &MapFaultGuard.previous, nil)
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
