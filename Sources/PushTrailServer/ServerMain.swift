import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail-server`: the read API over a store, until SIGTERM or SIGINT. Everything
/// runs from here, not from `main.swift`, whose top-level closures would be bound to
/// the main actor and trap when libmicrohttpd's threads call them.
public enum ServerMain {
    static let usage = """
        usage: pushtrail-server [--store DIR] [--listen ADDR:PORT]

        Serves the store's read API over HTTP until SIGTERM or SIGINT (docs/SERVE.md):
        GET /healthz, /v1/head, /v1/stats, /v1/tasks/{id}?at=T, /v1/threads/{id}?at=T,
        /v1/events/{id}, /v1/events/@{seq} and /v1/audit?filters, each answering with exactly what the CLI's
        --json prints.

        options:
          --store DIR         the store (default $PUSHTRAIL_STORE, else ./pushtrail.lmdb)
          --listen ADDR:PORT  the address to listen on (default 127.0.0.1:8080; port 0
                              lets the system choose). Loopback only for now: access
                              tokens do not exist yet, so no other address is served
          -h, --help          show this help
        """

    /// Runs the server; returns the exit status (0 after a clean stop, 2 for a usage
    /// error, 74 for a store or socket that cannot be used).
    public static func run(_ arguments: [String]) -> Int32 {
        var storePath = getenv("PUSHTRAIL_STORE").map { String(cString: $0) } ?? "./pushtrail.lmdb"
        var listen = "127.0.0.1:8080"
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
            default:
                return usageError("unknown option \(MessageText.shown(a))")
            }
            i += 1
        }
        guard let (host, port) = parseListen(listen) else {
            return usageError("--listen takes ADDR:PORT, like 127.0.0.1:8080 or [::1]:8080, not \(listen)")
        }
        guard HTTPServer.isLoopback(host) else {
            return usageError(
                "--listen \(listen) is not a loopback address: with no access tokens the server answers loopback "
                    + "clients only")
        }
        let store: Store
        do {
            store = try Store(path: storePath, create: false)
        } catch {
            say("\(error)")
            return 74
        }
        let routes = Routes(store: store, clock: { realtimeNow() })
        let server = HTTPServer(handler: { routes.answer($0) }, log: { say($0) })
        // Blocked before the daemon's threads start, so they inherit the mask and the
        // signals wait for `sigwait` here.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        do {
            try server.start(host: host, port: port)
        } catch {
            say("\(error)")
            return 74
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        say("listening on http://\(shown):\(server.port) (store \(store.path); loopback clients only)")
        var received: Int32 = 0
        sigwait(&signals, &received)
        say("stopping (signal \(received)): finishing the requests in flight")
        server.stop()
        return 0
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

    static func realtimeNow() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }
}
