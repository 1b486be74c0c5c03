import PushTrailStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

exit(StreamMain.run(Array(CommandLine.arguments.dropFirst())))
