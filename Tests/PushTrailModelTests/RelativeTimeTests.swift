import PushTrailModel
import TestSupport
import Testing

@Suite("relative times")
struct RelativeTimeTests {
    static let anchor = Timestamp(microseconds: 1_795_000_000_000_000)

    static func at(_ offset: Int64) -> Timestamp { Timestamp(microseconds: anchor.microseconds + offset) }

    static let day: Int64 = 86_400_000_000
    static let hour: Int64 = 3_600_000_000
    static let minute: Int64 = 60_000_000
    static let second: Int64 = 1_000_000
    static let cases: [(Int64, String)] = [
        (-3 * day, "3 days before"),
        (-(3 * day + 4 * hour + 59 * minute), "3 days 4 hours before"),
        (day + 3 * minute, "1 day after"),  // no "1 day 3 minutes"
        (hour + minute + second, "1 hour 1 minute after"),
        (45 * second, "45 seconds after"),
        (-1_500_000, "1.5 seconds before"),
        (-1_000_000, "1 second before"),
        (37_000, "0.037 seconds after"),
        (250_000, "0.25 seconds after"),
        (-499, "at the same moment"),
        (0, "at the same moment"),
    ]

    @Test("two adjacent units at most, truncated, singular and plural", arguments: cases)
    func describe(offset: Int64, expected: String) {
        #expect(RelativeTime.describe(Self.at(offset), relativeTo: Self.anchor) == expected)
    }

    @Test("durations")
    func durations() {
        #expect(RelativeTime.duration(0) == nil)
        #expect(RelativeTime.duration(1_000) == "0.001 seconds")
        #expect(RelativeTime.duration(59_999_000) == "59.999 seconds")
        #expect(RelativeTime.duration(60_000_000) == "1 minute")
        #expect(RelativeTime.duration(2 * 3_600_000_000 + 5 * 60_000_000) == "2 hours 5 minutes")
        #expect(RelativeTime.duration(400 * 86_400_000_000 + 1) == "400 days")
    }
}
