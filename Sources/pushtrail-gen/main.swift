#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line on stderr (`stderr` itself is shared mutable state to Swift 6).
func reportError(_ message: String) {
    var line = Array("pushtrail-gen: \(message)\n".utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

/// pushtrail-gen: writes a deterministic stream of pushtrail events (see `--help`).
func runGenerator() -> Int32 {
    let options: Options
    do {
        switch try Options.parse(Array(CommandLine.arguments.dropFirst())) {
        case .help:
            print(Options.usage)
            return 0
        case .run(let parsed):
            options = parsed
        }
    } catch {
        reportError(error.message)
        return 2
    }

    let toStdout = options.output == nil || options.output == "-"
    let opened = toStdout ? fdopen(1, "wb") : fopen(options.output!, "wb")
    guard let file = opened else {
        reportError("cannot open '\(options.output ?? "-")' for writing: \(String(cString: strerror(errno)))")
        return 74
    }

    var generator = Generator(options: options, file: file)
    var ok = generator.run()
    if fflush(file) != 0 { ok = false }
    if fclose(file) != 0 { ok = false }
    if !ok {
        reportError("write failed: \(String(cString: strerror(errno)))")
        return 74
    }
    return 0
}

exit(runGenerator())
