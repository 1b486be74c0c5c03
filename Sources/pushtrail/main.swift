import PushTrailCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

signal(SIGPIPE, SIG_IGN)
exit(PushTrail.main(Array(CommandLine.arguments.dropFirst()), context: .process()))
