import Foundation
import PushTrailModel
import Testing

/// Runs `body` with a fresh private directory (mode 0700, whatever the umask) that is
/// removed afterwards.
public func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    var template = Array((NSTemporaryDirectory() + "/pushtrail-core-tests-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    let path = String(cString: made)
    defer {
        chmod(path, 0o700)
        try? FileManager.default.removeItem(atPath: path)
    }
    return try body(path)
}

/// Writes `bytes` to a new file at `path` with mode 0600.
public func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
        guard n > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        written += n
    }
}

/// The permission bits of the file at `path`.
public func fileMode(_ path: String) -> mode_t? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o7777
}

// MARK: - JSON

/// The error parsing `bytes` gives, or nil when they are valid JSON.
public func jsonError(_ bytes: [UInt8], maxDepth: Int = JSONTape.defaultMaxDepth) -> JSONError? {
    var tape = JSONTape()
    do {
        try bytes.withUnsafeBytes { try tape.parse($0, maxDepth: maxDepth) }
        return nil
    } catch {
        return error as? JSONError
    }
}

public func jsonError(_ text: String) -> JSONError? { jsonError(Array(text.utf8)) }

/// Parses `text` and lends a view of it to `body`.
public func withJSON<R>(_ text: String, _ body: (JSONView) throws -> R) throws -> R {
    try withJSON(Array(text.utf8), body)
}

public func withJSON<R>(_ bytes: [UInt8], _ body: (JSONView) throws -> R) throws -> R {
    var tape = JSONTape()
    return try bytes.withUnsafeBytes { raw in
        try tape.parse(raw)
        return try tape.nodes.withUnsafeBufferPointer { try body(JSONView(nodes: $0, bytes: raw)) }
    }
}

/// Whether two JSON texts hold equal values.
public func jsonEqual(_ a: String, _ b: String) throws -> Bool {
    try withJSON(a) { va in try withJSON(b) { vb in JSONView.equal(va, va.root, vb, vb.root) } }
}

// MARK: - Events

/// An event line built member by member, so a test can change just the field it is about.
public struct EventLine: CustomStringConvertible, Sendable {
    /// (key, raw JSON value) in order.
    public var members: [(String, String)]

    public init(_ members: KeyValuePairs<String, String>) {
        self.members = members.map { ($0.key, $0.value) }
    }

    /// This line with `key` set to the raw JSON `value` (replaced in place, or appended).
    public func with(_ key: String, _ value: String) -> EventLine {
        var copy = self
        if let i = copy.members.firstIndex(where: { $0.0 == key }) {
            copy.members[i].1 = value
        } else {
            copy.members.append((key, value))
        }
        return copy
    }

    /// This line without `key`.
    public func without(_ key: String) -> EventLine {
        var copy = self
        copy.members.removeAll { $0.0 == key }
        return copy
    }

    public var text: String { "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}" }
    public var bytes: [UInt8] { Array(text.utf8) }
    public var description: String { text }
}

/// A JSON string literal for `s` (no characters that need escaping are used with it).
public func jsonString(_ s: String) -> String { "\"" + s + "\"" }

public enum Fixture {
    public static let notificationID = "0B9E5C36-3A4B-4C5D-8E6F-708192A3B4C5"
    public static let payload =
        #"{"aps":{"alert":{"title":"Clean gutters","subtitle":"Home","body":"Due tomorrow"},"thread-id":"task-7","#
        + #""category":"TASK_ACTIONABLE"},"task_id":7,"task_name":"Clean gutters","residence_id":12,"#
        + #""residence_name":"Home","due_date":"2026-12-01","notification_type":"task_reminder","#
        + #""button_types":["edit","complete","cancel","mark_in_progress"],"is_premium":true}"#

    public static let notification = EventLine([
        "type": #""notification""#,
        "id": jsonString(notificationID),
        "at": #""2026-11-29T10:00:00Z""#,
        "user": #""user-1""#,
        "payload": payload,
    ])

    /// An FCM token, shaped like the real ones (instance id, colon, APA91b…).
    public static let fcmToken = "eX4mPlE-InStAnCe_Id0:APA91bH0ld3rT0k3nF0rT3st5AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

    /// The Android app's data map for the fixture's task: strings, as FCM carries them.
    public static let androidData =
        #"{"task_id":"7","task_name":"Clean gutters","residence_id":"12","residence_name":"Home","#
        + #""due_date":"2026-12-01","notification_type":"task_reminder","category":"TASK_ACTIONABLE","#
        + #""thread_id":"task-7","title":"Clean gutters","subtitle":"Home","body":"Due tomorrow","#
        + #""button_types":"complete,cancel,mark_in_progress","is_premium":"true"}"#

    /// A data-only FCM v1 message for the fixture's task.
    public static let androidPayload =
        #"{"token":""# + fcmToken + #"","data":"# + androidData
        + #","android":{"priority":"HIGH","restricted_package_name":"com.tt.honeydue"}}"#

    public static let androidNotification = EventLine([
        "type": #""notification""#,
        "id": jsonString(notificationID),
        "at": #""2026-11-29T10:00:00Z""#,
        "user": #""user-1""#,
        "platform": #""android""#,
        "project": #""honeydue-prod""#,
        "payload": androidPayload,
    ])

    public static let action = EventLine([
        "type": #""action""#,
        "id": #""act-1""#,
        "at": #""2026-11-29T10:05:00Z""#,
        "user": #""user-1""#,
        "task_id": "7",
        "action": #""complete""#,
        "outcome": #""ok""#,
    ])

    public static let delivery = EventLine([
        "type": #""delivery""#,
        "id": #""del-1""#,
        "at": #""2026-11-29T10:00:01Z""#,
        "user": #""user-1""#,
        "notification_id": jsonString(notificationID),
        "status": "200",
    ])
}

/// Decodes `line` as an event.
public func decodeEvent(_ line: EventLine) throws -> Event {
    try decodeEvent(line.bytes)
}

public func decodeEvent(_ bytes: [UInt8]) throws -> Event {
    var decoder = EventDecoder()
    return try decoder.decode(bytes)
}

/// The reason `line` is rejected, or nil when it decodes.
public func rejection(_ line: EventLine) -> String? { rejection(line.bytes) }

public func rejection(_ bytes: [UInt8]) -> String? {
    var decoder = EventDecoder()
    do {
        _ = try decoder.decode(bytes)
        return nil
    } catch {
        return error.reason
    }
}

/// A timestamp from RFC 3339 text the test knows to be valid.
public func instant(_ text: String) throws -> Timestamp {
    try #require(Timestamp.parseRFC3339(Array(text.utf8)), "\(text) should parse")
}

/// Seconds since the epoch as a timestamp.
public func utcSeconds(_ s: Int64, micros: Int64 = 0) -> Timestamp {
    Timestamp(microseconds: s * 1_000_000 + micros)
}

/// 2026-11-29T10:00:00Z: 20,786 days after the epoch (56 years, 14 of them leap, to
/// 2026-01-01, plus 332 days) and ten hours.
public let referenceSeconds: Int64 = 1_795_946_400
