import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP request, as the routes see it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path, percent-decoded by libmicrohttpd, without the query.
    public var path: String
    /// The query's arguments, decoded; the last of a repeated name wins.
    public var query: [String: String]
}

/// One answer. libmicrohttpd adds `Content-Length` itself.
public struct HTTPResponse: Sendable {
    public var status: UInt32
    public var contentType: String
    public var body: [UInt8]
    /// The route template for the access log (`/v1/tasks/{id}`), never the path itself:
    /// paths and queries can hold personal data.
    public var route: String

    public init(status: UInt32, contentType: String, body: [UInt8], route: String) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.route = route
    }
}

/// An HTTP server on GNU libmicrohttpd: its own pool of polling threads, each request
/// handed to `handler` once its body (if any) has been read and dropped, and one
/// access-log line per request.
public final class HTTPServer: @unchecked Sendable {
    public struct Limits: Sendable {
        public var threads: UInt32 = 2
        public var connections: UInt32 = 256
        public var connectionsPerAddress: UInt32 = 64
        /// Seconds a connection may sit idle.
        public var idleTimeout: UInt32 = 30
        /// Bytes per connection for its headers and buffers.
        public var connectionMemory = 64 * 1024
        public init() {}
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let log: @Sendable (String) -> Void
    private var daemon: OpaquePointer?
    /// The port listened on, once started.
    public private(set) var port: UInt16 = 0

    /// `log` gets each access-log line (without its line break).
    public init(
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, log: @escaping @Sendable (String) -> Void
    ) {
        self.handler = handler
        self.log = log
    }

    /// Starts listening on `host:port` (IPv4 or IPv6 literal; port 0 lets the system
    /// choose, then `port` says which).
    public func start(host: String, port: UInt16, limits: Limits = Limits()) throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: OpaquePointer? = try Self.withSocketAddress(host: host, port: port) { address in
            pushtrail_mhd_start(
                address, limits.threads, limits.connections, limits.connectionsPerAddress, limits.idleTimeout,
                limits.connectionMemory, HTTPServer.access, context, HTTPServer.completed)
        }
        guard let started else {
            throw StartFailure(description: "cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
        daemon = started
        self.port = pushtrail_mhd_port(started)
    }

    /// Stops accepting, waits for the requests in flight, and closes the socket.
    public func stop() {
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    deinit { stop() }

    // MARK: - Callbacks (C functions: no captures; the server comes through `cls`)

    /// Per request: when it started, for the access log's duration.
    final class RequestState {
        let started: UInt64
        /// `Content-Length` and chunked `Transfer-Encoding` both: the length of the body
        /// is ambiguous (request smuggling), so the request is refused.
        let ambiguousLength: Bool
        init(started: UInt64, ambiguousLength: Bool) {
            self.started = started
            self.ambiguousLength = ambiguousLength
        }
    }

    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadSize, state in
        guard let cls, let connection, let state, let uploadSize else { return .NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        if state.pointee == nil {
            // The first call, with the headers only: answer on a later one.
            let ambiguous =
                MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") != nil
                && MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil
            state.pointee = Unmanaged.passRetained(
                RequestState(started: monotonicNanoseconds(), ambiguousLength: ambiguous)
            ).toOpaque()
            return .YES
        }
        if uploadSize.pointee > 0 {
            // A body nobody reads yet: consumed and dropped.
            uploadSize.pointee = 0
            return .YES
        }
        let request = HTTPRequest(
            method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/",
            query: queryArguments(connection))
        let requestState = Unmanaged<RequestState>.fromOpaque(state.pointee!).takeUnretainedValue()
        let response =
            requestState.ambiguousLength
            ? HTTPResponse(
                status: 400, contentType: "application/json",
                body: Array(
                    #"{"error":"a request may not have both Content-Length and Transfer-Encoding"}"#.utf8 + [10]),
                route: "(refused)")
            : server.handler(request)
        return server.send(response, request: request, on: connection, started: requestState.started)
    }

    static let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
        guard let state, let pointer = state.pointee else { return }
        Unmanaged<RequestState>.fromOpaque(pointer).release()
        state.pointee = nil
    }

    private func send(
        _ response: HTTPResponse, request: HTTPRequest, on connection: OpaquePointer, started: UInt64
    ) -> MHD_Result {
        let body = request.method == "HEAD" ? [] : response.body
        let made = body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), HTTPServer.mustCopy)
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        MHD_add_response_header(made, "Content-Type", response.contentType)
        MHD_add_response_header(made, "Cache-Control", "no-store")
        MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
        let result = MHD_queue_response(connection, response.status, made)
        let micros = (HTTPServer.monotonicNanoseconds() - started) / 1000
        log("\(request.method) \(response.route) \(response.status) \(body.count) \(micros)µs")
        return result
    }

    /// `MHD_RESPMEM_MUST_COPY` (its Swift name depends on how the importer trims the
    /// case names, so it is taken by value): the library copies the body.
    static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!

    /// The query's arguments. libmicrohttpd has decoded them.
    static func queryArguments(_ connection: OpaquePointer) -> [String: String] {
        final class Box { var values: [String: String] = [:] }
        let box = Box()
        _ = MHD_get_connection_values(
            connection, .GET_ARGUMENT_KIND,
            { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let box = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
                box.values[String(cString: key)] = value.map { String(cString: $0) } ?? ""
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        return box.values
    }

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
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
