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

    /// `text` on one line: each control character (C0, DEL, C1) shown as `␣`, the rest unchanged.
    public static func oneLine(_ s: String) -> String {
        // Almost every string is clean: C0 controls and DEL are single bytes, and C1
        // controls (U+0080–U+009F) start with 0xC2, so one byte scan decides.
        guard s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }) else { return s }
        return String(
            String.UnicodeScalarView(
                s.unicodeScalars.map {
                    $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) ? "␣" : $0
                }))
    }
}
