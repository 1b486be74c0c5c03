import CNats
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the NATS client library: what was being done, and its reason.
public struct NATSFailure: Error, CustomStringConvertible {
    public var doing: String
    public var status: natsStatus
    public var detail: String

    public var description: String {
        "\(doing): \(String(cString: natsStatus_GetText(status)))" + (detail.isEmpty ? "" : " (\(detail))")
    }

    /// Whether the servers could not be reached (worth retrying later).
    public var isUnreachable: Bool {
        status == NATS_NO_SERVER || status == NATS_CONNECTION_CLOSED || status == NATS_TIMEOUT
            || status == NATS_NO_RESPONDERS || status == NATS_CONNECTION_DISCONNECTED
    }
}

/// Calls `body`, turning a status other than `NATS_OK` into a `NATSFailure`.
func check(_ doing: String, _ status: natsStatus, _ code: jsErrCode = jsErrCode(0)) throws {
    guard status != NATS_OK else { return }
    var detail = ""
    if code.rawValue != 0 { detail = "JetStream error \(code.rawValue)" }
    throw NATSFailure(doing: doing, status: status, detail: detail)
}

/// Where JetStream keeps pushtrail's events: one stream (default `PUSHTRAIL`) whose
/// subjects are `pushtrail.events.<partition>`.
public enum EventSubjects {
    public static let defaultStream = "PUSHTRAIL"
    public static let wildcard = "pushtrail.events.*"
    public static func subject(partition: Int) -> String { "pushtrail.events.\(partition)" }
}

/// A connection to NATS servers with its JetStream context, through libnats. Connection
/// events (lost, back) are told to `say` from the library's own thread.
public final class JetStreamConnection: @unchecked Sendable {
    let connection: OpaquePointer
    let context: OpaquePointer
    private let events: ConnectionEvents
    /// JetStream's answers to asynchronous publishes.
    let acks = Publisher.Acks()

    /// Says what happened to the connection (one line each).
    ///
    /// libnats calls back on threads of its own, even after the connection is destroyed
    /// (the callback is queued), so the connection hands it a reference it never takes
    /// back: one small object per connection outlives it.
    final class ConnectionEvents: @unchecked Sendable {
        private let say: @Sendable (String) -> Void
        private let monitor = Monitor()
        private var closed = false
        /// The server last connected to, named when it is lost.
        private var server = ""
        init(_ say: @escaping @Sendable (String) -> Void) { self.say = say }

        /// The connection is being closed on purpose: that is no news.
        func closing() { monitor.locked { closed = true } }

        func connected(_ connection: OpaquePointer?) {
            let url = JetStreamConnection.connectedURL(connection)
            monitor.locked { server = url }
        }

        func lost() {
            let url = monitor.locked { server }
            tell("lost the connection to NATS" + (url.isEmpty ? "" : " at \(url)") + "; reconnecting…")
        }

        func tell(_ line: String) {
            if !monitor.locked({ closed }) { say(line) }
        }
    }

