import PushTrailModel

/// FCM message files: what the Android backend posts to `messages:send`
/// (`{"message": {…}}`), turned into notification events for `import`, and stored
/// Android notifications turned back into files that reproduce them.
public enum FCMFile {
    /// The token written in place of the recipient's: a real person's device must not
    /// get a support engineer's test sends.
    public static let tokenPlaceholder = "REPLACE_WITH_TEST_DEVICE_TOKEN"

    /// The fields an FCM v1 `Message` has; a file with none of them is not one.
    static let messageFields: [StaticString] = [
        "token", "topic", "condition", "data", "notification", "android", "apns", "webpush", "fcm_options", "name",
    ]

    /// Builds the NDJSON line of an Android notification event from an FCM message file:
    /// a send body `{"message": {…}}` (with `validate_only` allowed beside it) or the bare
    /// message. The payload is the message with the whitespace between its tokens
    /// removed; every key keeps its place and every value its bytes. Without `id`, the
    /// id is derived from the file, user and time as for `.apns` files, so importing the
    /// same file again is a duplicate.
    public static func eventLine(
        file contents: [UInt8], user: String, at: Timestamp, id: String?, project: String?
    ) throws -> [UInt8] {
        try APNSFile.withJSON(contents) { json in
            let message = try FCMFile.message(in: json)
            let atText = APNSFile.timeText(at)
            let eventID = id ?? APNSFile.derivedID(contents: contents, user: user, at: atText)
            var line = """
                {\"type\":\"notification\",\"id\":\(JSONValue.quoted(eventID)),\"at\":\"\(atText)\",\
                \"user\":\(JSONValue.quoted(user)),\"platform\":\"android\"
                """
            if let project { line += ",\"project\":\(JSONValue.quoted(project))" }
            line += ",\"payload\":"
            return Array(line.utf8) + json.compactText(message) + [UInt8(ascii: "}")]
        }
    }

    /// The index of the message in a parsed file, or why the file is not one.
    static func message(in json: JSONView) throws -> Int {
        guard json.kind(json.root) == .object else {
            throw InvalidEvent("an FCM message file must hold a JSON object, not \(kindName(json.kind(json.root)))")
        }
        if let message = json.member(json.root, "message") {
            guard json.kind(message) == .object else {
                throw InvalidEvent("\"message\" must be an object, not \(kindName(json.kind(message)))")
            }
            for (k, _) in json.members(json.root) {
                let key = json.string(k) ?? ""
                guard key == "message" || key == "validate_only" else {
                    throw InvalidEvent(
                        "a send body holds \"message\" and \"validate_only\" only, not \"\(MessageText.shown(key))\"")
                }
            }
            return message
        }
        if json.member(json.root, "aps") != nil || json.member(json.root, "Simulator Target Bundle") != nil {
            throw InvalidEvent(
                "this is an APNs payload (it has \"aps\"), not an FCM message: import it without --platform android")
        }
        guard messageFields.contains(where: { json.member(json.root, $0) != nil }) else {
            throw InvalidEvent(
                "not an FCM message: it has none of \"message\", \"token\", \"topic\", \"condition\", \"data\", "
                    + "\"notification\", \"android\"")
        }
        return json.root
    }

    /// Whether `contents` reads as an FCM message file (a send body, or a message without
    /// `aps`): the hint for a file imported as an `.apns` one by mistake.
    public static func looksLikeMessage(_ contents: [UInt8]) -> Bool {
        var tape = JSONTape()
        return contents.withUnsafeBytes { bytes in
            do { try tape.parse(bytes) } catch { return false }
            return tape.nodes.withUnsafeBufferPointer { nodes in
                let json = JSONView(nodes: nodes, bytes: bytes)
                guard json.kind(json.root) == .object else { return false }
                if let m = json.member(json.root, "message") { return json.kind(m) == .object }
                return json.member(json.root, "aps") == nil
                    && messageFields.contains { json.member(json.root, $0) != nil }
            }
        }
    }

    static func kindName(_ kind: JSONNode.Kind) -> String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

// MARK: - Export

extension FCMFile {
    /// Whom an exported send goes to.
    public enum Recipient: Sendable, Equatable {
        /// The token as sent (`--show-tokens`).
        case asSent
        /// `tokenPlaceholder` in place of the token; a topic or condition is kept.
        case placeholder
        /// This test device (`--token`): its token replaces the token, topic or condition.
        case device(String)
    }

    /// Where a stored message was sent.
    public enum Target: Sendable, Equatable {
        case token
        case topic(String)
        case condition(String)
        /// No target in the message (the token was in the event's `device`, or nowhere).
        case none
    }

    /// An FCM send body and where the stored message had gone.
    public struct SendBody: Sendable {
        public var bytes: [UInt8]
        public var sentTo: Target
    }

