/// Why an input line is not a valid event: the one-line reason shown as
/// `pushtrail: FILE:LINE: reason`.
public struct InvalidEvent: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }

    /// The error as an `InvalidEvent` (closures lose typed throws).
    public static func from(_ error: any Error) -> InvalidEvent {
        error as? InvalidEvent ?? InvalidEvent("\(error)")
    }
}

/// Decodes and validates one NDJSON line as an event (the rules of docs/EVENTS.md).
///
/// Keeps a reusable tape, so one decoder per thread decodes line after line without
/// allocating for the parse itself.
public struct EventDecoder: Sendable {
    /// The longest line accepted, in bytes (without its line break).
    public static let maxLineBytes = EventSchema.maxLineBytes

    private var tape = JSONTape()

    public init() {}

    /// Decodes `line` (without its line break).
    public mutating func decode(_ line: UnsafeRawBufferPointer) throws(InvalidEvent) -> Event {
        try decode(line, full: true)
    }

    /// Checks every rule of `line` as `decode` does, but reads out only what the store
    /// files the event under: what ingest needs, at a fraction of the cost (no display
    /// text, custom key or change is materialised).
    public mutating func decodeForFiling(_ line: UnsafeRawBufferPointer) throws(InvalidEvent) -> FilingEvent {
        try decode(line, full: false).filing
    }

    /// `decodeForFiling` of an array of bytes.
    public mutating func decodeForFiling(_ line: [UInt8]) throws(InvalidEvent) -> FilingEvent {
        try decodeCollection(line, full: false).filing
    }

    /// `decodeForFiling` of a slice of bytes.
    public mutating func decodeForFiling(_ line: ArraySlice<UInt8>) throws(InvalidEvent) -> FilingEvent {
        try decodeCollection(line, full: false).filing
    }

