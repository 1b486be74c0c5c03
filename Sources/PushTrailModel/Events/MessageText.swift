/// Text from input, made safe to quote in a one-line message: control characters
/// (C0, DEL, C1) become U+FFFD, so no input can break the line or drive the terminal,
/// and long text is cut.
public enum MessageText {
    public static func shown(_ text: String, limit: Int = 40) -> String {
        var flat = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            flat.append(v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v) ? "\u{FFFD}" : scalar)
        }
        let s = String(flat)
        return s.count > limit ? String(s.prefix(limit)) + "…" : s
    }
}
