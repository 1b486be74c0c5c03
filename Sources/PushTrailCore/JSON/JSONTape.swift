/// Why a line is not valid JSON, and where (a byte offset into the line).
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public let offset: Int

    public var description: String { "invalid JSON at byte \(offset + 1): \(message)" }
}

/// One value (or object key) of a parsed document.
///
/// `start..<end` is the value's text in the input: for a string the bytes between
/// its quotes, for anything else the whole lexeme or container including brackets.
/// `next` is the tape index just past this value's subtree, so a reader can skip a
/// value without walking it.
public struct JSONNode: Sendable {
    public enum Kind: UInt8, Sendable {
        case object, array, string, number, bool, null
    }

    public var kind: Kind
    /// For strings: the text contains a backslash escape. For booleans: the value.
    public var flag: Bool
    public var start: Int32
    public var end: Int32
    public var next: Int32
}

/// A validating JSON parser that records the document as a flat tape of nodes.
///
/// It exists because Foundation's `JSONSerialization` is slow (tens of MB/s here) and
/// lenient; this parser is strict RFC 8259 and checks what an audit log must refuse:
/// invalid UTF-8, lone surrogates, control characters, numbers that overflow a double,
/// duplicate object keys, and nesting deeper than `maxDepth` (checked without
/// recursion, so hostile input cannot overflow the stack). It never allocates per
/// value: the tape is reused between lines.
public struct JSONTape: Sendable {
    public private(set) var nodes: [JSONNode] = []
    private var stack: [Int32] = []

    public static let defaultMaxDepth = 64

    public init() {
        nodes.reserveCapacity(256)
        stack.reserveCapacity(64)
    }

    /// Parses `input` as exactly one JSON value (surrounding whitespace allowed).
    public mutating func parse(_ input: UnsafeRawBufferPointer, maxDepth: Int = JSONTape.defaultMaxDepth) throws(JSONError) {
        nodes.removeAll(keepingCapacity: true)
        stack.removeAll(keepingCapacity: true)
        var parser = Parser(bytes: input)
        try parser.run(tape: &self, maxDepth: maxDepth)
    }

    fileprivate mutating func push(_ kind: JSONNode.Kind, flag: Bool = false, start: Int, end: Int) {
        nodes.append(JSONNode(kind: kind, flag: flag, start: Int32(start), end: Int32(end), next: Int32(nodes.count + 1)))
    }

    // MARK: - The parser

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var i = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        @inline(__always) func fail(_ message: String, at offset: Int? = nil) -> JSONError {
            JSONError(message: message, offset: offset ?? i)
        }

