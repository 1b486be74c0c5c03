/// String helpers over validated JSON text (the tape guarantees escapes and UTF-8
/// are well formed, so nothing here can fail).
@usableFromInline package enum JSONText {
    /// The value of one hexadecimal digit (either case), or nil.
    @inline(__always) package static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The integer spelled by `bytes[range]` (an optional `-`, then digits only) when
    /// it fits in 64 bits; nil for a fraction, an exponent or an overflow.
    package static func int64(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int64? {
        var i = range.lowerBound
        let end = range.upperBound
        guard i < end else { return nil }
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < end else { return nil }
        var magnitude: UInt64 = 0
        while i < end {
            let d = bytes[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            magnitude = a
            i += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// The bytes of a string node after unescaping.
    package static func unescaped(_ node: JSONNode, in bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
        guard node.flag else { return Array(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let c = raw[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(raw, i)
                i += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    let low = hex4(raw, i + 2)
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                let s = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: String(Character(s)).utf8)
            default: out.append(e)  // \" \\ \/
            }
        }
        return out
    }

    private static func hex4(_ raw: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in at..<(at + 4) {
            let c = raw[k]
            let d: UInt8 = c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : (c | 0x20) - UInt8(ascii: "a") + 10
            v = v << 4 | UInt32(d)
        }
        return v
    }

    package static func string(_ node: JSONNode, in bytes: UnsafeRawBufferPointer) -> String {
        if !node.flag {
            return String(
                decoding: UnsafeRawBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
        }
        return String(decoding: unescaped(node, in: bytes), as: UTF8.self)
    }

    package static func stringsEqual(_ a: JSONNode, _ b: JSONNode, in bytes: UnsafeRawBufferPointer) -> Bool {
        stringsEqual(a, in: bytes, b, in: bytes)
    }

    package static func stringsEqual(
        _ a: JSONNode, in ab: UnsafeRawBufferPointer, _ b: JSONNode, in bb: UnsafeRawBufferPointer
    ) -> Bool {
        if !a.flag && !b.flag {
            let la = Int(a.end - a.start)
            guard la == Int(b.end - b.start) else { return false }
            return la == 0 || memcmpEqual(ab.baseAddress! + Int(a.start), bb.baseAddress! + Int(b.start), la)
        }
        return unescaped(a, in: ab) == unescaped(b, in: bb)
    }

    /// Whether a plain (unescaped) string node equals `literal`.
    package static func equals(_ node: JSONNode, _ literal: StaticString, in bytes: UnsafeRawBufferPointer) -> Bool {
        let n = literal.utf8CodeUnitCount
        if node.flag {
            return unescaped(node, in: bytes).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: n))
        }
        guard Int(node.end - node.start) == n else { return false }
        return n == 0 || memcmpEqual(bytes.baseAddress! + Int(node.start), UnsafeRawPointer(literal.utf8Start), n)
    }

    /// Whether `bytes` are exactly the literal's.
    @inlinable package static func bytesEqual(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount
            && (bytes.count == 0 || memcmpEqual(bytes.baseAddress!, UnsafeRawPointer(literal.utf8Start), bytes.count))
    }

    // Inlinable: the store's scanner compares member names with it in its hot loop.
    @inlinable @inline(__always)
    package static func memcmpEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        var k = 0
        while k + 8 <= n {
            if a.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            {
                return false
            }
            k += 8
        }
        while k < n {
            if a.load(fromByteOffset: k, as: UInt8.self) != b.load(fromByteOffset: k, as: UInt8.self) { return false }
            k += 1
        }
        return true
    }
}

/// Read access to a parsed document: the tape plus the bytes it indexes. Valid only
/// while both are.
public struct JSONView {
    public let nodes: UnsafeBufferPointer<JSONNode>
    public let bytes: UnsafeRawBufferPointer

    public init(nodes: UnsafeBufferPointer<JSONNode>, bytes: UnsafeRawBufferPointer) {
        self.nodes = nodes
        self.bytes = bytes
    }

    /// The root value's index.
    public var root: Int { 0 }

    @inline(__always) public func kind(_ index: Int) -> JSONNode.Kind { nodes[index].kind }
    /// The tape index just past the value at `index` and everything in it: in an array,
    /// the next element's.
    @inline(__always) func end(of index: Int) -> Int { Int(nodes[index].next) }

    /// The value of member `name` of the object at `object`, or nil.
    public func member(_ object: Int, _ name: StaticString) -> Int? {
        guard nodes[object].kind == .object else { return nil }
        let end = Int(nodes[object].next)
        var k = object + 1
        while k < end {
            if JSONText.equals(nodes[k], name, in: bytes) { return k + 1 }
            k = Int(nodes[k + 1].next)
        }
        return nil
    }

    /// The members of the object at `object` as (key index, value index) pairs, in order.
    public func members(_ object: Int) -> [(key: Int, value: Int)] {
        // Labelled as returned: an array of unlabelled pairs would be cast element by
        // element on return.
        var out: [(key: Int, value: Int)] = []
        forEachMember(object) { out.append((key: $0, value: $1)) }
        return out
    }

    /// Calls `body` with each member of the object at `object` as (key index, value
    /// index), in order, without building an array.
    @inlinable public func forEachMember(_ object: Int, _ body: (_ key: Int, _ value: Int) throws -> Void) rethrows {
        let end = Int(nodes[object].next)
        var k = object + 1
        while k < end {
            try body(k, k + 1)
            k = Int(nodes[k + 1].next)
        }
    }

    /// The elements of the array at `array`, in order.
    public func elements(_ array: Int) -> [Int] {
        var out: [Int] = []
        let end = Int(nodes[array].next)
        var k = array + 1
        while k < end {
            out.append(k)
            k = Int(nodes[k].next)
        }
        return out
    }

    /// The string at `index` (unescaped), or nil when it is not a string.
    public func string(_ index: Int) -> String? {
        guard nodes[index].kind == .string else { return nil }
        return JSONText.string(nodes[index], in: bytes)
    }

    /// The unescaped bytes of the string at `index`.
    public func stringBytes(_ index: Int) -> [UInt8] {
        JSONText.unescaped(nodes[index], in: bytes)
    }

    /// Lends the unescaped bytes of the string at `index`: where they lie when it has no
    /// escapes, a copy otherwise.
    public func withStringBytes<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let node = nodes[index]
        if node.flag { return try JSONText.unescaped(node, in: bytes).withUnsafeBytes(body) }
        return try body(UnsafeRawBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]))
    }

    /// The byte length of the string at `index` after unescaping.
    public func stringLength(_ index: Int) -> Int {
        let node = nodes[index]
        return node.flag ? JSONText.unescaped(node, in: bytes).count : Int(node.end - node.start)
    }

    public func bool(_ index: Int) -> Bool? {
        nodes[index].kind == .bool ? nodes[index].flag : nil
    }

    /// The number at `index` when it is an integer (no fraction or exponent) that fits
    /// in 64 bits.
    public func int64(_ index: Int) -> Int64? {
        let node = nodes[index]
        guard node.kind == .number else { return nil }
        return JSONText.int64(bytes, Int(node.start)..<Int(node.end))
    }

    /// The value's text exactly as in the input (strings with their quotes).
    public func rawText(_ index: Int) -> UnsafeRawBufferPointer {
        let node = nodes[index]
        let quote = node.kind == .string ? 1 : 0
        return UnsafeRawBufferPointer(rebasing: bytes[(Int(node.start) - quote)..<(Int(node.end) + quote)])
    }

    /// The value's text as a String (for numbers, literals and nested JSON).
    public func rawString(_ index: Int) -> String {
        String(decoding: rawText(index), as: UTF8.self)
    }

    /// How many bytes the value takes with the whitespace outside strings removed:
    /// the size APNs counts for a payload. Counted from the tape, not the text: each
    /// token's span as written (a string's escapes included), two brackets per
    /// container and the separators between its children; a payload has tens of nodes
    /// against hundreds of bytes.
    public func compactSize(_ index: Int) -> Int {
        let node = nodes[index]
        switch node.kind {
        case .string: return Int(node.end - node.start) + 2
        case .number, .bool, .null: return Int(node.end - node.start)
        case .array:
            var size = 2
            var count = 0
            var k = index + 1
            while k < Int(node.next) {
                size += compactSize(k)
                count += 1
                k = Int(nodes[k].next)
            }
            return size + max(count - 1, 0)  // commas
        case .object:
            var size = 2
            var count = 0
            var k = index + 1
            while k < Int(node.next) {
                size += compactSize(k) + 1 + compactSize(k + 1)  // key, colon, value
                count += 1
                k = Int(nodes[k + 1].next)
            }
            return size + max(count - 1, 0)  // commas
        }
    }

    /// Whether two values are equal as JSON values: objects as unordered maps, arrays
    /// in order, strings after unescaping, numbers by their exact decimal value.
    public static func equal(_ a: JSONView, _ ai: Int, _ b: JSONView, _ bi: Int) -> Bool {
        let na = a.nodes[ai]
        let nb = b.nodes[bi]
        guard na.kind == nb.kind else { return false }
        switch na.kind {
        case .null: return true
        case .bool: return na.flag == nb.flag
        case .string: return JSONText.stringsEqual(na, in: a.bytes, nb, in: b.bytes)
        case .number: return DecimalNumber(a.rawText(ai)) == DecimalNumber(b.rawText(bi))
        case .array:
            let ea = a.elements(ai)
            let eb = b.elements(bi)
            guard ea.count == eb.count else { return false }
            return zip(ea, eb).allSatisfy { equal(a, $0, b, $1) }
        case .object:
            let ma = a.members(ai)
            let mb = b.members(bi)
            guard ma.count == mb.count else { return false }
            // Keys are unique (the parser refuses duplicates), so matching each key of
            // `a` in `b` is enough.
            for (ka, va) in ma {
                guard
                    let (_, vb) = mb.first(where: {
                        JSONText.stringsEqual(a.nodes[ka], in: a.bytes, b.nodes[$0.key], in: b.bytes)
                    }),
                    equal(a, va, b, vb)
                else { return false }
            }
            return true
        }
    }
}

