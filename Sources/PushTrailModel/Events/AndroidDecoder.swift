/// The rules of an Android notification (docs/EVENTS.md, "Android notifications"):
/// `payload` is the FCM v1 message as sent, and the app reads everything from its data
/// map, whose values FCM carries as strings.
extension EventDecoder {
    /// The parts of an Android notification event: the notification, and the message's
    /// `token` (the device, when the envelope has none).
    static func androidNotification(
        _ json: JSONView, _ root: Int, _ payload: Int, full: Bool
    ) throws(InvalidEvent) -> (PushNotification, token: String?) {
        _ = try optionalString(json, root, "project", keep: false)
        let token = try optionalString(json, payload, "token", bytes: EventSchema.deviceBytes, path: "payload.")
        let data = try optionalObject(json, payload, "data", path: "payload.")
        let android = try optionalObject(json, payload, "android", path: "payload.")
        let androidData = try android.flatMap { a throws(InvalidEvent) in
            try optionalObject(json, a, "data", path: "payload.android.")
        }
        let notification = try optionalObject(json, payload, "notification", path: "payload.")
        let androidNotification = try android.flatMap { a throws(InvalidEvent) in
            try optionalObject(json, a, "notification", path: "payload.android.")
        }

        // `android.data` replaces `data`, as FCM delivers it.
        let map = androidData ?? data
        let mapPath = androidData != nil ? "payload.android.data." : "payload.data."
        var n = PushNotification(payloadSize: 0)
        n.platform = .android
        if let map {
            try readData(json, map, path: mapPath, full: full, into: &n)
        }
        // What the system shows for a notification message, when the data has no text.
        func fallback(_ block: Int?, _ path: String) throws(InvalidEvent) {
            guard let block else { return }
            let title = try optionalString(json, block, "title", path: path, keep: full)
            let body = try optionalString(json, block, "body", path: path, keep: full)
            if n.title == nil { n.title = title }
            if n.body == nil { n.body = body }
        }
        try fallback(androidNotification, "payload.android.notification.")
        try fallback(notification, "payload.notification.")
        if full {
            if notification != nil { n.notificationBlocks.append("payload.notification") }
            if androidNotification != nil { n.notificationBlocks.append("payload.android.notification") }
            if let data { n.dataProblems += dataProblems(json, data, map: "payload.data") }
            if let androidData { n.dataProblems += dataProblems(json, androidData, map: "payload.android.data") }
            n.payloadSize = fcmSize(json, maps: (data, androidData), blocks: (notification, androidNotification))
        }
        return (n, token)
    }

    /// Reads the app's fields from the data map at `map`: strings as FCM carries them,
    /// or values of the iOS type, which are read as they are (and flagged by the audit).
    private static func readData(
        _ json: JSONView, _ map: Int, path: String, full: Bool, into n: inout PushNotification
    ) throws(InvalidEvent) {
        n.threadID = try optionalString(json, map, "thread_id", bytes: EventSchema.threadIDBytes, path: path)
        n.category = try optionalString(json, map, "category", path: path, keep: full)
        n.title = try optionalString(json, map, "title", path: path, keep: full)
        n.subtitle = try optionalString(json, map, "subtitle", path: path, keep: full)
        n.body = try optionalString(json, map, "body", path: path, keep: full)
        n.taskName = try optionalString(json, map, "task_name", path: path, keep: full)
        n.residenceName = try optionalString(json, map, "residence_name", path: path, keep: full)
        n.notificationType = try optionalString(json, map, "notification_type", path: path, keep: full)
        if full {
            n.residenceID = json.member(map, "residence_id").map { fieldValue(json, $0) }
            n.dueDate = json.member(map, "due_date").map { fieldValue(json, $0) }
        }
        if let t = json.member(map, "task_id") {
            n.taskID = try decimalTaskID(json, t, path: path)
        }
        if let p = json.member(map, "is_premium") {
            n.isPremium = try premium(json, p, path: path)
        }
        if let b = json.member(map, "button_types") {
            let list = try buttonTypes(json, b, path: path)
            n.buttons = full ? list : nil
        }
    }

