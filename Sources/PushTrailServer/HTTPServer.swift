import CMicroHTTPD
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP request, as the routes see it: everything but its body, which an
/// `HTTPUpload` receives piece by piece.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path, percent-decoded by libmicrohttpd, without the query.
    public var path: String
    /// The query's arguments, decoded; the last of a repeated name wins.
    public var query: [String: String]
    /// The headers by lower-cased name; the last of a repeated name wins.
    public var headers: [String: String]
    /// Whether the client connected from this host.
    public var clientIsLoopback: Bool
    /// Whether the request came over HTTPS.
    public var isTLS: Bool

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        clientIsLoopback: Bool = true, isTLS: Bool = false
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.clientIsLoopback = clientIsLoopback
        self.isTLS = isTLS
    }

    /// A header's value by name, in any case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A body made piece by piece while the client reads it (an NDJSON listing, an event
/// stream). `next` runs on the connection's own thread and may block; it returns nil
/// at the end. `close` is called once when the response is done with, whether it
/// reached its end or the client went away.
public final class HTTPStream: @unchecked Sendable {
    let next: () -> [UInt8]?
    let close: () -> Void

    public init(next: @escaping () -> [UInt8]?, close: @escaping () -> Void = {}) {
        self.next = next
        self.close = close
    }
}

/// One answer. libmicrohttpd adds `Content-Length` (or chunks a stream) itself.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        case stream(HTTPStream)
    }

    public var status: UInt32
    public var contentType: String
    public var body: Body
    /// The route template for the access log (`/v1/tasks/{id}`), never the path itself:
    /// paths and queries can hold personal data.
    public var route: String
    /// Headers beyond `Content-Type` and the ones every answer gets.
    public var headers: [(String, String)]

    public init(status: UInt32, contentType: String, body: [UInt8], route: String, headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = .bytes(body)
        self.route = route
        self.headers = headers
    }

    public init(
        status: UInt32, contentType: String, stream: HTTPStream, route: String, headers: [(String, String)] = []
    ) {
        self.status = status
        self.contentType = contentType
        self.body = .stream(stream)
        self.route = route
        self.headers = headers
    }

    /// The bytes of a fixed body (empty for a stream).
    public var bytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }
}

/// A request body's consumer: it gets the body as it arrives, not buffered whole.
public protocol HTTPUpload: AnyObject {
    /// The next piece of the body. A response refuses the request: the rest of the body
    /// is read and dropped (HTTP/1.1 can answer only once it has ended), and the answer
    /// sent then; a client that sends more than `Limits.discardBytes` after the refusal
    /// is disconnected instead.
    func receive(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse?
    /// The body has ended: the answer.
    func finish() -> HTTPResponse
}

/// What a handler does with a request, once its headers are in.
public enum HTTPExchange {
    /// Answers now; a body, if any, is not read.
    case respond(HTTPResponse)
    /// Reads the body into `upload`, which then answers. `route` names the request in
    /// the access log if the client goes away first.
    case receive(any HTTPUpload, route: String)
}

/// What the access log and the metrics learn about each request once it is done.
public struct CompletedRequest: Sendable {
    public var method: String
    public var route: String
    /// 0 when no answer was sent (the client went away first).
    public var status: UInt32
    /// Body bytes sent.
    public var bytes: Int
    public var microseconds: UInt64

