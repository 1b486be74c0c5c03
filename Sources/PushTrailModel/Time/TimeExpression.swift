/// A point of view on the log: a time, or "what the store knew after event N".
public enum Horizon: Equatable, Sendable {
    /// Events with `at` ≤ this time.
    case time(Timestamp)
    /// Events with `seq` ≤ this number.
    case sequence(UInt64)
    /// Events with `at` ≤ the time among those with `seq` ≤ the number: a time horizon
    /// pinned to what the store held then, which events arriving later (with an earlier
    /// `at`) cannot change.
    case pinned(Timestamp, through: UInt64)

    /// Whether an event at `position` is visible from this horizon.
    public func includes(_ position: Position) -> Bool {
        switch self {
        case .time(let t): position.at <= t
        case .sequence(let n): position.seq <= n
        case .pinned(let t, let n): position.at <= t && position.seq <= n
        }
    }
}

/// Parses the time forms every `--at`, `--since` and `--until` accepts.
public enum TimeExpression {
    public static let examples = "2026-11-29T10:00:00Z, 2026-11-29, now, -2h, -7d or @120"

    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public let text: String
        public var description: String {
            "\"\(MessageText.shown(text))\" is not a time; use RFC 3339, a date, now, a relative time or @SEQ, "
                + "e.g. \(TimeExpression.examples)"
        }
    }

    /// Parses `text` relative to `now`: RFC 3339, `YYYY-MM-DD` (midnight UTC), `now`,
    /// `-90s`/`-15m`/`-2h`/`-7d`, or `@SEQ`.
    public static func parse(_ text: String, now: Timestamp) throws(Invalid) -> Horizon {
        if text == "now" { return .time(now) }
        if text.hasPrefix("@") {
            let digits = text.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = UInt64(digits) else {
                throw Invalid(text: text)
            }
            return .sequence(n)
        }
        if text.hasPrefix("-"), let unit = text.last, text.count >= 3 {
            let digits = text.dropFirst().dropLast()
            guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let amount = Int64(digits) else {
                throw Invalid(text: text)
            }
            let seconds: Int64
            switch unit {
            case "s": seconds = 1
            case "m": seconds = 60
            case "h": seconds = 3600
            case "d": seconds = 86_400
            default: throw Invalid(text: text)
            }
            let (product, overflow) = amount.multipliedReportingOverflow(by: seconds * Timestamp.microsecondsPerSecond)
            guard !overflow else { throw Invalid(text: text) }
            return .time(Timestamp(microseconds: now.microseconds - product))
        }
        if let date = Timestamp.parseDate(text) { return .time(date) }
        if let t = Timestamp.parseRFC3339(Array(text.utf8)) { return .time(t) }
        // People leave out the seconds: 2026-11-08T23:59Z.
        var bytes = Array(text.utf8)
        if bytes.count >= 17, bytes[13] == UInt8(ascii: ":"), bytes[16] != UInt8(ascii: ":") {
            bytes.insert(contentsOf: Array(":00".utf8), at: 16)
            if let t = Timestamp.parseRFC3339(bytes) { return .time(t) }
        }
        throw Invalid(text: text)
    }

    /// Like `parse`, but only a time (for places where `@SEQ` means nothing, like the
    /// `at` of an imported file).
    public static func parseTime(_ text: String, now: Timestamp) throws(Invalid) -> Timestamp {
        guard case .time(let t) = try parse(text, now: now) else { throw Invalid(text: text) }
        return t
    }
}