    /// `task_id`: a string of decimal digits, or an integer.
    private static func decimalTaskID(_ json: JSONView, _ t: Int, path: String) throws(InvalidEvent) -> Int64 {
        if let value = json.int64(t) { return value }
        if json.kind(t) == .string {
            if let value = json.withStringBytes(t, FCMRules.decimal) { return value }
        }
        throw InvalidEvent(
            "\"\(path)task_id\" must be a string of decimal digits, not \(shown(json.rawString(t)))")
    }

    /// `is_premium`: `"true"` or `"false"`, or a boolean.
    private static func premium(_ json: JSONView, _ p: Int, path: String) throws(InvalidEvent) -> Bool {
        if let value = json.bool(p) { return value }
        if json.kind(p) == .string {
            let value = json.withStringBytes(p) { b -> Bool? in
                if JSONText.bytesEqual(b, "true") { return true }
                if JSONText.bytesEqual(b, "false") { return false }
                return nil
            }
            if let value { return value }
        }
        throw InvalidEvent("\"\(path)is_premium\" must be \"true\" or \"false\", not \(shown(json.rawString(p)))")
    }

    /// `button_types`: a JSON array of strings inside a string, a comma-separated list,
    /// or an array of strings.
    private static func buttonTypes(_ json: JSONView, _ b: Int, path: String) throws(InvalidEvent) -> [String] {
        func wrong() -> InvalidEvent {
            InvalidEvent(
                "\"\(path)button_types\" must be a JSON array of names in a string (\"[\\\"complete\\\"]\") "
                    + "or a comma-separated list (\"complete,cancel\"), not \(shown(json.rawString(b)))")
        }
        switch json.kind(b) {
        case .array:
            var list: [String] = []
            var element = b + 1
            while element < json.end(of: b) {
                guard let name = json.string(element) else { throw wrong() }
                list.append(name)
                element = json.end(of: element)
            }
            return list
        case .string:
            guard let list = json.withStringBytes(b, ButtonList.parse) else { throw wrong() }
            return list
        default:
            throw wrong()
        }
    }

    /// The object member `key`, which must be an object when present.
    static func optionalObject(
        _ json: JSONView, _ object: Int, _ key: StaticString, path: String
    ) throws(InvalidEvent) -> Int? {
        guard let index = json.member(object, key) else { return nil }
        guard json.kind(index) == .object else {
            throw InvalidEvent("\"\(path)\(key)\" must be an object, not \(article(json.kind(index)))")
        }
        return index
    }

    /// The entries of a data map that FCM refuses (a value that is not a string) or
    /// drops (a reserved key).
    static func dataProblems(_ json: JSONView, _ map: Int, map name: String) -> [DataProblem] {
        var problems: [DataProblem] = []
        json.forEachMember(map) { k, v in
            let notString = json.kind(v) != .string
            let reserved = json.withStringBytes(k, FCMRules.isReservedKey)
            guard notString || reserved else { return }
            let key = json.string(k) ?? ""
            if notString {
                problems.append(DataProblem(map: name, key: key, kind: .notString(EventDecoder.name(json.kind(v)))))
            }
            if reserved { problems.append(DataProblem(map: name, key: key, kind: .reservedKey)) }
        }
        return problems
    }

    /// The size FCM counts: the UTF-8 bytes of every data key and value, and of the
    /// notification blocks' title and body. A value that is not a string counts as its
    /// JSON text (FCM refuses it anyway).
    static func fcmSize(_ json: JSONView, maps: (Int?, Int?), blocks: (Int?, Int?)) -> Int {
        var size = 0
        for map in [maps.0, maps.1] {
            guard let map else { continue }
            json.forEachMember(map) { k, v in
                size += json.stringLength(k)
                size += json.kind(v) == .string ? json.stringLength(v) : json.compactSize(v)
            }
        }
        func text(_ block: Int?, _ key: StaticString) -> Int {
            guard let block, let v = json.member(block, key), json.kind(v) == .string else { return 0 }
            return json.stringLength(v)
        }
        return size + text(blocks.0, "title") + text(blocks.0, "body") + text(blocks.1, "title")
            + text(blocks.1, "body")
    }
}