    /// The send body for a stored Android notification: `{"message": …}` holding the
    /// payload's members in their order, each value byte for byte as ingested, the
    /// target excepted (see `Recipient`). A message with no target gets a `token`
    /// first: `device` (the event's) when sent as is, else the placeholder or `--token`.
    public static func sendBody(event raw: [UInt8], recipient: Recipient, device: String?) throws -> SendBody {
        var decoder = EventDecoder()
        return try raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json -> SendBody in
                let payload = try storedPayload(json)
                let targets = json.members(payload).filter { isTarget(json, $0.key) }
                let sentTo: Target
                if let first = targets.first {
                    let value = json.string(first.value) ?? ""
                    switch json.string(first.key) {
                    case "topic": sentTo = .topic(value)
                    case "condition": sentTo = .condition(value)
                    default: sentTo = .token
                    }
                } else {
                    sentTo = .none
                }
                let token: [UInt8]? =
                    switch recipient {
                    case .asSent: nil
                    case .placeholder: Array(JSONValue.quoted(tokenPlaceholder).utf8)
                    case .device(let t): Array(JSONValue.quoted(t).utf8)
                    }
                var members: [[UInt8]] = []
                if targets.isEmpty {
                    let inserted = token ?? Array(JSONValue.quoted(device ?? tokenPlaceholder).utf8)
                    members.append(Array("\"token\":".utf8) + inserted)
                }
                for (k, v) in json.members(payload) {
                    var value = Array(json.rawText(v))
                    if isTarget(json, k) {
                        let isToken = json.string(k) == "token"
                        if case .device = recipient {
                            // The test device replaces the first target; a second (FCM
                            // allows only one) goes.
                            guard k == targets[0].key else { continue }
                            members.append(Array("\"token\":".utf8) + token!)
                            continue
                        }
                        if isToken, let token { value = token }
                    }
                    members.append(Array(json.rawText(k)) + [UInt8(ascii: ":")] + value)
                }
                var out = Array("{\"message\":{".utf8)
                for (i, member) in members.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    out += member
                }
                out += Array("}}\n".utf8)
                return SendBody(bytes: out, sentTo: sentTo)
            }
        }
    }

    static func isTarget(_ json: JSONView, _ key: Int) -> Bool {
        let name = json.string(key)
        return name == "token" || name == "topic" || name == "condition"
    }

    static func storedPayload(_ json: JSONView) throws -> Int {
        guard let payload = json.member(json.root, "payload"), json.kind(payload) == .object else {
            throw InvalidEvent("the event has no payload object")
        }
        return payload
    }

    /// What the app receives from a stored Android message, as a broadcast can deliver it.
    public struct DataMessage: Sendable {
        /// The data map the app reads (`android.data` when present, else `data`), in order;
        /// a value that is not a string is its JSON text.
        public var data: [(key: String, value: String)]
        /// The keys of `data` whose value was not a string (FCM refuses such a send).
        public var nonStringKeys: [String]
        /// The data map's path in the event (`payload.android.data` or `payload.data`).
        public var dataPath: String
        /// The notification blocks the message has, which the system shows itself while
        /// the app is in the background.
        public var notificationBlocks: [String]
        public var restrictedPackageName: String?
        /// The event's Firebase `project`.
        public var project: String?
    }

    /// Reads the data message of a stored Android notification.
    public static func dataMessage(event raw: [UInt8]) throws -> DataMessage {
        var decoder = EventDecoder()
        return try raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json -> DataMessage in
                let payload = try storedPayload(json)
                func object(_ parent: Int?, _ key: StaticString) -> Int? {
                    guard let parent, let v = json.member(parent, key), json.kind(v) == .object else { return nil }
                    return v
                }
                let android = object(payload, "android")
                let androidData = object(android, "data")
                let map = androidData ?? object(payload, "data")
                var message = DataMessage(
                    data: [], nonStringKeys: [], dataPath: androidData != nil ? "payload.android.data" : "payload.data",
                    notificationBlocks: [],
                    restrictedPackageName: android.flatMap { json.member($0, "restricted_package_name") }.flatMap {
                        json.string($0)
                    },
                    project: json.member(json.root, "project").flatMap { json.string($0) })
                if let map {
                    for (k, v) in json.members(map) {
                        let key = json.string(k) ?? ""
                        if let value = json.string(v) {
                            message.data.append((key, value))
                        } else {
                            message.data.append((key, String(decoding: json.compactText(v), as: UTF8.self)))
                            message.nonStringKeys.append(key)
                        }
                    }
                }
                if object(payload, "notification") != nil { message.notificationBlocks.append("payload.notification") }
                if object(android, "notification") != nil {
                    message.notificationBlocks.append("payload.android.notification")
                }
                return message
            }
        }
    }
}