    /// The access-log line: method, route template, status, bytes and duration, and
    /// nothing from the path, the query or the headers.
    public var logLine: String {
        // The method as sent only when it is a plain token: a log line holds no control
        // character and no client's essay.
        let plain = method.utf8.count <= 16 && method.utf8.allSatisfy { (0x41...0x5A).contains($0) }
        return "\(plain ? method : "(other)") \(route) \(status == 0 ? "-" : String(status)) \(bytes) \(microseconds)µs"
    }
}

/// An HTTP server on GNU libmicrohttpd. Each connection has its own thread, so a
/// handler may block (an fsync, a stream waiting for new events); `handler` sees each
/// request once its headers are in, and `completed` each request once it is done.
public final class HTTPServer: @unchecked Sendable {
    public struct Limits: Sendable {
        public var connections: UInt32 = 256
        public var connectionsPerAddress: UInt32 = 64
        /// Seconds a connection may sit idle (a slow client's headers or body included).
        public var idleTimeout: UInt32 = 30
        /// Bytes per connection for its headers, query arguments and buffers: larger
        /// headers get 431. An 8 KiB target of 2,000 one-letter arguments needs about
        /// 140 KiB (libmicrohttpd keeps each argument in this pool, and a connection
        /// whose pool cannot also hold the answer is closed unanswered). No larger: a
        /// larger pool costs every request time (256 KiB cost the task route a tenth
        /// of its rate).
        public var connectionMemory = 160 * 1024
        /// Bytes of a refused body read and dropped before the connection is closed.
        public var discardBytes = 64 << 20
        /// Each connection thread's stack.
        public var stackBytes = 4 << 20
        public init() {}
    }

    /// HTTPS: the certificate chain and private key, PEM text.
    public struct TLS: Sendable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    let handler: @Sendable (HTTPRequest) -> HTTPExchange
    let completed: @Sendable (CompletedRequest) -> Void
    private var daemon: OpaquePointer?
    private var tls = false
    private var discardLimit = 0
    /// Requests begun and not yet completed, for a graceful stop.
    private let inFlight = Monitor()
    private var running = 0
    /// The port listened on, once started.
    public private(set) var port: UInt16 = 0

    public init(
        handler: @escaping @Sendable (HTTPRequest) -> HTTPExchange,
        completed: @escaping @Sendable (CompletedRequest) -> Void
    ) {
        self.handler = handler
        self.completed = completed
    }

    /// Starts listening on `host:port` (IPv4 or IPv6 literal; port 0 lets the system
    /// choose, then `port` says which).
    public func start(host: String, port: UInt16, limits: Limits = Limits(), tls: TLS? = nil) throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: OpaquePointer? = try Self.withSocketAddress(host: host, port: port) { address in
            pushtrail_mhd_start(
                address, limits.connections, limits.connectionsPerAddress, limits.idleTimeout,
                limits.connectionMemory, limits.stackBytes, tls?.key, tls?.certificate, HTTPServer.access, context,
                HTTPServer.finished)
        }
        guard let started else {
            let reason = errno == 0 ? "libmicrohttpd refused the options" : String(cString: strerror(errno))
            throw StartFailure(
                description: "cannot listen on \(host):\(port): \(reason)"
                    + (tls == nil ? "" : " (or the TLS certificate and key do not match)"))
        }
        daemon = started
        discardLimit = limits.discardBytes
        self.tls = tls != nil
        self.port = pushtrail_mhd_port(started)
    }

    /// Stops accepting connections, waits up to `grace` seconds for the requests in
    /// flight to finish, then closes every connection.
    public func stop(grace: Double = 30) {
        guard let daemon else { return }
        _ = MHD_quiesce_daemon(daemon)
        let deadline = monotonicNanoseconds() + UInt64(grace * 1e9)
        inFlight.locked {
            while running > 0 && monotonicNanoseconds() < deadline { inFlight.wait(seconds: 0.05) }
        }
        MHD_stop_daemon(daemon)
        self.daemon = nil
    }

    deinit { stop(grace: 0) }

    // MARK: - Callbacks (C functions: no captures; the server comes through `cls`)

    /// Per request, from its headers to its end.
    final class RequestState {
        let started = monotonicNanoseconds()
        let method: String
        var route = "(unknown)"
        var status: UInt32 = 0
        var bytes = 0
        /// Receiving the body, until it answers.
        var upload: (any HTTPUpload)?
        /// Answered: whatever else of the body arrives is dropped.
        var answered = false
        /// The answer once the body has ended (or been dropped, when the upload refused it).
        var refusal: HTTPResponse?
        var discarded = 0
        init(method: String) { self.method = method }
    }

