import TestSupport
import Testing

@testable import PushTrailModel

@Suite("Timestamp")
struct TimestampTests {
    func parse(_ text: String) -> Timestamp? { Timestamp.parseRFC3339(Array(text.utf8)) }

    @Test("RFC 3339 times parse to microseconds since the epoch")
    func parsesKnownTimes() {
        #expect(parse("1970-01-01T00:00:00Z") == utcSeconds(0))
        #expect(parse("2026-11-29T10:00:00Z") == utcSeconds(referenceSeconds))
        #expect(parse("2026-01-01T00:00:00Z") == utcSeconds(1_767_225_600))
        #expect(parse("2000-03-01T00:00:00Z") == utcSeconds(951_868_800))
    }

    @Test("an offset is subtracted to give UTC")
    func offsets() {
        #expect(parse("2026-11-29T12:00:00+02:00") == utcSeconds(referenceSeconds))
        #expect(parse("2026-11-29T04:30:00-05:30") == utcSeconds(referenceSeconds))
        #expect(parse("2026-11-29T10:00:00-00:00") == utcSeconds(referenceSeconds))
        #expect(parse("2026-11-30T09:59:00+23:59") == utcSeconds(referenceSeconds))
        #expect(parse("1970-01-01T00:00:00+01:00") == utcSeconds(-3600))
    }

    @Test("fraction digits are kept to the microsecond and finer ones truncated, not rounded")
    func fractions() {
        #expect(parse("2026-11-29T10:00:00.1Z") == utcSeconds(referenceSeconds, micros: 100_000))
        #expect(parse("2026-11-29T10:00:00.123Z") == utcSeconds(referenceSeconds, micros: 123_000))
        #expect(parse("2026-11-29T10:00:00.123456Z") == utcSeconds(referenceSeconds, micros: 123_456))
        #expect(parse("2026-11-29T10:00:00.1234569Z") == utcSeconds(referenceSeconds, micros: 123_456))
        #expect(parse("2026-11-29T10:00:00.9999999999999Z") == utcSeconds(referenceSeconds, micros: 999_999))
        #expect(parse("2026-11-29T12:00:00.000001+02:00") == utcSeconds(referenceSeconds, micros: 1))
    }

    @Test("February 29th exists only in leap years")
    func leapYears() {
        #expect(parse("2024-02-29T12:00:00Z") == utcSeconds(1_709_208_000))
        #expect(parse("2000-02-29T00:00:00Z") == utcSeconds(951_782_400))
        #expect(parse("2024-03-01T00:00:00Z") == utcSeconds(1_709_251_200))
        #expect(parse("2026-02-29T00:00:00Z") == nil)
        #expect(parse("1900-02-29T00:00:00Z") == nil)
        #expect(parse("2100-02-29T00:00:00Z") == nil)
        #expect(parse("2024-02-30T00:00:00Z") == nil)
        #expect(Timestamp.parseDate("2024-02-29") != nil)
        #expect(Timestamp.parseDate("2023-02-29") == nil)
    }

    @Test(
        "malformed times are refused",
        arguments: [
            "", "2026-11-29", "2026-11-29T10:00:00", "2026-11-29 10:00:00Z", "2026-11-29T10:00Z", "26-11-29T10:00:00Z",
            "2026-11-29T10:00:00.Z", "2026-11-29T10:00:00ZZ", "2026-11-29T10:00:00+02", "2026-11-29T10:00:00+0200",
            "2026-11-29T10:00:00+02:60", "2026-11-29T25:00:00Z", "2026-11-29T10:00:61Z", "2026-11-31T10:00:00Z",
            "2026-1-29T10:00:00Z", "2026-11-29T10:00:00.5", "２026-11-29T10:00:00Z", "2026-11-29T10:00:00Z\n",
        ])
    func malformed(_ text: String) {
        #expect(parse(text) == nil)
    }

    @Test("times before 1970 are negative and format back")
    func beforeEpoch() {
        #expect(parse("1969-12-31T23:59:59Z") == utcSeconds(-1))
        #expect(parse("1969-12-31T23:59:59.5Z") == Timestamp(microseconds: -500_000))
        #expect(parse("1900-01-01T00:00:00Z") == utcSeconds(-2_208_988_800))
        #expect(parse("0001-01-01T00:00:00Z") == utcSeconds(-62_135_596_800))
        #expect(Timestamp(microseconds: -500_000).description == "1969-12-31T23:59:59.500Z")
        #expect(Timestamp(microseconds: -1).formatted(fractionDigits: 6) == "1969-12-31T23:59:59.999999Z")
        #expect(utcSeconds(-2_208_988_800).description == "1900-01-01T00:00:00.000Z")
        #expect(utcSeconds(-62_135_596_800).description == "0001-01-01T00:00:00.000Z")
    }

    @Test("output is YYYY-MM-DDTHH:MM:SS.mmmZ in UTC")
    func outputFormat() {
        #expect(utcSeconds(0).description == "1970-01-01T00:00:00.000Z")
        #expect(utcSeconds(referenceSeconds, micros: 7_000).description == "2026-11-29T10:00:00.007Z")
        #expect(utcSeconds(referenceSeconds).formatted() == "2026-11-29T10:00:00.000Z")
        #expect(utcSeconds(253_402_300_799, micros: 999_999).description == "9999-12-31T23:59:59.999Z")
    }

