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

    package init(kind: Kind, flag: Bool, start: Int32, end: Int32, next: Int32) {
        self.kind = kind
        self.flag = flag
        self.start = start
        self.end = end
        self.next = next
    }
}

/// A validating JSON parser that records the document as a flat tape of nodes.
///
/// It exists because Foundation's `JSONSerialization` is slow (tens of MB/s here) and
/// lenient; this parser is strict RFC 8259 and checks what an audit log must refuse:
/// invalid UTF-8, lone surrogates, control characters, numbers that overflow a double,
/// duplicate object keys, and nesting deeper than `maxDepth` (checked without
/// recursion, so hostile input cannot overflow the stack). It never allocates per
/// value, nor per document once it has parsed one as long: the tape is reused.
public struct JSONTape: Sendable {
    /// The nodes of the last document parsed, the root first.
    public var nodes: ArraySlice<JSONNode> { storage[..<count] }
    /// Room for a node per byte of the longest document parsed (each node starts at a
    /// byte of its own), written through a pointer: appending to an array checks its
    /// uniqueness and capacity for every value (docs/PERFORMANCE.md).
    private var storage: [JSONNode] = []
    private var count = 0

    public static let defaultMaxDepth = 64

    public init() {}

    /// Parses `input` as exactly one JSON value (surrounding whitespace allowed).
    public mutating func parse(_ input: UnsafeRawBufferPointer, maxDepth: Int = JSONTape.defaultMaxDepth)
        throws(JSONError)
    {
        count = 0
        if storage.count < input.count {
            storage += repeatElement(
                JSONNode(kind: .null, flag: false, start: 0, end: 0, next: 0), count: input.count - storage.count)
        }
        var failure: JSONError?
        storage.withUnsafeMutableBufferPointer { nodes in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: maxDepth + 1) { stack in
                var parser = Parser(bytes: input, nodes: nodes.baseAddress, stack: stack.baseAddress!)
                do throws(JSONError) {
                    try parser.run(maxDepth: maxDepth)
                    count = parser.count
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    // MARK: - The parser

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var i = 0
        /// Room for a node per input byte.
        let nodes: UnsafeMutablePointer<JSONNode>?
        var count = 0
        /// The tape index of each open container, innermost last; room for `maxDepth`.
        let stack: UnsafeMutablePointer<Int32>
        var depth = 0

        init(bytes: UnsafeRawBufferPointer, nodes: UnsafeMutablePointer<JSONNode>?, stack: UnsafeMutablePointer<Int32>)
        {
            self.bytes = bytes
            self.nodes = nodes
            self.stack = stack
        }

        /// The node at tape index `k` (one already pushed).
        @inline(__always) func node(_ k: Int) -> JSONNode { nodes.unsafelyUnwrapped[k] }

        @inline(__always) mutating func push(_ kind: JSONNode.Kind, flag: Bool = false, start: Int, end: Int) {
            // Each node starts at a byte of its own, so `count` stays below the room.
            (nodes.unsafelyUnwrapped + count).initialize(
                to: JSONNode(kind: kind, flag: flag, start: Int32(start), end: Int32(end), next: Int32(count + 1)))
            count += 1
        }

        @inline(__always) func fail(_ message: String, at offset: Int? = nil) -> JSONError {
            JSONError(message: message, offset: offset ?? i)
        }

        @inline(__always) mutating func skipWhitespace() {
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
            }
        }

        mutating func run(maxDepth: Int) throws(JSONError) {
            skipWhitespace()
            try value(maxDepth: maxDepth)
            skipWhitespace()
            if i != bytes.count { throw fail("unexpected \(describe(i)) after the value") }
        }

        func describe(_ at: Int) -> String {
            guard at < bytes.count else { return "end of input" }
            let c = bytes[at]
            if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
            return "byte 0x\(String(c, radix: 16, uppercase: true))"
        }

        /// Parses one value, iteratively: containers are kept on `stack`.
        mutating func value(maxDepth: Int) throws(JSONError) {
            // expectingValue: the next token must be a value (after '[', ',' or ':').
            while true {
                // Parse a value at `i`.
                guard i < bytes.count else { throw fail("unexpected end of input, expected a value") }
                let c = bytes[i]
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if depth >= maxDepth {
                        throw fail("nesting deeper than \(maxDepth) levels")
                    }
                    let isObject = c == UInt8(ascii: "{")
                    stack[depth] = Int32(count)
                    depth += 1
                    push(isObject ? .object : .array, start: i, end: i)
                    i += 1
                    skipWhitespace()
                    guard i < bytes.count else {
                        throw fail("unexpected end of input in \(isObject ? "object" : "array")")
                    }
                    if bytes[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        try close()
                        // fall through to "after a value"
                    } else {
                        if isObject { try key() }
                        continue
                    }
                case UInt8(ascii: "\""):
                    let (start, escaped) = try string()
                    push(.string, flag: escaped, start: start, end: i - 1)
                case UInt8(ascii: "t"):
                    try literal("true")
                    push(.bool, flag: true, start: i - 4, end: i)
                case UInt8(ascii: "f"):
                    try literal("false")
                    push(.bool, flag: false, start: i - 5, end: i)
                case UInt8(ascii: "n"):
                    try literal("null")
                    push(.null, start: i - 4, end: i)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let start = i
                    try number()
                    push(.number, start: start, end: i)
                default:
                    throw fail("unexpected \(describe(i)), expected a value")
                }
                // After a value: close containers or continue with the next member.
                while true {
                    guard depth > 0 else { return }
                    let isObject = node(Int(stack[depth - 1])).kind == .object
                    skipWhitespace()
                    guard i < bytes.count else {
                        throw fail("unexpected end of input in \(isObject ? "object" : "array")")
                    }
                    let d = bytes[i]
                    if d == UInt8(ascii: ",") {
                        i += 1
                        skipWhitespace()
                        if isObject { try key() }
                        break  // parse the next value
                    }
                    if d == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        try close()
                        continue
                    }
                    throw fail(
                        """
                        unexpected \(describe(i)) in \
                        \(isObject ? "object, expected ',' or '}'" : "array, expected ',' or ']'")
                        """
                    )
                }
                skipWhitespace()
            }
        }

