import PushTrailServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

exit(ServerMain.run(Array(CommandLine.arguments.dropFirst())))
