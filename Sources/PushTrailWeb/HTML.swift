/// Text made safe for HTML, and the pieces of a URL made from store values.
public enum HTML {
    /// Escapes text for HTML content and quoted attribute values. Control characters
    /// (but tab and newline), NUL included, are not allowed in HTML text: each becomes
    /// U+FFFD.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if (u.value < 0x20 && u != "\t" && u != "\n") || (0x7F..<0xA0).contains(u.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }

    /// `s` percent-encoded for a URL path segment or a query value: every byte but
    /// the unreserved ones (RFC 3986: letters, digits, `-._~`) as `%XX`, so that no
    /// value can end its segment, start a query, or leave its attribute.
    public static func percentEncoded(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A path and its query (`[(name, value)]`, nil values left out), each part encoded.
    /// A segment of only dots (`.`, `..`) has them encoded too, or browsers would take it
    /// for a step in the path.
    public static func url(_ segments: [String], _ query: [(String, String?)] = []) -> String {
        var out =
            "/"
            + segments.map { s in
                !s.isEmpty && s.utf8.allSatisfy({ $0 == UInt8(ascii: ".") })
                    ? String(repeating: "%2E", count: s.utf8.count) : percentEncoded(s)
            }.joined(separator: "/")
        let pairs = query.compactMap { name, value in value.map { percentEncoded(name) + "=" + percentEncoded($0) } }
        if !pairs.isEmpty { out += "?" + pairs.joined(separator: "&") }
        return out
    }
}

/// Appends markup and escaped text.
struct HTMLBuilder {
    var out = ""
    mutating func raw(_ s: String) { out += s }
    mutating func text(_ s: String) { out += HTML.escape(s) }
    mutating func tag(_ name: String, _ cls: String, _ text: String) {
        raw("<\(name) class=\"\(cls)\">")
        self.text(text)
        raw("</\(name)>\n")
    }
    /// A link to `href` (a URL this module made with `HTML.url`) reading `text`.
    mutating func link(_ href: String, _ text: String, cls: String? = nil) {
        raw("<a href=\"\(HTML.escape(href))\"\(cls.map { " class=\"\($0)\"" } ?? "")>")
        self.text(text)
        raw("</a>")
    }
    mutating func fact(_ name: String, _ value: String) {
        raw("<dt>\(name)</dt><dd>")
        text(value)
        raw("</dd>\n")
    }
    mutating func fact(_ name: String, code: String) {
        raw("<dt>\(name)</dt><dd><code>")
        text(code)
        raw("</code></dd>\n")
    }
}
