/// A JSON value read by the tests themselves, independently of pushtrail's
/// parser, so that a bug there cannot hide itself. Objects keep their key order
/// (for "keys in original order" checks) but compare as unordered maps, which is
/// what "equal as a JSON value" means for events.
indirect enum JSON: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// The number as written; compared by value.
    case number(String)
    case string(String)
    case array([JSON])
    case object([(key: String, value: JSON)])

    struct Malformed: Error, CustomStringConvertible {
        let message: String
        var description: String { "test JSON parser: \(message)" }
    }

    static func parse(_ text: String) throws -> JSON { try parse(Array(text.utf8)) }

    static func parse(_ bytes: [UInt8]) throws -> JSON {
        var parser = Parser(bytes: bytes)
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.i == bytes.count else { throw Malformed(message: "trailing bytes at \(parser.i)") }
        return value
    }

    /// Every non-empty line of an NDJSON text, parsed.
    static func lines(_ text: String) throws -> [JSON] {
        try text.split(separator: "\n").filter { !$0.isEmpty }.map { try parse(String($0)) }
    }

    static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y || (Double(x) != nil && Double(x) == Double(y))
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { member in y.contains { $0.key == member.key && $0.value == member.value } }
        default: return false
        }
    }

    subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members.first { $0.key == key }?.value }
        return nil
    }

    subscript(index: Int) -> JSON? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var int: Int? {
        if case .number(let n) = self { return Int(n) }
        return nil
    }

    var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The keys of an object, in their order in the text.
    var keys: [String] {
        if case .object(let members) = self { return members.map(\.key) }
        return []
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let n): return n
        case .string(let s): return "\"\(s)\""
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let m): return "{" + m.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        mutating func skipWhitespace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        mutating func value() throws -> JSON {
            skipWhitespace()
            guard i < bytes.count else { throw Malformed(message: "unexpected end") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var members: [(key: String, value: JSON)] = []
                skipWhitespace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    let key = try string()
                    skipWhitespace()
                    try expect(":")
                    members.append((key, try value()))
                    skipWhitespace()
                    if try separator(close: "}") { return .object(members) }
                }
            case UInt8(ascii: "["):
                i += 1
                var elements: [JSON] = []
                skipWhitespace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(elements)
                }
                while true {
                    elements.append(try value())
                    skipWhitespace()
                    if try separator(close: "]") { return .array(elements) }
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                let start = i
                while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
                guard i > start else { throw Malformed(message: "unexpected byte \(bytes[i]) at \(i)") }
                return .number(String(decoding: bytes[start..<i], as: UTF8.self))
            }
        }

        mutating func separator(close: Character) throws -> Bool {
            guard i < bytes.count else { throw Malformed(message: "unexpected end") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                return false
            }
            try expect(close)
            return true
        }

        mutating func expect(_ c: Character) throws {
            guard i < bytes.count, bytes[i] == c.asciiValue! else { throw Malformed(message: "expected \(c) at \(i)") }
            i += 1
        }

        mutating func literal(_ word: String) throws {
            let w = Array(word.utf8)
            guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else {
                throw Malformed(message: "expected \(word) at \(i)")
            }
            i += w.count
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16)
            else {
                throw Malformed(message: "bad \\u escape at \(i)")
            }
            i += 4
            return v
        }

        mutating func string() throws -> String {
            try expect("\"")
            var out: [UInt8] = []
            while true {
                guard i < bytes.count else { throw Malformed(message: "unterminated string") }
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
                guard c == UInt8(ascii: "\\") else {
                    out.append(c)
                    continue
                }
                guard i < bytes.count else { throw Malformed(message: "unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
                        bytes[i + 1] == UInt8(ascii: "u")
                    {
                        i += 2
                        let low = try hex4()
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    out += Array(String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
                default: out.append(e)
                }
            }
        }
    }
}
