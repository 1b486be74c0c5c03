import Foundation
import PushTrailCLI
import PushTrailModel
import PushTrailServer
import PushTrailStore

/// A store made from the sample events, served in-process on a loopback port by the
/// real libmicrohttpd, spoken to with curl; every access-log line is kept.
final class ServerFixture: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let now = Timestamp(microseconds: 1_796_117_400_000_000)
    static var haveCurl: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") }

    let dir: String
    let storePath: String
    let store: Store
    let routes: Routes
    let server: HTTPServer
    private let lines = Lines()

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// `maxBody` as `--max-body`; `samples` false starts from an empty store; `events` is
    /// an NDJSON file ingested instead of the samples; `mapSize` as `PUSHTRAIL_MAP_SIZE`
    /// (the store's map at first: it grows as needed); `storePath` the store's directory,
    /// when it is not to be `store` in the fixture's own temporary directory.
    init(
        maxBody: Int = 64 << 20, samples: Bool = true, events: String? = nil, tls: HTTPServer.TLS? = nil,
        mapSize: Int? = nil, storePath: String? = nil
    ) throws {
        dir = NSTemporaryDirectory() + "pushtrail-server-" + UUID().uuidString
        self.storePath = storePath ?? dir + "/store"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let source = events ?? (samples ? Self.root.path + "/Samples/events.ndjson" : "/dev/null")
        let argv = ["--store", self.storePath, "ingest", source]
        let ingest = Self.cli(argv)
        guard ingest.status == 0 else { throw Failure(description: "ingest: \(ingest.stderr)") }
        var options = StoreOptions()
        options.writeMap = false
        if let mapSize { options.mapSize = mapSize }
        store = try Store(path: self.storePath, create: true, options: options)
        routes = Routes(store: store, clock: { ServerFixture.now }, maxBody: maxBody)
        let routes = self.routes
        let lines = self.lines
        server = HTTPServer(
            handler: { routes.answer($0) },
            completed: {
                routes.record($0)
                lines.append($0.logLine)
            })
        try server.start(host: "127.0.0.1", port: 0, tls: tls)
    }

    deinit {
        routes.endStreams()
        server.stop(grace: 5)
        try? FileManager.default.removeItem(atPath: dir)
        if !storePath.hasPrefix(dir + "/") { try? FileManager.default.removeItem(atPath: storePath) }
    }

    /// The access-log lines so far.
    var log: [String] { lines.all }

    /// Runs the CLI in-process.
    static func cli(_ argv: [String]) -> (status: Int32, stdout: [UInt8], stderr: String) {
        let out = OutputStream()
        let err = OutputStream()
        let context = Context(stdout: out, stderr: err, environment: [:], clock: { now }, stdinIsTerminal: false)
        let status = PushTrail.main(argv, context: context)
        return (status, out.captured, String(decoding: err.captured, as: UTF8.self))
    }

    func cli(_ argv: [String]) -> (status: Int32, stdout: [UInt8], stderr: String) {
        Self.cli(["--store", storePath] + argv)
    }

    /// One question in both of its forms: the query string of a route (`?` and the
    /// parameters, each value percent-encoded; empty for none) and the CLI's options. A
    /// parameter is the option of its name with `-` for `_`, as the server parses them;
    /// `limit` is `-n`, `order=desc` is `-r` (`asc` is no option), and `code=A,B` is
    /// `--code A --code B`.
    static func question(_ parameters: [(String, String)]) -> (query: String, argv: [String]) {
        var query: [String] = []
        var argv: [String] = []
        for (name, value) in parameters {
            query.append(name + "=" + encoded(value))
            switch name {
            case "limit": argv += ["-n", value]
            case "order": argv += value == "desc" ? ["-r"] : []
            case "code": for code in value.split(separator: ",") { argv += ["--code", String(code)] }
            default: argv += ["--" + name.replacingOccurrences(of: "_", with: "-"), value]
            }
        }
        return (query.isEmpty ? "" : "?" + query.joined(separator: "&"), argv)
    }

    /// `text` percent-encoded for a path segment or a query value: every byte but an
    /// ASCII letter, digit, `-`, `.`, `_` or `~`.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    struct Answer {
        var status: Int
        var headers: String
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    /// One request with curl: `headers` as `Name: value`, `body` from a file (`@path`) or text.
    func request(
        _ method: String, _ path: String, headers: [String] = [], body: [UInt8]? = nil, timeout: Double = 20,
        scheme: String = "http", port: UInt16? = nil, extra: [String] = []
    ) throws -> Answer {
        var args = [
            "curl", "-s", "-g", "-X", method, "-D", dir + "/headers-\(UUID().uuidString)", "-o", "-", "-w",
            "\n%{http_code}", "--max-time", String(timeout),
        ]
        let headerFile = args[6]
        defer { try? FileManager.default.removeItem(atPath: headerFile) }
        for h in headers { args += ["-H", h] }
        var bodyFile: String?
        if let body {
            let path = dir + "/body-\(UUID().uuidString)"
            try Data(body).write(to: URL(fileURLWithPath: path))
            bodyFile = path
            args += ["--data-binary", "@" + path]
        }
        defer { if let bodyFile { try? FileManager.default.removeItem(atPath: bodyFile) } }
        args += extra
        args.append("\(scheme)://127.0.0.1:\(port ?? server.port)\(path)")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = args
        let pipe = Pipe()
        curl.standardOutput = pipe
        try curl.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        var bytes = [UInt8](data)
        guard let cut = bytes.lastIndex(of: UInt8(ascii: "\n")) else { throw Failure(description: "no status") }
        let status = Int(String(decoding: bytes[(cut + 1)...], as: UTF8.self)) ?? -1
        bytes.removeSubrange(cut...)
        let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        return Answer(status: status, headers: headerText, body: bytes)
    }

    /// The sample events' lines.
    /// Sends `request` as written on a new connection and reads until `enough` holds for
    /// what has come (by default the first read), the server closes, or 5 s pass.
    func raw(_ request: String, until enough: (String) -> Bool = { _ in true }) throws -> String {
        let fd = try sendRaw(request)
        defer { close(fd) }
        return Self.receive(fd, until: enough)
    }

    /// A new connection to the server with `request` sent on it, as written; the caller
    /// reads it (`receive`) and closes it.
    func sendRaw(_ request: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect")
        }
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        return fd
    }

    /// Reads `fd` until `enough` holds for what has come, it closes, or a read waits 5 s.
    static func receive(_ fd: Int32, until enough: (String) -> Bool) -> String {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        repeat {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[..<n]
        } while !enough(String(decoding: answer, as: UTF8.self))
        return String(decoding: answer, as: UTF8.self)
    }

    static var sampleLines: [String] {
        let text = (try? String(contentsOfFile: root.path + "/Samples/events.ndjson", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// A notification line of a new id (for appending), made from the first sample line.
    static func newEvent(_ id: String) -> String {
        let first = sampleLines[0]
        guard let object = try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any],
            let old = object["id"] as? String
        else { return first }
        return first.replacingOccurrences(of: "\"\(old)\"", with: "\"\(id)\"")
    }
}