/// FCM's rules for data maps.
public enum FCMRules {
    /// A data value of decimal digits as a number (a task id), or nil when it is
    /// anything else or over `Int64.max`. Leading zeros are allowed.
    public static func decimal(_ digits: UnsafeRawBufferPointer) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for c in digits {
            let d = c &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }

    /// Keys FCM reserves: `from`, `message_type`, `collapse_key` and any starting with
    /// `google.` or `gcm.`.
    public static func isReservedKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { isReservedKey(UnsafeRawBufferPointer($0)) }
    }

    /// `isReservedKey` of a key's UTF-8 bytes.
    public static func isReservedKey(_ key: UnsafeRawBufferPointer) -> Bool {
        func hasPrefix(_ prefix: StaticString) -> Bool {
            key.count >= prefix.utf8CodeUnitCount
                && JSONText.bytesEqual(UnsafeRawBufferPointer(rebasing: key[0..<prefix.utf8CodeUnitCount]), prefix)
        }
        return JSONText.bytesEqual(key, "from") || JSONText.bytesEqual(key, "message_type")
            || JSONText.bytesEqual(key, "collapse_key") || hasPrefix("google.") || hasPrefix("gcm.")
    }
}

/// The two string forms of an Android `button_types`.
public enum ButtonList {
    /// The names in `text`: a JSON array of strings (`["complete","cancel"]`, `[]`) or
    /// a comma-separated list (`complete,cancel`, spaces around names ignored, no
    /// quotes or brackets in them; an empty text is no names). nil when it is neither.
    public static func parse(_ text: [UInt8]) -> [String]? {
        text.withUnsafeBytes(parse)
    }

    /// `parse` of bytes where they lie.
    public static func parse(_ text: UnsafeRawBufferPointer) -> [String]? {
        let trimmed = text.drop { isSpace($0) }
        if trimmed.first == UInt8(ascii: "[") { return plainArray(text) ?? parseArray(text) }
        if trimmed.isEmpty { return [] }
        var names: [String] = []
        for part in text.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let name = part.drop { isSpace($0) }.reversed().drop { isSpace($0) }.reversed()
            guard !name.isEmpty, !name.contains(where: { $0 < 0x20 || "\"[]{}".utf8.contains($0) }) else { return nil }
            names.append(String(decoding: name, as: UTF8.self))
        }
        return names
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    /// The usual JSON form, `["complete","cancel"]` (spaces allowed, no escapes, ASCII),
    /// read without a parser; nil for anything else, which `parseArray` then decides.
    private static func plainArray(_ text: UnsafeRawBufferPointer) -> [String]? {
        var names: [String] = []
        var i = 0
        let n = text.count
        func skipSpace() { while i < n, isSpace(text[i]) { i += 1 } }
        skipSpace()
        guard i < n, text[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        skipSpace()
        if i < n, text[i] == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                guard i < n, text[i] == UInt8(ascii: "\"") else { return nil }
                i += 1
                let start = i
                while i < n, text[i] != UInt8(ascii: "\""), text[i] >= 0x20, text[i] < 0x80,
                    text[i] != UInt8(ascii: "\\")
                {
                    i += 1
                }
                guard i < n, text[i] == UInt8(ascii: "\"") else { return nil }
                names.append(String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<i]), as: UTF8.self))
                i += 1
                skipSpace()
                guard i < n else { return nil }
                if text[i] == UInt8(ascii: "]") {
                    i += 1
                    break
                }
                guard text[i] == UInt8(ascii: ",") else { return nil }
                i += 1
                skipSpace()
            }
        }
        skipSpace()
        return i == n ? names : nil
    }

    /// Any JSON array of strings, through the parser.
    private static func parseArray(_ text: UnsafeRawBufferPointer) -> [String]? {
        var tape = JSONTape()
        do { try tape.parse(text) } catch { return nil }
        return tape.nodes.withUnsafeBufferPointer { nodes -> [String]? in
            let json = JSONView(nodes: nodes, bytes: text)
            guard json.kind(json.root) == .array else { return nil }
            var names: [String] = []
            for element in json.elements(json.root) {
                guard let name = json.string(element) else { return nil }
                names.append(name)
            }
            return names
        }
    }
}
