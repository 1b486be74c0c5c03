/// A JSON value to write, with object keys in the order given: the stable field
/// order of pushtrail's `--json` output.
public indirect enum JSONValue: Equatable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    /// Text that is already JSON (an event as ingested), written unchanged.
    case raw(String)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }

    public static func == (a: JSONValue, b: JSONValue) -> Bool { a.serialized() == b.serialized() }

    /// An optional string as a string or null.
    public static func string(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    public static func int(_ i: Int?) -> JSONValue { i.map { .int(Int64($0)) } ?? .null }
    public static func uint(_ i: UInt64?) -> JSONValue { i.map { .int(Int64(clamping: $0)) } ?? .null }

    /// Compact JSON text.
    public func serialized() -> String { String(decoding: serializedBytes(), as: UTF8.self) }

    /// Compact JSON text as UTF-8 bytes: what a server sends, without a String between.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(into: &out)
        return out
    }

    public func write(into out: inout [UInt8]) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.quote(k, into: &out)
                out.append(UInt8(ascii: ":"))
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, v) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let s): JSONValue.quote(s, into: &out)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .bool(let b): out.append(contentsOf: b ? JSONValue.trueBytes : JSONValue.falseBytes)
        case .null: out.append(contentsOf: JSONValue.nullBytes)
        case .raw(let r): out.append(contentsOf: r.utf8)
        }
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes `s` as a JSON string literal, in UTF-8.
    public static func quote(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            // Most strings need no escape: append them whole. (0xE2 leads U+2028 and U+2029.)
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F || $0 == 0xE2 }) else {
                out.append(contentsOf: utf8)
                out.append(UInt8(ascii: "\""))
                return
            }
            var i = 0
            while i < utf8.count {
                let byte = utf8[i]
                i += 1
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0..<0x20, 0x7F: escape(UInt32(byte), into: &out)
                case 0xE2 where i + 1 < utf8.count && utf8[i] == 0x80 && (utf8[i + 1] == 0xA8 || utf8[i + 1] == 0xA9):
                    escape(utf8[i + 1] == 0xA8 ? 0x2028 : 0x2029, into: &out)
                    i += 2
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    /// `\uXXXX`, lower-case hex.
    private static func escape(_ value: UInt32, into out: inout [UInt8]) {
        out.append(contentsOf: [0x5C, UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)]) }
    }

    /// `s` as a JSON string literal.
    public static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        quote(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