    /// The URL of the server `connection` is connected to ("" while it is not).
    static func connectedURL(_ connection: OpaquePointer?) -> String {
        var url = [CChar](repeating: 0, count: 256)
        _ = natsConnection_GetConnectedUrl(connection, &url, url.count)
        return String(decoding: url.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Connects to the first of `servers` that answers (each `nats://host:port`),
    /// reconnecting for ever when the connection is lost, and opens JetStream.
    public init(servers: [String], say: @escaping @Sendable (String) -> Void) throws {
        events = ConnectionEvents(say)
        var options: OpaquePointer?
        try check("natsOptions_Create", natsOptions_Create(&options))
        defer { natsOptions_Destroy(options) }
        var pointers = servers.map { strdup($0) }
        defer { for p in pointers { free(p) } }
        try pointers.withUnsafeMutableBufferPointer { buffer in
            try buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                try check("the server list", natsOptions_SetServers(options, $0, Int32(buffer.count)))
            }
        }
        try check("options", natsOptions_SetNoRandomize(options, true))
        try check("options", natsOptions_SetTimeout(options, 2000))
        try check("options", natsOptions_SetMaxReconnect(options, -1))
        try check("options", natsOptions_SetReconnectWait(options, 500))
        let closure = Unmanaged.passRetained(events).toOpaque()
        try check(
            "options",
            natsOptions_SetDisconnectedCB(
                options,
                { _, closure in
                    Unmanaged<ConnectionEvents>.fromOpaque(closure!).takeUnretainedValue().lost()
                }, closure))
        try check(
            "options",
            natsOptions_SetReconnectedCB(
                options,
                { connection, closure in
                    let events = Unmanaged<ConnectionEvents>.fromOpaque(closure!).takeUnretainedValue()
                    events.connected(connection)
                    events.tell("connected to NATS again at \(JetStreamConnection.connectedURL(connection))")
                }, closure))
        var connection: OpaquePointer?
        try check("connecting to \(servers.joined(separator: ","))", natsConnection_Connect(&connection, options))
        events.connected(connection)
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = 10_000
        jsOptions.PublishAsync.MaxPending = 8192
        jsOptions.PublishAsync.StallWait = 30_000
        // Retained for good, like `events`: an answer may still be handled while the
        // context closes.
        jsOptions.PublishAsync.AckHandlerClosure = Unmanaged.passRetained(acks).toOpaque()
        jsOptions.PublishAsync.AckHandler = { _, message, ack, failure, closure in
            let acks = Unmanaged<Publisher.Acks>.fromOpaque(closure!).takeUnretainedValue()
            acks.locked {
                if let ack {
                    if ack.pointee.Duplicate { acks.duplicates += 1 } else { acks.stored += 1 }
                } else if let failure {
                    let text = failure.pointee.ErrText.map { String(cString: $0) } ?? ""
                    acks.failures.append(
                        String(cString: natsStatus_GetText(failure.pointee.Err)) + (text.isEmpty ? "" : ": \(text)"))
                }
            }
            natsMsg_Destroy(message)
        }
        var context: OpaquePointer?
        let status = natsConnection_JetStream(&context, connection, &jsOptions)
        guard status == NATS_OK, let connection, let context else {
            events.closing()
            natsConnection_Destroy(connection)
            try check("opening JetStream", status)
            throw NATSFailure(doing: "opening JetStream", status: status, detail: "")
        }
        self.connection = connection
        self.context = context
    }

    deinit {
        events.closing()
        jsCtx_Destroy(context)
        natsConnection_Destroy(connection)
    }

    /// Makes sure `stream` exists: created with file storage, `replicas` copies and a
    /// duplicate window of `duplicateWindowSeconds`, over `pushtrail.events.*`, when it
    /// does not. Whether it was created.
    @discardableResult
    public func ensureStream(_ stream: String, replicas: Int, duplicateWindowSeconds: Int64 = 120) throws -> Bool {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, context, stream, nil, &code)
        if status == NATS_OK {
            jsStreamInfo_Destroy(info)
            return false
        }
        guard status == NATS_NOT_FOUND else {
            try check("looking up stream \(stream)", status, code)
            return false
        }
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        config.Storage = js_FileStorage
        config.Replicas = Int64(replicas)
        config.Duplicates = duplicateWindowSeconds * 1_000_000_000
        let created = stream.withCString { name in
            EventSubjects.wildcard.withCString { subject -> natsStatus in
                var subjects: [UnsafePointer<CChar>?] = [subject]
                return subjects.withUnsafeMutableBufferPointer { buffer in
                    config.Name = name
                    config.Subjects = buffer.baseAddress
                    config.SubjectsLen = 1
                    var created: UnsafeMutablePointer<jsStreamInfo>?
                    let status = js_AddStream(&created, context, &config, nil, &code)
                    jsStreamInfo_Destroy(created)
                    return status
                }
            }
        }
        try check("creating stream \(stream)", created, code)
        return true
    }

    /// The stream sequence of the last message of `partition` (0 when it has none).
    public func lastSequence(stream: String, partition: Int) throws -> UInt64 {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetLastMsg(&message, context, stream, EventSubjects.subject(partition: partition), nil, &code)
        if status == NATS_NOT_FOUND { return 0 }
        try check("reading the last message of partition \(partition)", status, code)
        defer { natsMsg_Destroy(message) }
        return natsMsg_GetSequence(message)
    }
}