        /// Closes the innermost container: records its extent and checks object keys.
        mutating func close() throws(JSONError) {
            depth -= 1
            let open = Int(stack[depth])
            nodes.unsafelyUnwrapped[open].end = Int32(i)
            nodes.unsafelyUnwrapped[open].next = Int32(count)
            if node(open).kind == .object {
                try checkUniqueKeys(object: open)
            }
        }

        /// An object key, then the ':' before its value.
        mutating func key() throws(JSONError) {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describe(i)) in object, expected a key string")
            }
            let (start, escaped) = try string()
            push(.string, flag: escaped, start: start, end: i - 1)
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
                guard i < bytes.count, isDigit(bytes[i]) else {
                    throw fail("invalid number: expected a digit after '.'")
                }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
                simple = false
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard i < bytes.count, isDigit(bytes[i]) else {
                    throw fail("invalid number: expected a digit in the exponent")
                }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if !simple {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                if let d = Double(text), !d.isFinite {
                    throw fail(
                        "number \(text.count > 24 ? String(text.prefix(24)) + "…" : text) is too large", at: start)
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
                    let special =
                        (((quote &- ones) & ~quote) | ((slash &- ones) & ~slash) | (w &- ones &* 0x20) | w) & highs
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
                        throw fail(
                            """
                            high surrogate \\u\(String(unit, radix: 16, uppercase: true)) not followed by \
                            a low surrogate
                            """,
                            at: at)
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
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
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
        func checkUniqueKeys(object: Int) throws(JSONError) {
            let end = Int(node(object).next)
            var count = 0
            var k = object + 1
            while k < end {
                count += 1
                k = Int(node(k + 1).next)
            }
            guard count > 1 else { return }
            if count <= 16 {
                // Keys without escapes are told apart by a print of their length and
                // first eight bytes (equal keys have equal prints); only keys with equal
                // prints are compared byte by byte. A word with a bit per print (chosen
                // by its hash) settles most objects in one pass: only a key whose bit is
                // taken is compared with the prints before it.
                let clash = withUnsafeTemporaryAllocation(of: (UInt64, Int).self, capacity: 16) { keys -> Int? in
                    var m = 0
                    var k = object + 1
                    var taken: UInt64 = 0
                    var equalPrints = false
                    while k < end {
                        let key = node(k)
                        if key.flag { return -1 }  // an escape: compare unescaped below
                        let print = keyPrint(key)
                        let bit: UInt64 = 1 &<< ((print &* 0x9E37_79B9_7F4A_7C15) &>> 58)
                        if taken & bit != 0 && !equalPrints {
                            for a in 0..<m where keys[a].0 == print { equalPrints = true }
                        }
                        taken |= bit
                        keys[m] = (print, k)
                        m += 1
                        k = Int(node(k + 1).next)
                    }
                    guard equalPrints else { return nil }
                    // In the order of the byte-by-byte loop below, so the same key is named.
                    for a in 0..<m {
                        for b in (a + 1)..<m where keys[a].0 == keys[b].0 {
                            if JSONText.stringsEqual(node(keys[a].1), node(keys[b].1), in: bytes) { return keys[b].1 }
                        }
                    }
                    return nil
                }
                guard let clash else { return }
                if clash >= 0 { throw duplicate(node(clash)) }
            }
            if count <= 16 {
                var a = object + 1
                while a < end {
                    var b = Int(node(a + 1).next)
                    while b < end {
                        if JSONText.stringsEqual(node(a), node(b), in: bytes) {
                            throw duplicate(node(b))
                        }
                        b = Int(node(b + 1).next)
                    }
                    a = Int(node(a + 1).next)
                }
            } else {
                var seen = Set<[UInt8]>(minimumCapacity: count)
                var key = object + 1
                while key < end {
                    let keyNode = node(key)
                    if !seen.insert(JSONText.unescaped(keyNode, in: bytes)).inserted { throw duplicate(keyNode) }
                    key = Int(node(key + 1).next)
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