    @Test("millisecond output truncates the microseconds")
    func millisecondTruncation() {
        #expect(Timestamp(microseconds: 123_456_789).description == "1970-01-01T00:02:03.456Z")
        #expect(Timestamp(microseconds: 999_999).description == "1970-01-01T00:00:00.999Z")
        #expect(Timestamp(microseconds: 123_456_789).formatted(fractionDigits: 6) == "1970-01-01T00:02:03.456789Z")
    }

    @Test(
        "formatting then parsing gives back the same text",
        arguments: [
            "2026-11-29T10:00:00.000Z", "2024-02-29T23:59:59.999Z", "1999-12-31T23:59:59.001Z",
            "2000-01-01T00:00:00.000Z",
            "1969-07-20T20:17:40.000Z", "1601-01-01T00:00:00.000Z", "2400-02-29T12:34:56.789Z",
        ])
    func roundTrip(_ text: String) throws {
        let t = try #require(parse(text))
        #expect(t.description == text)
    }

    @Test("microsecond output parses back to the same timestamp")
    func roundTripMicroseconds() throws {
        for micros: Int64 in [
            0, 1, 999_999, 1_795_946_400_123_456, -1, -62_135_596_800_000_000, 253_402_300_799_999_999,
        ] {
            let text = Timestamp(microseconds: micros).formatted(fractionDigits: 6)
            #expect(parse(text) == Timestamp(microseconds: micros), "\(text)")
        }
    }

