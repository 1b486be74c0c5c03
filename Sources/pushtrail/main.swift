import PushTrailCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

signal(SIGPIPE, SIG_IGN)
// A store whose pages are garbage can make LMDB read outside the map: say so in one
// line and exit 74 rather than die with a signal.
for fault in [SIGBUS, SIGSEGV] {
    signal(fault) { _ in
        let message = "pushtrail: the store's data.mdb is damaged (a page could not be read): restore it from a copy\n"
        message.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
        _exit(74)
    }
}
exit(PushTrail.main(Array(CommandLine.arguments.dropFirst()), context: .process()))