    /// The decode; with `full` false, display fields are left unset (only `filing` of
    /// the result may be used).
    private mutating func decode(_ line: UnsafeRawBufferPointer, full: Bool) throws(InvalidEvent) -> Event {
        if line.count > EventDecoder.maxLineBytes {
            throw InvalidEvent("line is \(line.count) bytes, over the limit of \(EventDecoder.maxLineBytes) (64 KiB)")
        }
        if line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
            throw InvalidEvent("line starts with a byte-order mark (U+FEFF); save the file as UTF-8 without BOM")
        }
        do {
            try tape.parse(line)
        } catch {
            throw InvalidEvent(error.description)
        }
        do {
            return try tape.nodes.withUnsafeBufferPointer { nodes in
                try EventDecoder.event(JSONView(nodes: nodes, bytes: line), full: full)
            }
        } catch {
            throw InvalidEvent.from(error)
        }
    }

    /// Decodes an event from an array of bytes.
    public mutating func decode(_ line: [UInt8]) throws(InvalidEvent) -> Event {
        try decodeCollection(line, full: true)
    }

    /// Decodes an event from a slice of bytes.
    public mutating func decode(_ line: ArraySlice<UInt8>) throws(InvalidEvent) -> Event {
        try decodeCollection(line, full: true)
    }

    private mutating func decodeCollection<C: Collection<UInt8>>(_ line: C, full: Bool) throws(InvalidEvent) -> Event {
        do {
            if let result = try line.withContiguousStorageIfAvailable({
                try decode(UnsafeRawBufferPointer($0), full: full)
            }) {
                return result
            }
            return try Array(line).withUnsafeBytes { try decode($0, full: full) }
        } catch {
            throw InvalidEvent.from(error)
        }
    }

    /// Parses `line` and lends the parsed view to `body` (for code that needs more
    /// than the decoded event, like export and equality checks).
    public mutating func withView<R>(_ line: UnsafeRawBufferPointer, _ body: (JSONView) throws -> R) throws -> R {
        do {
            try tape.parse(line)
        } catch {
            throw InvalidEvent(error.description)
        }
        return try tape.nodes.withUnsafeBufferPointer { try body(JSONView(nodes: $0, bytes: line)) }
    }

    // MARK: - Rules

    static func event(_ json: JSONView, full: Bool = true) throws(InvalidEvent) -> Event {
        let root = json.root
        guard json.kind(root) == .object else {
            throw InvalidEvent("event is a JSON \(name(json.kind(root))), not an object")
        }
        // `type` and `at` are read where they lie: no string is built for them.
        let typeNode = try requiredStringNode(json, root, "type")
        guard let type = json.withStringBytes(typeNode, { EventType(utf8: $0) }) else {
            throw InvalidEvent(
                "\"type\" is \"\(shown(json.string(typeNode)!))\"; expected notification, action or delivery")
        }
        let id = try requiredString(json, root, "id", bytes: EventSchema.idBytes)
        let atNode = try requiredStringNode(json, root, "at")
        guard let at = json.withStringBytes(atNode, { Timestamp.parseRFC3339($0) }) else {
            throw InvalidEvent(
                "\"at\" is \"\(shown(json.string(atNode)!))\"; expected an RFC 3339 time like 2026-11-29T10:00:00Z")
        }
        let user = try requiredString(json, root, "user", bytes: EventSchema.userBytes)
        var device = try optionalString(json, root, "device", bytes: EventSchema.deviceBytes)

        let body: Event.Body
        switch type {
        case .notification:
            let (n, token) = try notification(json, root, full: full)
            if let token {
                // An FCM message names its device itself: the envelope must agree.
                if let device, device != token {
                    throw InvalidEvent(
                        "\"device\" and \"payload.token\" are different tokens; a message goes to one device")
                }
                device = token
            }
            body = .notification(n)
        case .action: body = .action(try action(json, root, full: full))
        case .delivery: body = .delivery(try delivery(json, root))
        }
        return Event(id: id, at: at, user: user, device: device, body: body)
    }

    /// A notification, and for an FCM message the token it names.
    static func notification(
        _ json: JSONView, _ root: Int, full: Bool
    ) throws(InvalidEvent) -> (PushNotification, token: String?) {
        guard let payload = json.member(root, "payload") else {
            throw InvalidEvent("notification has no \"payload\"")
        }
        guard json.kind(payload) == .object else {
            throw InvalidEvent("\"payload\" must be an object, not \(article(json.kind(payload)))")
        }
        if try platform(json, root) == .android {
            return try androidNotification(json, root, payload, full: full)
        }
        return (try apnsNotification(json, root, payload, full: full), nil)
    }

    /// An iOS notification: `payload` is the APNs body.
    static func apnsNotification(
        _ json: JSONView, _ root: Int, _ payload: Int, full: Bool
    ) throws(InvalidEvent) -> PushNotification {
        guard let aps = json.member(payload, "aps") else {
            throw InvalidEvent("\"payload\" has no \"aps\" object")
        }
        guard json.kind(aps) == .object else {
            throw InvalidEvent("\"payload.aps\" must be an object, not \(article(json.kind(aps)))")
        }
        let topic = try optionalString(json, root, "topic", bytes: EventSchema.topicBytes, keep: full)
        let threadID = try optionalString(
            json, aps, "thread-id", bytes: EventSchema.threadIDBytes, path: "payload.aps.")
        let category = try optionalString(json, aps, "category", path: "payload.aps.", keep: full)
        var title: String?
        var subtitle: String?
        var body: String?
        if let alert = json.member(aps, "alert") {
            switch json.kind(alert) {
            case .string: body = full ? json.string(alert) : nil
            case .object:
                title = try optionalString(json, alert, "title", path: "payload.aps.alert.", keep: full)
                subtitle = try optionalString(json, alert, "subtitle", path: "payload.aps.alert.", keep: full)
                body = try optionalString(json, alert, "body", path: "payload.aps.alert.", keep: full)
            default:
                throw InvalidEvent(
                    "\"payload.aps.alert\" must be a string or an object, not \(article(json.kind(alert)))")
            }
        }
        var taskID: Int64?
        if let t = json.member(payload, "task_id") {
            guard let value = json.int64(t) else {
                throw InvalidEvent("\"payload.task_id\" must be an integer, not \(shown(json.rawString(t)))")
            }
            taskID = value
        }
        var buttons: [String]?
        if let b = json.member(payload, "button_types") {
            guard json.kind(b) == .array else {
                throw InvalidEvent("\"payload.button_types\" must be an array of strings")
            }
            var list: [String] = []
            var element = b + 1
            while element < json.end(of: b) {  // no array of indexes to walk it
                guard json.kind(element) == .string else {
                    throw InvalidEvent("\"payload.button_types\" must be an array of strings")
                }
                if full { list.append(json.string(element)!) }
                element = json.end(of: element)
            }
            buttons = full ? list : nil
        }
        var isPremium: Bool?
        if let p = json.member(payload, "is_premium") {
            guard let value = json.bool(p) else {
                throw InvalidEvent("\"payload.is_premium\" must be true or false, not \(shown(json.rawString(p)))")
            }
            isPremium = value
        }
        return PushNotification(
            threadID: threadID, category: category, title: title, subtitle: subtitle, body: body,
            taskID: taskID,
            taskName: try optionalString(json, payload, "task_name", path: "payload.", keep: full),
            residenceID: full ? json.member(payload, "residence_id").map { fieldValue(json, $0) } : nil,
            residenceName: try optionalString(json, payload, "residence_name", path: "payload.", keep: full),
            dueDate: full ? json.member(payload, "due_date").map { fieldValue(json, $0) } : nil,
            notificationType: try optionalString(json, payload, "notification_type", path: "payload.", keep: full),
            buttons: buttons, isPremium: isPremium, topic: topic,
            payloadSize: full ? json.compactSize(payload) : 0)
    }

    static func action(_ json: JSONView, _ root: Int, full: Bool) throws(InvalidEvent) -> ActionResponse {
        guard let t = json.member(root, "task_id") else { throw InvalidEvent("action has no \"task_id\"") }
        guard let taskID = json.int64(t) else {
            throw InvalidEvent("\"task_id\" must be an integer, not \(shown(json.rawString(t)))")
        }
        let actionName = try requiredString(json, root, "action")
        guard let action = ActionKind(rawValue: actionName) else {
            throw InvalidEvent(
                "\"action\" is \"\(shown(actionName))\"; expected one of "
                    + ActionKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let outcomeName = try requiredString(json, root, "outcome")
        guard let outcome = Outcome(rawValue: outcomeName) else {
            throw InvalidEvent("\"outcome\" is \"\(shown(outcomeName))\"; expected ok, rejected or failed")
        }
        let notificationID = try optionalString(json, root, "notification_id", bytes: EventSchema.idBytes)
        let threadID = try optionalString(json, root, "thread_id", bytes: EventSchema.threadIDBytes)
        var httpStatus: Int?
        if let s = json.member(root, "http_status") {
            guard let v = json.int64(s), EventSchema.httpStatuses.contains(v) else {
                throw InvalidEvent(
                    "\"http_status\" must be an integer from 100 to 599, not \(shown(json.rawString(s)))")
            }
            httpStatus = Int(v)
        }
        let error = try optionalString(json, root, "error", keep: full)
        var changes: [(key: String, value: FieldValue)] = []
        if let c = json.member(root, "changes") {
            guard json.kind(c) == .object else {
                throw InvalidEvent("\"changes\" must be an object, not \(article(json.kind(c)))")
            }
            if full {
                for (k, v) in json.members(c) {
                    changes.append((json.string(k) ?? "", fieldValue(json, v)))
                }
            }
        }
        return ActionResponse(
            taskID: taskID, action: action, outcome: outcome,
            notificationID: notificationID.map(EventID.normalizedNotificationIDString),
            threadID: threadID, httpStatus: httpStatus, error: error, changes: changes)
    }

    static func delivery(_ json: JSONView, _ root: Int) throws(InvalidEvent) -> Delivery {
        guard let notificationID = try optionalString(json, root, "notification_id", bytes: EventSchema.idBytes) else {
            throw InvalidEvent("delivery has no \"notification_id\"")
        }
        guard let s = json.member(root, "status") else { throw InvalidEvent("delivery has no \"status\"") }
        guard let status = json.int64(s), EventSchema.httpStatuses.contains(status) else {
            throw InvalidEvent(
                "\"status\" must be an integer HTTP status from 100 to 599, not \(shown(json.rawString(s)))")
        }
        let reason = try optionalString(json, root, "reason")
        let messageID = try optionalString(json, root, "message_id")
        return Delivery(
            notificationID: EventID.normalizedNotificationIDString(notificationID), status: Int(status), reason: reason,
            messageID: messageID)
    }

    /// `platform`: `ios` when absent, else `ios` or `android`.
    static func platform(_ json: JSONView, _ root: Int) throws(InvalidEvent) -> Platform {
        guard let node = json.member(root, "platform") else { return .ios }
        guard json.kind(node) == .string else {
            throw InvalidEvent("\"platform\" must be a string, not \(shown(json.rawString(node)))")
        }
        let platform = json.withStringBytes(node) { b -> Platform? in
            if JSONText.bytesEqual(b, "ios") { return .ios }
            if JSONText.bytesEqual(b, "android") { return .android }
            return nil
        }
        guard let platform else {
            throw InvalidEvent("\"platform\" is \"\(shown(json.string(node) ?? ""))\"; expected ios or android")
        }
        return platform
    }

    // MARK: - Field helpers

    /// The node of the string member `key`, which must be there.
    static func requiredStringNode(_ json: JSONView, _ object: Int, _ key: StaticString) throws(InvalidEvent) -> Int {
        guard let index = json.member(object, key) else { throw InvalidEvent("missing \"\(key)\"") }
        guard json.kind(index) == .string else {
            throw InvalidEvent("\"\(key)\" must be a string, not \(shown(json.rawString(index)))")
        }
        return index
    }

    static func requiredString(
        _ json: JSONView, _ object: Int, _ key: StaticString, bytes range: ClosedRange<Int>? = nil
    ) throws(InvalidEvent) -> String {
        guard let value = try optionalString(json, object, key, bytes: range) else {
            throw InvalidEvent("missing \"\(key)\"")
        }
        return value
    }

    /// The string member `key`, checked; with `keep` false it is only checked (nil).
    static func optionalString(
        _ json: JSONView, _ object: Int, _ key: StaticString, bytes range: ClosedRange<Int>? = nil, path: String = "",
        keep: Bool = true
    ) throws(InvalidEvent) -> String? {
        guard let index = json.member(object, key) else { return nil }
        guard json.kind(index) == .string else {
            throw InvalidEvent("\"\(path)\(key)\" must be a string, not \(shown(json.rawString(index)))")
        }
        if let range {
            let length = json.stringLength(index)
            if !range.contains(length) {
                throw InvalidEvent(
                    "\"\(path)\(key)\" must be \(range.lowerBound)–\(range.upperBound) bytes, not \(length)")
            }
        }
        return keep ? json.string(index) : nil
    }

    static func fieldValue(_ json: JSONView, _ index: Int) -> FieldValue {
        json.kind(index) == .string ? .string(json.string(index) ?? "") : .json(json.rawString(index))
    }

    static func name(_ kind: JSONNode.Kind) -> String {
        switch kind {
        case .object: "object"
        case .array: "array"
        case .string: "string"
        case .number: "number"
        case .bool: "boolean"
        case .null: "null"
        }
    }

    /// The kind with its article: "an object", "a string", "null".
    static func article(_ kind: JSONNode.Kind) -> String {
        switch kind {
        case .object, .array: "an \(name(kind))"
        case .null: "null"
        default: "a \(name(kind))"
        }
    }

    /// A value cut to a length that fits in a one-line message.
    package static func shown(_ text: String) -> String { MessageText.shown(text) }
}
