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
        var tape = JSONTape()
        return try contents.withUnsafeBytes { bytes in
            do {
                try tape.parse(bytes)
            } catch {
                throw InvalidEvent("\(error)")
            }
            return try tape.nodes.withUnsafeBufferPointer { nodes in
                let json = JSONView(nodes: nodes, bytes: bytes)
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
                let atText = at.microseconds % 1000 == 0 ? at.formatted(fractionDigits: 3) : at.formatted(fractionDigits: 6)
                let eventID = id ?? derivedID(contents: contents, user: user, at: atText)
                var line = "{\"type\":\"notification\",\"id\":\(JSONValue.quoted(eventID)),\"at\":\"\(atText)\",\"user\":\(JSONValue.quoted(user))"
                if let t = topic ?? bundle.flatMap({ $0.isEmpty ? nil : $0 }) { line += ",\"topic\":\(JSONValue.quoted(t))" }
                line += ",\"payload\":"
                return Array(line.utf8) + payload + [UInt8(ascii: "}")]
            }
        }
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
