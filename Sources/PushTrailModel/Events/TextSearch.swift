/// What `log --grep` and any text search over events match: the event's JSON as
/// ingested, with the escapes in its strings decoded (so `\u00e9` is the `é` it spells),
/// compared without regard to case by Unicode simple case folding (`É` matches `é`, `Σ`
/// matches `σ` and `ς`, ASCII as always).
public struct TextSearch: Sendable {
    /// The folded needle, as UTF-8.
    let needle: [UInt8]
    /// Whether the needle is ASCII: only then can it match an ASCII event.
    let needleIsASCII: Bool

    /// A search for `text`; an empty text matches every event.
    public init(_ text: String) {
        var folded: [UInt8] = []
        folded.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars { TextSearch.appendFolded(scalar, to: &folded) }
        needle = folded
        needleIsASCII = folded.allSatisfy { $0 < 0x80 }
    }

    /// Whether the event whose JSON is `raw` contains the text.
    public func matches(_ raw: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        // Most events are ASCII without escapes: then the bytes are the text, and
        // folding a byte is setting a bit. A non-ASCII needle cannot match them.
        if !raw.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\\") }) {
            return needleIsASCII && TextSearch.contains(raw, needle, foldingASCII: true)
        }
        return TextSearch.contains(TextSearch.foldedText(raw), needle, foldingASCII: false)
    }

    /// `raw` (valid JSON, so its escapes are well formed and its bytes valid UTF-8)
    /// with string escapes decoded and every scalar folded, as UTF-8.
    static func foldedText(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(raw.count)
        var iterator = raw.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let s): scalars.append(s)
            case .emptyInput: break decoding
            case .error: scalars.append("\u{FFFD}")
            }
        }
        var i = 0
        while i < scalars.count {
            let s = scalars[i]
            i += 1
            guard s == "\\", i < scalars.count else {
                appendFolded(s, to: &out)
                continue
            }
            let e = scalars[i]
            i += 1
            switch e {
            case "b": appendFolded("\u{08}", to: &out)
            case "f": appendFolded("\u{0C}", to: &out)
            case "n": appendFolded("\n", to: &out)
            case "r": appendFolded("\r", to: &out)
            case "t": appendFolded("\t", to: &out)
            case "u":
                guard var unit = hex4(scalars, at: i) else {
                    appendFolded(e, to: &out)
                    continue
                }
                i += 4
                // A high surrogate followed by `\uDC00`–`\uDFFF` spells one scalar.
                if (0xD800..<0xDC00).contains(unit), i + 6 <= scalars.count, scalars[i] == "\\", scalars[i + 1] == "u",
                    let low = hex4(scalars, at: i + 2), (0xDC00..<0xE000).contains(low)
                {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                appendFolded(Unicode.Scalar(unit) ?? "\u{FFFD}", to: &out)
            default: appendFolded(e, to: &out)  // \" \\ \/
            }
        }
        return out
    }

    static func hex4(_ scalars: [Unicode.Scalar], at i: Int) -> UInt32? {
        guard i + 4 <= scalars.count else { return nil }
        var v: UInt32 = 0
        for k in i..<(i + 4) {
            guard let d = hexValue(scalars[k]) else { return nil }
            v = v << 4 | d
        }
        return v
    }

    static func hexValue(_ s: Unicode.Scalar) -> UInt32? {
        switch s {
        case "0"..."9": s.value - 0x30
        case "a"..."f": s.value - 0x61 + 10
        case "A"..."F": s.value - 0x41 + 10
        default: nil
        }
    }

    /// Appends the simple case folding of `scalar` as UTF-8: its lowercase when that is
    /// one scalar, with the folds that differ from lowercasing (final sigma, the Greek
    /// symbol variants, the long s, the micro sign, the ypogegrammeni).
    static func appendFolded(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        let v = scalar.value
        if v < 0x80 {
            out.append(UInt8(v) &- 0x41 < 26 ? UInt8(v) | 0x20 : UInt8(v))
            return
        }
        let folded: Unicode.Scalar
        if let special = foldsUnlikeLowercase(v) {
            folded = special
        } else {
            let lower = scalar.properties.lowercaseMapping.unicodeScalars
            folded = lower.count == 1 ? lower.first! : scalar
        }
        out.append(contentsOf: String(folded).utf8)
    }

    /// The simple case folds (Unicode's CaseFolding.txt, status C and S) that are not
    /// the scalar's own lowercase mapping.
    static func foldsUnlikeLowercase(_ v: UInt32) -> Unicode.Scalar? {
        switch v {
        case 0x00B5: "\u{03BC}"  // micro sign → mu
        case 0x017F: "s"  // long s
        case 0x0345, 0x1FBE: "\u{03B9}"  // ypogegrammeni, prosgegrammeni → iota
        case 0x03C2: "\u{03C3}"  // final sigma
        case 0x03D0: "\u{03B2}"
        case 0x03D1: "\u{03B8}"
        case 0x03D5: "\u{03C6}"
        case 0x03D6: "\u{03C0}"
        case 0x03F0: "\u{03BA}"
        case 0x03F1: "\u{03C1}"
        case 0x03F5: "\u{03B5}"
        case 0x1E9B: "\u{1E61}"
        default: nil
        }
    }

    /// Whether `haystack` contains `needle` (non-empty); with `foldingASCII`, the
    /// haystack's ASCII letters are compared lowercased.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8], foldingASCII: Bool) -> Bool {
        guard haystack.count >= needle.count else { return false }
        @inline(__always) func at(_ i: Int) -> UInt8 {
            let b = haystack[i]
            return foldingASCII && b &- 0x41 < 26 ? b | 0x20 : b
        }
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if at(i) == first {
                var k = 1
                while k < needle.count && at(i + k) == needle[k] { k += 1 }
                if k == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}