    /// A stream's progress: the piece being sent and what of it is left.
    final class StreamState {
        let stream: HTTPStream
        let request: RequestState
        var pending: [UInt8] = []
        var offset = 0
        init(stream: HTTPStream, request: RequestState) {
            self.stream = stream
            self.request = request
        }
    }

    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, slot in
        guard let cls, let connection, let slot, let uploadSize else { return .NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        guard let pointer = slot.pointee else {
            // The first call, with the headers.
            let methodName = method.map { String(cString: $0) } ?? ""
            let state = RequestState(method: methodName)
            slot.pointee = Unmanaged.passRetained(state).toOpaque()
            server.inFlight.locked { server.running += 1 }
            let headers = headers(connection)
            let request = HTTPRequest(
                method: methodName, path: url.map { String(cString: $0) } ?? "/",
                query: arguments(connection), headers: headers.values,
                clientIsLoopback: pushtrail_mhd_client_is_loopback(connection) != 0, isTLS: server.tls)
            // A body whose length is ambiguous (request smuggling) is refused, and the
            // connection closed: what follows it cannot be trusted to be a request.
            if let ambiguity = headers.ambiguity {
                return server.send(
                    Routes.error(400, ambiguity, route: "(refused)", headers: [("Connection", "close")]), state,
                    connection)
            }
            switch server.handler(request) {
            case .respond(let response):
                // Answered after the (empty) body, so the connection stays open for the
                // next request; a body refused outright is not waited for (the connection
                // then closes after the answer).
                let body =
                    request.headers["transfer-encoding"] != nil
                    || (request.headers["content-length"].flatMap { Int($0) } ?? 0) > 0
                if body { return server.send(response, state, connection) }
                state.refusal = response
                return .YES
            case .receive(let upload, let route):
                state.route = route
                state.upload = upload
                return .YES
            }
        }
        let state = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            guard !state.answered, let receiver = state.upload, let upload else {
                state.discarded += count
                return state.discarded > server.discardLimit ? .NO : .YES
            }
            if let refusal = receiver.receive(UnsafeRawBufferPointer(start: upload, count: count)) {
                state.upload = nil
                state.refusal = refusal
            }
            return .YES
        }
        if let refusal = state.refusal {
            state.refusal = nil
            return server.send(refusal, state, connection)
        }
        guard !state.answered else { return .YES }
        guard let receiver = state.upload else {
            return server.send(Routes.error(500, "no answer", route: state.route), state, connection)
        }
        state.upload = nil
        return server.send(receiver.finish(), state, connection)
    }

    static let finished: MHD_RequestCompletedCallback = { cls, _, slot, _ in
        guard let cls, let slot, let pointer = slot.pointee else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
        slot.pointee = nil
        state.upload = nil
        server.completed(
            CompletedRequest(
                method: state.method, route: state.route, status: state.status, bytes: state.bytes,
                microseconds: (monotonicNanoseconds() - state.started) / 1000))
        server.inFlight.locked { server.running -= 1 }
        server.inFlight.broadcast()
    }

    /// A stream's next bytes, as many as fit in `max`; blocks while the stream waits.
    static let read: MHD_ContentReaderCallback = { cls, _, buffer, max in
        guard let cls, let buffer else { return pushtrail_mhd_stream_error }
        let state = Unmanaged<StreamState>.fromOpaque(cls).takeUnretainedValue()
        while state.offset >= state.pending.count {
            guard let next = state.stream.next() else { return pushtrail_mhd_end_of_stream }
            state.pending = next
            state.offset = 0
        }
        let count = min(max, state.pending.count - state.offset)
        state.pending.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + state.offset, byteCount: count)
        }
        state.offset += count
        state.request.bytes += count
        return count
    }

    static let release: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        let state = Unmanaged<StreamState>.fromOpaque(cls).takeRetainedValue()
        state.stream.close()
    }

    private func send(_ response: HTTPResponse, _ state: RequestState, _ connection: OpaquePointer) -> MHD_Result {
        state.answered = true
        state.route = response.route
        state.status = response.status
        let head = state.method == "HEAD"
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let all):
            // libmicrohttpd answers a HEAD with this body's Content-Length and no body.
            state.bytes = head ? 0 : all.count
            made = all.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), HTTPServer.mustCopy)
            }
        case .stream(let stream) where head:
            // libmicrohttpd would send a stream's last chunk ("0") even to a HEAD, which a
            // client reads as the start of the next answer: no body at all instead.
            stream.close()
            state.bytes = 0
            made = MHD_create_response_from_buffer(0, nil, HTTPServer.mustCopy)
        case .stream(let stream):
            let streamState = Unmanaged.passRetained(StreamState(stream: stream, request: state)).toOpaque()
            made = pushtrail_mhd_stream(32 * 1024, HTTPServer.read, streamState, HTTPServer.release)
            if made == nil { HTTPServer.release(streamState) }
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        MHD_add_response_header(made, "Content-Type", response.contentType)
        MHD_add_response_header(made, "Cache-Control", "no-store")
        MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
        if tls { MHD_add_response_header(made, "Strict-Transport-Security", "max-age=31536000") }
        for (name, value) in response.headers { MHD_add_response_header(made, name, value) }
        return MHD_queue_response(connection, response.status, made)
    }

    /// `MHD_RESPMEM_MUST_COPY` (its Swift name depends on how the importer trims the
    /// case names, so it is taken by value): the library copies the body.
    static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!

    /// The query's arguments, decoded by libmicrohttpd; the last of a repeated name wins.
    static func arguments(_ connection: OpaquePointer) -> [String: String] {
        var values: [String: String] = [:]
        for (name, value) in pairs(connection, .GET_ARGUMENT_KIND) { values[name] = value }
        return values
    }

    /// The headers by lower-cased name (the last of a repeated name wins), and why the
    /// body's length is ambiguous, if it is: `Content-Length` with `Transfer-Encoding`,
    /// `Content-Length` twice, or a header name with white space (which some servers
    /// trim and others do not).
    static func headers(_ connection: OpaquePointer) -> (values: [String: String], ambiguity: String?) {
        var values: [String: String] = [:]
        var lengths = 0
        var spaced = false
        for (name, value) in pairs(connection, .HEADER_KIND) {
            let lower = name.lowercased()
            values[lower] = value
            if lower == "content-length" { lengths += 1 }
            if name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) { spaced = true }
        }
        let ambiguity: String? =
            lengths > 0 && values["transfer-encoding"] != nil
            ? "a request may not have both Content-Length and Transfer-Encoding"
            : lengths > 1
                ? "a request may have one Content-Length only"
                : spaced ? "a header name may not hold white space" : nil
        return (values, ambiguity)
    }

    /// Every name and value of one kind, in order, as libmicrohttpd holds them.
    static func pairs(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(String, String)] {
        final class Box { var pairs: [(String, String)] = [] }
        let box = Box()
        _ = MHD_get_connection_values(
            connection, kind,
            { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let text = { (c: UnsafePointer<CChar>) in
                    String(decoding: UnsafeRawBufferPointer(start: c, count: strlen(c)), as: UTF8.self)
                }
                Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().pairs.append((text(key), value.map(text) ?? ""))
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        return box.pairs
    }

    /// Lends `body` a socket address for an IPv4 or IPv6 literal.
    static func withSocketAddress<R>(
        host: String, port: UInt16, _ body: (UnsafePointer<sockaddr>) throws -> R
    ) throws -> R {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return try withUnsafePointer(to: &v4) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return try withUnsafePointer(to: &v6) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
        throw StartFailure(description: "\(host) is not an IPv4 or IPv6 address")
    }

    /// Whether `host` is a loopback address (127.0.0.0/8 or ::1).
    public static func isLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        return host == "::1"
    }
}

/// The monotonic clock in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
