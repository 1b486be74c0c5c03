import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
    import MachO  // _NSGetExecutablePath
#endif

/// `pushtrail serve`: runs `pushtrail-server`, which is its own, dynamically linked
/// executable (libmicrohttpd needs GnuTLS, which has no static archives, and this one
/// stays static so every query starts fast). The command exists so the server is found
/// where pushtrail is, takes the store the way every command does, and is documented
/// with the rest in help, completions and the man page.
enum ServeCommand: Command {
    static let spec = CommandSpec(
        name: "serve",
        summary: "Serve the store over HTTP: appends, the JSON API and the web pages.",
        usage: ["serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--max-body BYTES] [--store DIR]"],
        options: [
            .option("listen", "ADDR:PORT", "the address to listen on (default 127.0.0.1:8080)"),
            .option("tls-cert", "FILE", "PEM certificate: serve HTTPS", completion: .file),
            .option("tls-key", "FILE", "PEM private key: serve HTTPS", completion: .file),
            .option("max-body", "BYTES", "the largest request body accepted (default 64M)"),
        ],
        discussion: """
            Runs pushtrail-server from the directory pushtrail is in, else from PATH, in place of this
            process. The backend appends with POST /v1/events; tools read the JSON API under /v1/;
            support staff open / in a browser: search, a user's notifications, a thread or task as
            of any moment, an event and its reproduction, the audit and a live tail. Clients send an
            access token: see pushtrail token.
            """)

    /// The server's options, checked here so a mistake is a usage error before the
    /// server starts; passed on as given, except `--max-body` in plain bytes.
    struct Options: Sendable, Equatable {
        var listen: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var maxBody: Int64?
    }

    /// Both TLS files or neither, and a byte count for `--max-body`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let certificate = arguments.value("tls-cert")
        let key = arguments.value("tls-key")
        if (certificate == nil) != (key == nil) {
            throw UsageError("--tls-cert and --tls-key go together: HTTPS needs both", command: "serve")
        }
        let maxBody = try arguments.value("max-body").map { text in
            guard let bytes = byteCount(text) else {
                throw UsageError(
                    "--max-body takes a number of bytes, with K, M or G for KiB, MiB or GiB (like 64M), "
                        + "not \(Render.oneLine(text))",
                    command: "serve")
            }
            return bytes
        }
        return Options(listen: arguments.value("listen"), tlsCertificate: certificate, tlsKey: key, maxBody: maxBody)
    }

    /// Replaces this process with `pushtrail-server`; returns only when it cannot.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        try replaceProcess(
            with: "pushtrail-server", serverArguments(store: try context.singleStorePath(arguments), options), context)
    }

    /// Replaces this process with the companion executable `name` (found as
    /// `companion(_:nextTo:path:)` says), passing it `arguments`; returns only when it cannot.
    static func replaceProcess(with name: String, _ arguments: [String], _ context: Context) throws -> Never {
        guard let server = companion(name, nextTo: runningExecutable() ?? "", path: context.variable("PATH")) else {
            throw CommandError.io("\(name) is not installed next to pushtrail nor on PATH: run Scripts/install.sh")
        }
        let argv = [server] + arguments
        try? context.stdout.flush()
        try? context.stderr.flush()
        // pushtrail ignores SIGPIPE, and an ignored signal stays ignored across exec: the
        // server starts with the default, as it would from a shell.
        signal(SIGPIPE, SIG_DFL)
        let cArguments = argv.map { strdup($0) } + [nil]
        execv(server, cArguments)
        let code = errno
        for p in cArguments { free(p) }
        signal(SIGPIPE, SIG_IGN)
        throw CommandError.io("cannot run \(server): \(String(cString: strerror(code)))")
    }

    /// The arguments after argv[0] for `pushtrail-server`: `--store DIR`, then each
    /// option given, its value unchanged (`--max-body` as a plain number of bytes).
    static func serverArguments(store: String, _ options: Options) -> [String] {
        var out = ["--store", store]
        if let listen = options.listen { out += ["--listen", listen] }
        if let certificate = options.tlsCertificate { out += ["--tls-cert", certificate] }
        if let key = options.tlsKey { out += ["--tls-key", key] }
        if let maxBody = options.maxBody { out += ["--max-body", String(maxBody)] }
        return out
    }

    /// The executable `name` (`pushtrail-server`, `pushtrail-stream`) in the directory of
    /// `executable` (the running pushtrail), else the first on `path` (colon-separated, as
    /// for execvp); nil when neither has one.
    static func companion(_ name: String, nextTo executable: String, path: String?) -> String? {
        if let slash = executable.lastIndex(of: "/") {
            let candidate = String(executable[...slash]) + name
            if isExecutableFile(candidate) { return candidate }
        }
        return Subprocess.find(name, path: path)
    }

    /// The running executable's path, links resolved (so a pushtrail reached through a
    /// link finds the server beside the real file).
    static func runningExecutable() -> String? {
        #if os(Linux)
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard n > 0 else { return nil }
            return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #elseif canImport(Darwin)
            var size: UInt32 = 0
            _ = _NSGetExecutablePath(nil, &size)
            var buffer = [CChar](repeating: 0, count: Int(size) + 1)
            guard _NSGetExecutablePath(&buffer, &size) == 0 else { return nil }
            guard let resolved = realpath(buffer, nil) else { return String(cString: buffer) }
            defer { free(resolved) }
            return String(cString: resolved)
        #else
            return nil
        #endif
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// Bytes from `N`, `NK`, `NM` or `NG` (binary multiples, either case); nil for
    /// anything else, zero, or more than fits.
    static func byteCount(_ text: String) -> Int64? {
        var digits = Substring(text)
        var scale: Int64 = 1
        switch digits.last {
        case "K", "k": scale = 1 << 10
        case "M", "m": scale = 1 << 20
        case "G", "g": scale = 1 << 30
        default: break
        }
        if scale != 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int64(digits) else {
            return nil
        }
        let (bytes, overflow) = n.multipliedReportingOverflow(by: scale)
        guard !overflow, bytes > 0 else { return nil }
        return bytes
    }
}
