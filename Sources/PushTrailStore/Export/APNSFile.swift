import PushTrailModel

/// An `.apns` file: an APNs payload plus the simulator's `"Simulator Target Bundle"`
/// key, turned into a notification event for `import`.
public enum APNSFile {
    public static let bundleKey = "Simulator Target Bundle"

    /// Builds the NDJSON line of a notification event from an `.apns` file's bytes.
    /// The bundle key becomes `topic` (unless `topic` is given) and leaves the payload;
    /// every other key stays, in order, with its value unchanged. Without `id`, the id
    /// is a UUID derived from the content, user and time, so importing the same file
    /// again is a duplicate.
    public static func eventLine(
        file contents: [UInt8], user: String, at: Timestamp, id: String?, topic: String?
    ) throws -> [UInt8] {
        try APNSFile.withJSON(contents) { json in
            guard json.kind(0) == .object else { throw InvalidEvent("an .apns file must hold a JSON object") }
            var bundle: String?
            var payload: [UInt8] = [UInt8(ascii: "{")]
            for (k, v) in json.members(0) {
                if json.string(k) == bundleKey {
                    bundle = json.string(v)
                    continue
                }
                if payload.count > 1 { payload.append(UInt8(ascii: ",")) }
                payload += json.compactText(k) + [UInt8(ascii: ":")] + json.compactText(v)
            }
            payload.append(UInt8(ascii: "}"))
            let atText = timeText(at)
            let eventID = id ?? derivedID(contents: contents, user: user, at: atText)
            var line = """
                {\"type\":\"notification\",\"id\":\(JSONValue.quoted(eventID)),\"at\":\"\(atText)\",\
                \"user\":\(JSONValue.quoted(user))
                """
            if let t = topic ?? bundle.flatMap({ $0.isEmpty ? nil : $0 }) {
                line += ",\"topic\":\(JSONValue.quoted(t))"
            }
            line += ",\"payload\":"
            return Array(line.utf8) + payload + [UInt8(ascii: "}")]
        }
    }

    /// Parses an imported file and lends its view to `body`; a file that is not JSON is
    /// bad input whose reason says where.
    static func withJSON<R>(_ contents: [UInt8], _ body: (JSONView) throws -> R) throws -> R {
        var tape = JSONTape()
        return try contents.withUnsafeBytes { bytes in
            do {
                try tape.parse(bytes)
            } catch {
                throw InvalidEvent("\(error)")
            }
            return try tape.nodes.withUnsafeBufferPointer { try body(JSONView(nodes: $0, bytes: bytes)) }
        }
    }

    /// An imported event's `at`: milliseconds, or microseconds when it has them.
    public static func timeText(_ at: Timestamp) -> String {
        at.microseconds % 1000 == 0 ? at.formatted(fractionDigits: 3) : at.formatted(fractionDigits: 6)
    }

    /// A UUID (version 8, name-based on SHA-256) from the file, user and time.
    public static func derivedID(contents: [UInt8], user: String, at: String) -> String {
        let material = Array("pushtrail-import\u{0}".utf8) + contents + [0] + Array(user.utf8) + [0] + Array(at.utf8)
        var d = material.withUnsafeBytes { SHA256.digest($0) }
        d[6] = (d[6] & 0x0F) | 0x80
        d[8] = (d[8] & 0x3F) | 0x80
        let hex = SHA256.hex(d.prefix(16))
        let h = Array(hex)
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-" + String(h[16..<20]) + "-"
            + String(h[20..<32])
    }
}

extension APNSFile {
    /// The `.apns` file for a stored notification event: `"Simulator Target Bundle"`
    /// first, then every payload key in its original order with its value exactly as
    /// ingested (taken from the raw bytes, not re-serialised).
    public static func export(event raw: [UInt8], bundle: String) throws -> [UInt8] {
        var decoder = EventDecoder()
        return try raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json -> [UInt8] in
                guard let payload = json.member(json.root, "payload"), json.kind(payload) == .object else {
                    throw InvalidEvent("the event has no payload object")
                }
                var out = Array("{\"\(bundleKey)\":".utf8) + Array(JSONValue.quoted(bundle).utf8)
                for (k, v) in json.members(payload) where json.string(k) != bundleKey {
                    out.append(UInt8(ascii: ","))
                    out += json.rawText(k)
                    out.append(UInt8(ascii: ":"))
                    out += json.rawText(v)
                }
                out += Array("}\n".utf8)
                return out
            }
        }
    }
}

/// File names built from ids: only letters, digits, `.`, `_` and `-`, never hidden,
/// never `..`, and short enough for any file system.
public enum SafeFileName {
    /// `stem` made safe: every other byte becomes `_`, a leading `.` becomes `_`.
    public static func component(_ stem: String) -> String {
        var out = String(
            String.UnicodeScalarView(
                stem.unicodeScalars.map { s in
                    s.isASCII
                        && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "." || s == "_" || s == "-")
                        ? s : "_"
                }))
        if out.isEmpty { out = "_" }
        if out.hasPrefix(".") { out = "_" + out.dropFirst() }
        return out
    }

    /// `<stem>-<seq>.apns` (with an optional numeric prefix), cut so the whole name
    /// stays within 255 bytes and keeps its `-<seq>.apns` end.
    public static func apns(stem: String, seq: UInt64, prefix: String = "") -> String {
        named(stem: stem, tail: "-\(seq).apns", prefix: prefix)
    }

    /// `<stem>-<seq>.fcm.json`, cut as `apns` is.
    public static func fcm(stem: String, seq: UInt64, prefix: String = "") -> String {
        named(stem: stem, tail: "-\(seq).fcm.json", prefix: prefix)
    }

    /// `<stem>-<seq>.adb.sh`, cut as `apns` is.
    public static func adb(stem: String, seq: UInt64, prefix: String = "") -> String {
        named(stem: stem, tail: "-\(seq).adb.sh", prefix: prefix)
    }

    /// `prefix + stem + tail` with `stem` made safe and cut so the name stays within
    /// 255 bytes; `prefix` and `tail` must already be safe.
    public static func named(stem: String, tail: String, prefix: String = "") -> String {
        let budget = 255 - tail.utf8.count - prefix.utf8.count
        return prefix + String(component(stem).prefix(budget)) + tail
    }
}