        @inline(__always) mutating func skipWhitespace() {
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
            }
        }

        mutating func run(tape: inout JSONTape, maxDepth: Int) throws(JSONError) {
            // Containers under construction: tape index of each open object/array.
            skipWhitespace()
            try value(tape: &tape, maxDepth: maxDepth)
            skipWhitespace()
            if i != bytes.count { throw fail("unexpected \(describe(i)) after the value") }
        }

        func describe(_ at: Int) -> String {
            guard at < bytes.count else { return "end of input" }
            let c = bytes[at]
            if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
            return "byte 0x\(String(c, radix: 16, uppercase: true))"
        }

        /// Parses one value, iteratively: containers are kept on `tape.stack`.
        mutating func value(tape: inout JSONTape, maxDepth: Int) throws(JSONError) {
            // expectingValue: the next token must be a value (after '[', ',' or ':').
            while true {
                // Parse a value at `i`.
                guard i < bytes.count else { throw fail("unexpected end of input, expected a value") }
                let c = bytes[i]
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if tape.stack.count >= maxDepth {
                        throw fail("nesting deeper than \(maxDepth) levels")
                    }
                    let isObject = c == UInt8(ascii: "{")
                    tape.stack.append(Int32(tape.nodes.count))
                    tape.push(isObject ? .object : .array, start: i, end: i)
                    i += 1
                    skipWhitespace()
                    guard i < bytes.count else { throw fail("unexpected end of input in \(isObject ? "object" : "array")") }
                    if bytes[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        try close(tape: &tape)
                        // fall through to "after a value"
                    } else {
                        if isObject { try key(tape: &tape) }
                        continue
                    }
                case UInt8(ascii: "\""):
                    let (start, escaped) = try string()
                    tape.push(.string, flag: escaped, start: start, end: i - 1)
                case UInt8(ascii: "t"):
                    try literal("true")
                    tape.push(.bool, flag: true, start: i - 4, end: i)
                case UInt8(ascii: "f"):
                    try literal("false")
                    tape.push(.bool, flag: false, start: i - 5, end: i)
                case UInt8(ascii: "n"):
                    try literal("null")
                    tape.push(.null, start: i - 4, end: i)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let start = i
                    try number()
                    tape.push(.number, start: start, end: i)
                default:
                    throw fail("unexpected \(describe(i)), expected a value")
                }
                // After a value: close containers or continue with the next member.
                while true {
                    guard let open = tape.stack.last else { return }
                    let isObject = tape.nodes[Int(open)].kind == .object
                    skipWhitespace()
                    guard i < bytes.count else {
                        throw fail("unexpected end of input in \(isObject ? "object" : "array")")
                    }
                    let d = bytes[i]
                    if d == UInt8(ascii: ",") {
                        i += 1
                        skipWhitespace()
                        if isObject { try key(tape: &tape) }
                        break  // parse the next value
                    }
                    if d == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        try close(tape: &tape)
                        continue
                    }
                    throw fail("unexpected \(describe(i)) in \(isObject ? "object, expected ',' or '}'" : "array, expected ',' or ']'")")
                }
                skipWhitespace()
            }
        }

        /// Closes the innermost container: records its extent and checks object keys.
        mutating func close(tape: inout JSONTape) throws(JSONError) {
            let open = Int(tape.stack.removeLast())
            tape.nodes[open].end = Int32(i)
            tape.nodes[open].next = Int32(tape.nodes.count)
            if tape.nodes[open].kind == .object {
                try checkUniqueKeys(tape: &tape, object: open)
            }
        }

        /// An object key, then the ':' before its value.
        mutating func key(tape: inout JSONTape) throws(JSONError) {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describe(i)) in object, expected a key string")
            }
            let (start, escaped) = try string()
            tape.push(.string, flag: escaped, start: start, end: i - 1)
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw fail("unexpected \(describe(i)) after object key, expected ':'")
            }
            i += 1
            skipWhitespace()
        }

        mutating func literal(_ word: StaticString) throws(JSONError) {
            let n = word.utf8CodeUnitCount
            guard i + n <= bytes.count else { throw fail("unexpected \(describe(i)), expected a value") }
            let w = word.utf8Start
            for k in 0..<n where bytes[i + k] != w[k] {
                throw fail("unexpected \(describe(i)), expected a value")
            }
            i += n
        }

        /// A number per RFC 8259; rejects one too large for a double (e.g. 1e999).
        mutating func number() throws(JSONError) {
            let start = i
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit") }
            if bytes[i] == UInt8(ascii: "0") {
                i += 1
                if i < bytes.count, isDigit(bytes[i]) { throw fail("invalid number: leading zero") }
            } else {
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            var simple = i - start <= 15
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit after '.'") }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
                simple = false
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit in the exponent") }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if !simple {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                if let d = Double(text), !d.isFinite {
                    throw fail("number \(text.count > 24 ? String(text.prefix(24)) + "…" : text) is too large", at: start)
                } else if Double(text) == nil {
                    throw fail("invalid number", at: start)
                }
            }
        }

        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

        /// A string starting at the opening quote; returns where its content starts and
        /// whether it holds escapes. Leaves `i` just past the closing quote.
        mutating func string() throws(JSONError) -> (Int, Bool) {
            i += 1
            let start = i
            var escaped = false
            let n = bytes.count
            let base = bytes.baseAddress!
            while true {
                // Eight bytes at a time up to the first that is not plain ASCII: a quote,
                // backslash, control byte or high bit. The lowest flagged byte of a word
                // is exact (a borrow only reaches the bytes above it), so the scan jumps
                // straight to it: a key like "id" takes one step, not one per byte.
                while i + 8 <= n {
                    let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let ones: UInt64 = 0x0101_0101_0101_0101
                    let highs: UInt64 = 0x8080_8080_8080_8080
                    let quote = w ^ (ones &* 0x22)
                    let slash = w ^ (ones &* 0x5C)
                    let special = (((quote &- ones) & ~quote) | ((slash &- ones) & ~slash) | (w &- ones &* 0x20) | w) & highs
                    if special != 0 {
                        i &+= special.trailingZeroBitCount &>> 3
                        break
                    }
                    i &+= 8
                }
                guard i < n else { throw fail("unterminated string", at: start - 1) }
                let c = bytes[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    return (start, escaped)
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                    try escape()
                } else if c < 0x20 {
                    throw fail("control character 0x\(String(c, radix: 16, uppercase: true)) in string (escape it)")
                } else if c < 0x80 {
                    i += 1
                } else {
                    try utf8Sequence()
                }
            }
        }

        /// One backslash escape; a `\u` high surrogate must be followed by a low one.
        mutating func escape() throws(JSONError) {
            let at = i
            i += 1
            guard i < bytes.count else { throw fail("unterminated string") }
            switch bytes[i] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                i += 1
            case UInt8(ascii: "u"):
                i += 1
                let unit = try hex4()
                if unit >= 0xDC00 && unit <= 0xDFFF {
                    throw fail("lone low surrogate \\u\(String(unit, radix: 16, uppercase: true))", at: at)
                }
                if unit >= 0xD800 && unit <= 0xDBFF {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone high surrogate \\u\(String(unit, radix: 16, uppercase: true))", at: at)
                    }
                    i += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low <= 0xDFFF else {
                        throw fail("high surrogate \\u\(String(unit, radix: 16, uppercase: true)) not followed by a low surrogate", at: at)
                    }
                }
            default:
                throw fail("invalid escape \\\(describe(i))", at: at)
            }
        }

        mutating func hex4() throws(JSONError) -> UInt32 {
            guard i + 4 <= bytes.count else { throw fail("unterminated \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard let d = JSONText.hexDigit(bytes[i]) else { throw fail("invalid hex digit in \\u escape") }
                v = v << 4 | UInt32(d)
                i += 1
            }
            return v
        }

        /// A multi-byte UTF-8 sequence: no overlong forms, no surrogates, ≤ U+10FFFF.
        mutating func utf8Sequence() throws(JSONError) {
            let c = bytes[i]
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: throw fail("invalid UTF-8 byte 0x\(String(c, radix: 16, uppercase: true))")
            }
            guard i + length <= bytes.count else { throw fail("truncated UTF-8 sequence") }
            let second = bytes[i + 1]
            guard second >= lower && second <= upper else { throw fail("invalid UTF-8 sequence") }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 {
                throw fail("invalid UTF-8 sequence")
            }
            i += length
        }

        /// Rejects an object with two equal keys (compared after unescaping): which of
        /// them a consumer would use is undefined, and an audit log must not guess.
        func checkUniqueKeys(tape: inout JSONTape, object: Int) throws(JSONError) {
            let end = Int(tape.nodes[object].next)
            var count = 0
            var k = object + 1
            while k < end {
                count += 1
                k = Int(tape.nodes[k + 1].next)
            }
            guard count > 1 else { return }
            if count <= 16 {
                // Keys without escapes are told apart by a print of their length and
                // first eight bytes (equal keys have equal prints); only keys with equal
                // prints are compared byte by byte.
                let clash = withUnsafeTemporaryAllocation(of: (UInt64, Int).self, capacity: 16) { keys -> Int? in
                    var m = 0
                    var k = object + 1
                    while k < end {
                        let node = tape.nodes[k]
                        if node.flag { return -1 }  // an escape: compare unescaped below
                        keys[m] = (keyPrint(node), k)
                        m += 1
                        k = Int(tape.nodes[k + 1].next)
                    }
                    // In the order of the byte-by-byte loop below, so the same key is named.
                    for a in 0..<m {
                        for b in (a + 1)..<m where keys[a].0 == keys[b].0 {
                            if JSONText.stringsEqual(tape.nodes[keys[a].1], tape.nodes[keys[b].1], in: bytes) { return keys[b].1 }
                        }
                    }
                    return nil
                }
                guard let clash else { return }
                if clash >= 0 { throw duplicate(tape.nodes[clash]) }
            }
            if count <= 16 {
                var a = object + 1
                while a < end {
                    var b = Int(tape.nodes[a + 1].next)
                    while b < end {
                        if JSONText.stringsEqual(tape.nodes[a], tape.nodes[b], in: bytes) {
                            throw duplicate(tape.nodes[b])
                        }
                        b = Int(tape.nodes[b + 1].next)
                    }
                    a = Int(tape.nodes[a + 1].next)
                }
            } else {
                var seen = Set<[UInt8]>(minimumCapacity: count)
                var key = object + 1
                while key < end {
                    let node = tape.nodes[key]
                    if !seen.insert(JSONText.unescaped(node, in: bytes)).inserted { throw duplicate(node) }
                    key = Int(tape.nodes[key + 1].next)
                }
            }
        }

        /// The length and first eight bytes of a key without escapes, in one word.
        @inline(__always) func keyPrint(_ node: JSONNode) -> UInt64 {
            let start = Int(node.start)
            let length = Int(node.end) - start
            var w: UInt64 = 0
            if start + 8 <= bytes.count {
                w = UInt64(littleEndian: bytes.baseAddress!.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                if length < 8 { w &= (1 &<< (UInt64(length) &* 8)) &- 1 }
            } else {
                for k in 0..<min(length, 8) { w |= UInt64(bytes[start + k]) &<< (UInt64(k) &* 8) }
            }
            return w ^ (UInt64(length) &* 0x9E37_79B9_7F4A_7C15)
        }

        func duplicate(_ node: JSONNode) -> JSONError {
            let name = MessageText.shown(JSONText.string(node, in: bytes))
            return JSONError(message: "duplicate key \"\(name)\" in object", offset: Int(node.start) - 1)
        }
    }
}