    @Test("every day from 1600 to 2500, and every 97th day from year 1 to 9999, formats and parses back")
    func everyDayRoundTrips() throws {
        // Days after the epoch: 1600-01-01 is -135,140; 2500-12-31 is 193,943; 0001-01-01 is
        // -719,162; 9999-12-31 is 2,932,896.
        let days =
            Array(stride(from: Int64(-135_140), through: 193_943, by: 1))
            + Array(stride(from: Int64(-719_162), through: 2_932_896, by: 97)) + [2_932_896]
        var failures = 0
        var previous = ""
        for day in days {
            let t = Timestamp(microseconds: day * Timestamp.microsecondsPerDay + 45_296_000_000)  // 12:34:56
            let text = t.description
            let midnight = Timestamp(microseconds: day * Timestamp.microsecondsPerDay)
            let ordered = previous.isEmpty || day == -719_162 || text > previous
            if parse(text) != t || !text.hasSuffix("T12:34:56.000Z") || !ordered
                || Timestamp.parseDate(String(text.prefix(10))) != midnight
            {
                failures += 1
                if failures < 5 { Issue.record("day \(day) formats as \(text) (after \(previous))") }
            }
            previous = text
        }
        #expect(failures == 0)
        #expect(
            Timestamp(microseconds: -135_140 * Timestamp.microsecondsPerDay).description == "1600-01-01T00:00:00.000Z")
        #expect(
            Timestamp(microseconds: 193_943 * Timestamp.microsecondsPerDay).description == "2500-12-31T00:00:00.000Z")
        #expect(previous == "9999-12-31T12:34:56.000Z")
    }

    @Test("the 24-byte fast path reads what the general parser reads, and leaves it everything else")
    func canonicalFastPathAgrees() {
        // Valid and out-of-range fields in the output format, then every position of some
        // of them changed to bytes either side of the digits and separators.
        var texts: [[UInt8]] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        for _ in 0..<20_000 {
            let text =
                "\(pad(next(10_000), 4))-\(pad(next(14), 2))-\(pad(next(33), 2))T\(pad(next(25), 2)):"
                + "\(pad(next(61), 2)):\(pad(next(62), 2)).\(pad(next(1000), 3))Z"
            texts.append(Array(text.utf8))
        }
        for text in [
            "2024-02-29T23:59:60.999Z", "2023-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z",
            "1900-02-29T00:00:00.000Z",
            "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2026-11-29T10:00:00.123Z",
        ] {
            texts.append(Array(text.utf8))
        }
        let replacements: [UInt8] = [
            0x00, 0x20, 0x2D, 0x2E, 0x2F, 0x30, 0x39, 0x3A, 0x3F, 0x40, 0x54, 0x5A, 0x74, 0x7A, 0x96, 0xFF,
        ]
        for base in texts.prefix(200) {
            for k in base.indices {
                for r in replacements where r != base[k] {
                    var changed = base
                    changed[k] = r
                    texts.append(changed)
                }
            }
        }
        var fast = 0
        var mismatches = 0
        for text in texts {
            text.withUnsafeBytes { b in
                let general = Timestamp.parseAnyRFC3339(b)
                if let t = Timestamp.parseCanonical(b) {
                    fast += 1
                    if t != general { mismatches += 1 }
                } else if general != nil && b.last == UInt8(ascii: "Z") && b[10] == UInt8(ascii: "T")
                    && b[19] == UInt8(ascii: ".")
                {
                    mismatches += 1  // a valid time in the output format that the fast path left
                }
                if Timestamp.parseRFC3339(b) != general { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
        #expect(fast > 5_000, "the fast path read \(fast) of \(texts.count)")
    }

    @Test("a date parses as midnight UTC")
    func dates() {
        #expect(Timestamp.parseDate("2026-11-29") == utcSeconds(referenceSeconds - 10 * 3600))
        #expect(Timestamp.parseDate("1970-01-01") == utcSeconds(0))
        #expect(Timestamp.parseDate("2026-13-01") == nil)
        #expect(Timestamp.parseDate("2026-11-29T00:00:00Z") == nil)
        #expect(Timestamp.parseDate("2026/11/29") == nil)
    }

    @Test("timestamps order by time")
    func ordering() {
        #expect(utcSeconds(-1) < utcSeconds(0))
        #expect(utcSeconds(1, micros: 1) > utcSeconds(1))
        #expect(
            [utcSeconds(3), utcSeconds(-5), utcSeconds(1)].sorted() == [utcSeconds(-5), utcSeconds(1), utcSeconds(3)])
    }
}

@Suite("Time expressions")
struct TimeExpressionTests {
    let now = utcSeconds(referenceSeconds, micros: 250_000)

    func parse(_ text: String) throws -> Horizon { try TimeExpression.parse(text, now: now) }

    @Test("an RFC 3339 time is that time")
    func rfc3339() throws {
        #expect(try parse("2026-11-29T10:00:00Z") == .time(utcSeconds(referenceSeconds)))
        #expect(try parse("2026-11-29T12:00:00+02:00") == .time(utcSeconds(referenceSeconds)))
        #expect(try parse("2020-01-01T00:00:00.123456Z") == .time(utcSeconds(1_577_836_800, micros: 123_456)))
    }

    @Test("a date is midnight UTC")
    func date() throws {
        #expect(try parse("2026-11-29") == .time(utcSeconds(referenceSeconds - 36_000)))
        #expect(try parse("2024-02-29") == .time(utcSeconds(1_709_164_800)))
    }

    @Test("now is the injected clock's time")
    func nowIsInjected() throws {
        #expect(try parse("now") == .time(now))
        let other = utcSeconds(42)
        #expect(try TimeExpression.parse("now", now: other) == .time(other))
    }

    @Test("relative times count back from now")
    func relative() throws {
        #expect(try parse("-90s") == .time(Timestamp(microseconds: now.microseconds - 90_000_000)))
        #expect(try parse("-15m") == .time(Timestamp(microseconds: now.microseconds - 900_000_000)))
        #expect(try parse("-2h") == .time(Timestamp(microseconds: now.microseconds - 7_200_000_000)))
        #expect(try parse("-7d") == .time(Timestamp(microseconds: now.microseconds - 604_800_000_000)))
        #expect(try parse("-0s") == .time(now))
        #expect(try parse("-365d") == .time(Timestamp(microseconds: now.microseconds - 31_536_000_000_000)))
    }

    @Test("@SEQ is a sequence horizon")
    func sequence() throws {
        #expect(try parse("@120") == .sequence(120))
        #expect(try parse("@1") == .sequence(1))
        #expect(try parse("@18446744073709551615") == .sequence(UInt64.max))
    }

    @Test(
        "anything else is refused with a message that shows valid forms",
        arguments: [
            "yesterday", "-5x", "@", "@-1", "@abc", "@1.5", "2026-13-01", "2026-02-30", "", "-h", "-2.5h", "- 2h",
            "-2H", "Now", " now", "2h", "-99999999999999999999d", "-106751992d", "2026-11-29T10:00:00",
        ])
    func invalid(_ text: String) throws {
        let error = #expect(throws: TimeExpression.Invalid.self) { try parse(text) }
        #expect(error?.text == text)
        let message = error?.description ?? ""
        #expect(message.contains("\"\(text)\""))
        #expect(message.contains("2026-11-29T10:00:00Z"))
        #expect(message.contains("-2h"))
        #expect(message.contains("@120"))
    }

    @Test("a time-only expression refuses @SEQ but takes every time form")
    func parseTime() throws {
        #expect(throws: TimeExpression.Invalid.self) { try TimeExpression.parseTime("@5", now: now) }
        #expect(
            try TimeExpression.parseTime("-2h", now: now) == Timestamp(microseconds: now.microseconds - 7_200_000_000))
        #expect(try TimeExpression.parseTime("2026-11-29", now: now) == utcSeconds(referenceSeconds - 36_000))
    }

    @Test("a time horizon includes events at or before it, a sequence horizon those up to its seq")
    func horizonIncludes() {
        let t = utcSeconds(referenceSeconds)
        #expect(Horizon.time(t).includes(Position(at: t, seq: 99)))
        #expect(!Horizon.time(t).includes(Position(at: Timestamp(microseconds: t.microseconds + 1), seq: 1)))
        #expect(Horizon.sequence(3).includes(Position(at: utcSeconds(0), seq: 3)))
        #expect(!Horizon.sequence(3).includes(Position(at: utcSeconds(0), seq: 4)))
    }
}