/// A JSON number reduced to sign, significant digits and exponent, so that `1.50e2`
/// and `150` compare equal without the rounding of a double.
struct DecimalNumber: Equatable {
    var negative = false
    var digits: [UInt8] = []
    var exponent = 0

    init(_ text: UnsafeRawBufferPointer) {
        var i = 0
        if text[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var fractionDigits = 0
        var inFraction = false
        while i < text.count {
            let c = text[i]
            if c == UInt8(ascii: ".") {
                inFraction = true
            } else if c | 0x20 == UInt8(ascii: "e") {
                break
            } else {
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c) }
                if inFraction { fractionDigits += 1 }
            }
            i += 1
        }
        var exp = 0
        if i < text.count {
            i += 1
            var expNegative = false
            if text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") {
                expNegative = text[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < text.count {
                exp = Swift.min(exp * 10 + Int(text[i] - UInt8(ascii: "0")), 1 << 40)
                i += 1
            }
            if expNegative { exp = -exp }
        }
        exponent = exp - fractionDigits
        while let last = digits.last, last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
    }
}

extension JSONView {
    /// The value's text with the whitespace outside strings removed: one line, same
    /// value, strings and numbers exactly as written.
    public func compactText(_ index: Int) -> [UInt8] {
        let raw = rawText(index)
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        var inString = false
        var i = 0
        while i < raw.count {
            let c = raw[i]
            if inString {
                out.append(c)
                if c == UInt8(ascii: "\\") {
                    out.append(raw[i + 1])
                    i += 2
                    continue
                }
                if c == UInt8(ascii: "\"") { inString = false }
            } else if c == UInt8(ascii: "\"") {
                inString = true
                out.append(c)
            } else if !(c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09) {
                out.append(c)
            }
            i += 1
        }
        return out
    }
}
