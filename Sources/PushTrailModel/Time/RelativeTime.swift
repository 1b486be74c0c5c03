/// Time between two events in words, for human views: "3 days before", "2 hours
/// 5 minutes after". Two units at most, truncated, so a reader sees the scale at once.
public enum RelativeTime {
    /// `at` relative to `anchor`: "3 days 4 hours before", "45 seconds after", or
    /// "at the same moment" when they are within half a millisecond.
    public static func describe(_ at: Timestamp, relativeTo anchor: Timestamp) -> String {
        let delta = at.microseconds - anchor.microseconds
        let span = duration(delta.magnitude)
        guard let span else { return "at the same moment" }
        return span + (delta < 0 ? " before" : " after")
    }

    /// A duration in words: "3 days 4 hours", "5 minutes 3 seconds", and under a
    /// minute seconds to the millisecond ("2.5 seconds", "0.037 seconds"); nil under a
    /// millisecond.
    public static func duration(_ microseconds: UInt64) -> String? {
        let milliseconds = (microseconds + 500) / 1000
        guard milliseconds > 0 else { return nil }
        guard microseconds >= 60_000_000 else {
            let text = seconds(milliseconds: milliseconds)
            return text + (text == "1" ? " second" : " seconds")
        }
        var rest = microseconds
        var text = ""
        var parts = 0
        for unit in 0..<4 {
            let size = unitSizes[unit]
            let n = rest / size
            rest %= size
            if n > 0 {
                // Built by hand: joined(separator:) runs unspecialised and costs a
                // runtime conformance scan the first time.
                if parts > 0 { text += " " }
                text += String(n) + " " + unitNames[unit] + (n == 1 ? "" : "s")
                parts += 1
            }
            // Two units at most, and only adjacent ones: "1 day 3 minutes" misleads.
            if parts > 0 && (parts == 2 || n == 0) { break }
        }
        return text
    }

    private static let unitSizes: [UInt64] = [86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000]
    private static let unitNames = ["day", "hour", "minute", "second"]

    /// Seconds with up to three decimals: "10", "0.037", "1.5".
    public static func seconds(milliseconds: UInt64) -> String {
        var digits = String(milliseconds % 1000)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return digits.isEmpty ? "\(milliseconds / 1000)" : "\(milliseconds / 1000).\(digits)"
    }
}
