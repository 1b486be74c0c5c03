import CMicroHTTPD
import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail-server`: appends, the JSON API and the support site over a store, until
/// SIGTERM or SIGINT. Everything
/// runs from here, not from `main.swift`, whose top-level closures would be bound to
/// the main actor and trap when libmicrohttpd's threads call them.
public enum ServerMain {
    static let usage = """
        usage: pushtrail-server [--store DIR] [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--max-body N]

        Serves the store over HTTP until SIGTERM or SIGINT (docs/SERVE.md): the backend
        appends with POST /v1/events, tools read the JSON API (/v1/tasks/{id},
        /v1/threads/{id}, /v1/events, /v1/events/{id}, /v1/events/{id}/export, /v1/audit,
        /v1/head, /v1/stats, /v1/stream), each answering with what the CLI's --json
        prints; support staff browse the site at / (search, users, threads, tasks,
        events, audit, live); GET /healthz and /metrics for operations. Requests need an
        access token (pushtrail token add NAME --role ingest|read|admin); with none
        defined, only clients on this host are answered.

        options:
          --store DIR         the store (default $PUSHTRAIL_STORE, else ./pushtrail.lmdb)
          --listen ADDR:PORT  the address to listen on (default 127.0.0.1:8080; port 0
                              lets the system choose). Another host's address needs
                              access tokens
          --tls-cert FILE     PEM certificate (chain): serve HTTPS, with --tls-key
          --tls-key FILE      PEM private key of --tls-cert
          --max-body BYTES    the largest request body accepted (default 67108864, 64 MiB)
          -h, --help          show this help

        environment:
          PUSHTRAIL_STORE     the store when --store is not given
          PUSHTRAIL_MAP_SIZE  the LMDB map's starting size in bytes (default 256 MiB; it grows)
          PUSHTRAIL_FOLD_EVENTS
                              appended events the store's recent tier holds before each
                              append moves a slice of it into the main indexes
                              (default 81920)
          PUSHTRAIL_RUN_EVENTS
                              appended events a run of the recent tier takes before
                              appends start the next one (default 8192)
        """

    /// Runs the server; returns the exit status (0 after a clean stop, 2 for a usage
    /// error, 74 for a store, file or socket that cannot be used).
    public static func run(_ arguments: [String]) -> Int32 {
        var storePath = getenv("PUSHTRAIL_STORE").map { String(cString: $0) } ?? "./pushtrail.lmdb"
        var listen = "127.0.0.1:8080"
        var certificatePath: String?
        var keyPath: String?
        var maxBody = 64 << 20
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            func value() -> String? {
                if let eq = a.firstIndex(of: "="), a.hasPrefix("--") { return String(a[a.index(after: eq)...]) }
                i += 1
                return i < arguments.count ? arguments[i] : nil
            }
            switch a.split(separator: "=", maxSplits: 1).first.map(String.init) ?? a {
            case "-h", "--help":
                print(usage)
                return 0
            case "--store":
                guard let v = value() else { return usageError("--store needs a directory") }
                storePath = v
            case "--listen":
                guard let v = value() else { return usageError("--listen needs ADDR:PORT") }
                listen = v
            case "--tls-cert":
                guard let v = value() else { return usageError("--tls-cert needs a PEM file") }
                certificatePath = v
            case "--tls-key":
                guard let v = value() else { return usageError("--tls-key needs a PEM file") }
                keyPath = v
            case "--max-body":
                guard let v = value(), let n = Int(v), n > 0 else {
                    return usageError("--max-body takes a number of bytes")
                }
                maxBody = n
            default:
                return usageError("unknown option \(MessageText.shown(a))")
            }
            i += 1
        }
        guard let (host, port) = parseListen(listen) else {
            return usageError("--listen takes ADDR:PORT, like 127.0.0.1:8080 or [::1]:8080, not \(listen)")
        }
        guard (certificatePath == nil) == (keyPath == nil) else {
            return usageError("--tls-cert and --tls-key go together")
        }
        var tls: HTTPServer.TLS?
        if let certificatePath, let keyPath {
            guard let certificate = readText(certificatePath), let key = readText(keyPath) else {
                say("cannot read \(certificatePath) or \(keyPath): \(String(cString: strerror(errno)))")
                return 74
            }
            tls = HTTPServer.TLS(certificate: certificate, key: key)
        }
        StoreFaults.install(faultHandler)
        let store: Store
        do {
            // Opened for writing through pwrite, not a writable map: a full disk then
            // fails the write (503) instead of faulting the whole server.
            _ = try Store(path: storePath, create: false)
            var options = StoreOptions()
            options.writeMap = false
            if let size = getenv("PUSHTRAIL_MAP_SIZE").flatMap({ Int(String(cString: $0)) }), size > 0 {
                options.mapSize = size
            }
            if let events = getenv("PUSHTRAIL_FOLD_EVENTS").flatMap({ Int(String(cString: $0)) }), events > 0 {
                options.foldEvents = events
            }
            if let events = getenv("PUSHTRAIL_RUN_EVENTS").flatMap({ Int(String(cString: $0)) }), events > 0 {
                options.runCapacity = events
            }
            options.keptEvents = Routes.keptEvents
            store = try Store(path: storePath, create: true, options: options)
            store.prepareAppendFilters()
        } catch StoreError.missing(let path) {
            say("no store at \(path): create it with pushtrail ingest, or pushtrail token add (see --help)")
            return 74
        } catch {
            say("\(error)")
            return 74
        }
        let routes = Routes(store: store, clock: { WallClock.now() }, maxBody: maxBody)
        let tokens = routes.hasTokens
        if !tokens && !HTTPServer.isLoopback(host) {
            return usageError(
                "--listen \(listen) is not a loopback address, and the store has no access tokens: add one with "
                    + "pushtrail token add NAME --role read|ingest|admin, or listen on 127.0.0.1")
        }
        let server = HTTPServer(
            handler: { routes.answer($0) },
            completed: { request in
                routes.record(request)
                say(request.logLine)
            })
        // Blocked before the daemon's threads start, so they inherit the mask and the
        // signals wait for `sigwait` here.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        // With a thread per connection, glibc would keep an arena for each of up to 16
        // busy threads; two keep the memory near what the requests in flight need.
        pushtrail_limit_arenas(2)
        do {
            try server.start(host: host, port: port, tls: tls)
        } catch {
            say("\(error)")
            return 74
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        say(
            "listening on \(tls == nil ? "http" : "https")://\(shown):\(server.port) (store \(store.path); "
                + (tokens ? "access tokens required)" : "no access tokens: loopback clients only)"))
        var received: Int32 = 0
        sigwait(&signals, &received)
        say("stopping (signal \(received)): finishing the requests in flight")
        routes.endStreams()
        server.stop()
        say("stopped")
        return 0
    }

    /// A whole file as text, or nil.
    static func readText(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Runs in a signal handler or LMDB's assertion hook: `write` and `_exit` only.
    static let faultHandler: StoreFaults.Handler = { kind, path, detail in
        func put(_ s: StaticString) { _ = write(2, s.utf8Start, s.utf8CodeUnitCount) }
        func putC(_ c: UnsafePointer<CChar>?) { if let c { _ = write(2, c, strlen(c)) } }
        put("pushtrail-server: store ")
        putC(path)
        if kind == StoreFault.damagedPage.rawValue {
            put(" is damaged (LMDB: ")
            if detail != nil { putC(detail) } else { put("an internal check failed") }
            put("): nothing was written; stopping. Run pushtrail verify, and restore the store from a copy\n")
        } else {
            put(": a page of its map could not be read or stored; stopping. What was committed is intact\n")
        }
        _exit(74)
    }

    /// `ADDR:PORT`, with an IPv6 address in brackets.
    static func parseListen(_ text: String) -> (String, UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    static func usageError(_ message: String) -> Int32 {
        say(message + " (see --help)")
        return 2
    }

    /// One line on standard error, written whole.
    static func say(_ line: String) {
        let text = "pushtrail-server: " + line + "\n"
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