// MARK: - adb

/// The broadcast that hands a data message to an Android app's Firebase receiver on an
/// emulator, without FCM: `adb [-s SERIAL] shell am broadcast -n PACKAGE/RECEIVER -a
/// RECEIVE --es KEY VALUE …`. The receiver accepts it only from root (`adb root`, which a
/// `google_apis` emulator image allows).
///
/// `adb shell` joins its arguments with spaces and has the device's shell run the
/// result, so every word is quoted for that shell; a script quotes each such word once
/// more for the shell that runs the script.
public struct AndroidBroadcast: Sendable {
    public static let receiver = "com.google.firebase.iid.FirebaseInstanceIdReceiver"
    public static let intentAction = "com.google.android.c2dm.intent.RECEIVE"
    /// The script's first comment lines: what the broadcast needs and why each run sends a new id.
    public static let requirements = [
        "Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).",
        "Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.",
    ]

    /// The `from` extra when the event names no Firebase project.
    public static let defaultSender = "pushtrail"

    public var package: String
    /// The `from` extra: the sender the SDK reports (`RemoteMessage.getFrom()`).
    public var sender: String
    public var data: [(key: String, value: String)]

    public init(package: String, sender: String, data: [(key: String, value: String)]) {
        self.package = package
        self.sender = sender
        self.data = data
    }

    /// A fresh `google.message_id`: the notification's seq, the time and the process.
    public static func messageID(seq: UInt64, seconds: Int64, pid: Int32) -> String {
        "pushtrail-\(seq)-\(seconds)-\(pid)"
    }

    /// The first string that cannot be passed as an argument (it holds a NUL), if any.
    public var unpassable: String? {
        ([package, sender] + data.flatMap { [$0.key, $0.value] }).first { $0.utf8.contains(0) }
    }

    /// The device's command, unquoted, one group per script line; `messageID` stands in
    /// for the id.
    func groups(messageID: String) -> [[String]] {
        [
            ["am", "broadcast"], ["-n", package + "/" + AndroidBroadcast.receiver],
            ["-a", AndroidBroadcast.intentAction],
        ]
            + data.map { ["--es", $0.key, $0.value] }
            + [["--es", "google.message_id", messageID], ["--es", "from", sender]]
    }

    /// The arguments after `adb` for a run without a local shell: `-s SERIAL`, `shell`,
    /// then each word of the device's command quoted for the device's shell.
    public func adbArguments(serial: String?, messageID: String) -> [String] {
        (serial.map { ["-s", $0] } ?? []) + ["shell"] + groups(messageID: messageID).joined().map(ShellQuote.word)
    }

    /// The command as `sh` text, one group per line: each word of the device's command
    /// quoted twice (for the script's shell, then the device's); the message id made
    /// when the script runs from the seq, `date +%s` and the shell's pid.
    public func script(serial: String?, seq: UInt64) -> String {
        let id = "@id@"
        var lines = groups(messageID: id).map { group in
            group.map { $0 == id ? "\"pushtrail-\(seq)-$(date +%s)-$$\"" : ShellQuote.twice($0) }.joined(
                separator: " ")
        }
        lines[0] = "adb " + (serial.map { "-s \(ShellQuote.word($0)) " } ?? "") + "shell " + lines[0]
        return lines.joined(separator: " \\\n    ") + "\n"
    }
}

/// Quoting for POSIX shells (`sh`, and the device's `mksh`).
public enum ShellQuote {
    /// Whether `s` is a word no shell changes: ASCII letters, digits and `-_.:/@+=,`.
    public static func isPlain(_ s: String) -> Bool {
        !s.isEmpty
            && s.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || "-_.:/@+=,".utf8.contains(c)
            }
    }

    /// `s` as one shell word: as it is when plain, else in single quotes (inside which
    /// nothing is special; a quote is written `'\''`).
    public static func word(_ s: String) -> String {
        guard !isPlain(s) else { return s }
        // By scalar: a quote followed by a combining mark is one Character, not a quote.
        var out = "'"
        for c in s.unicodeScalars {
            if c == "'" { out += "'\\''" } else { out.unicodeScalars.append(c) }
        }
        return out + "'"
    }

    /// `s` quoted for two shells, one after the other: `word(s)` for the second, in
    /// double quotes for the first (with `$`, `` ` ``, `"` and `\` escaped, the only
    /// characters special there).
    public static func twice(_ s: String) -> String {
        let inner = word(s)
        if isPlain(inner) { return inner }
        var out = "\""
        for c in inner.unicodeScalars {
            if c == "$" || c == "`" || c == "\"" || c == "\\" { out += "\\" }
            out.unicodeScalars.append(c)
        }
        return out + "\""
    }
}
