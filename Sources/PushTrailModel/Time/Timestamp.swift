/// A point in time as microseconds since 1970-01-01T00:00:00Z, the precision the
/// store keeps (finer digits are truncated).
public struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    public static let microsecondsPerSecond: Int64 = 1_000_000
    public static let microsecondsPerDay: Int64 = 86_400_000_000

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the one output format.
    public var description: String { formatted(fractionDigits: 3) }

    /// The time in UTC with 3 (milliseconds) or 6 (microseconds) fraction digits.
    public func formatted(fractionDigits: Int = 3) -> String {
        let (days, rem) = microseconds.quotientAndRemainderFloored(dividingBy: Timestamp.microsecondsPerDay)
        let (y, m, d) = Timestamp.civil(fromDays: days)
        let seconds = rem / Timestamp.microsecondsPerSecond
        let micros = rem % Timestamp.microsecondsPerSecond
        if y >= 0 && y <= 9999 {
            // Every field fits its width: write the digits straight into the string.
            let count = fractionDigits == 6 ? 27 : 24
            return String(unsafeUninitializedCapacity: count) { buffer in
                var i = 0
                func put(_ value: Int64, _ width: Int) {
                    var v = value
                    var k = i + width
                    while k > i {
                        k -= 1
                        buffer[k] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
                        v /= 10
                    }
                    i += width
                }
                func put(_ byte: Unicode.Scalar) {
                    buffer[i] = UInt8(ascii: byte)
                    i += 1
                }
                put(y, 4)
                put("-")
                put(m, 2)
                put("-")
                put(d, 2)
                put("T")
                put(seconds / 3600, 2)
                put(":")
                put(seconds / 60 % 60, 2)
                put(":")
                put(seconds % 60, 2)
                put(".")
                if fractionDigits == 6 { put(micros, 6) } else { put(micros / 1000, 3) }
                put("Z")
                return i
            }
        }
        var out = ""
        out.reserveCapacity(27)
        func pad(_ v: Int64, _ width: Int) {
            let s = String(v)
            if s.count < width { out += String(repeating: "0", count: width - s.count) }
            out += s
        }
        pad(y, 4)
        out += "-"
        pad(m, 2)
        out += "-"
        pad(d, 2)
        out += "T"
        pad(seconds / 3600, 2)
        out += ":"
        pad(seconds / 60 % 60, 2)
        out += ":"
        pad(seconds % 60, 2)
        if fractionDigits == 6 {
            out += "."
            pad(micros, 6)
        } else {
            out += "."
            pad(micros / 1000, 3)
        }
        out += "Z"
        return out
    }

    /// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Parses RFC 3339 (`2026-11-29T10:00:00Z`, `…T10:00:00.123456+02:00`); fraction
    /// digits past the microsecond are truncated. Returns nil with anything else.
    public static func parseRFC3339<Bytes: Collection<UInt8>>(_ text: Bytes) -> Timestamp? where Bytes.Index == Int {
        if let t = text.withContiguousStorageIfAvailable({ parseRFC3339(UnsafeRawBufferPointer($0)) }) { return t }
        return Array(text).withUnsafeBytes { parseRFC3339($0) }
    }

    /// `parseRFC3339` over bytes in place (verify's field scanner reads `at` this way,
    /// straight from a stored record).
    public static func parseRFC3339(_ s: UnsafeRawBufferPointer) -> Timestamp? {
        if s.count == 24, let t = parseCanonical(s) { return t }
        return parseAnyRFC3339(s)
    }

    /// The output format, `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes): what pushtrail writes
    /// and what most producers send. Three loads and word arithmetic check and read
    /// every field; nil for anything else, which `parseAnyRFC3339` then reads (it gives
    /// the same answer for these 24 bytes: `TimestampTests` compares the two).
    static func parseCanonical(_ s: UnsafeRawBufferPointer) -> Timestamp? {
        guard s.count == 24, let p = s.baseAddress else { return nil }
        // Read little endian: the text's first byte is a word's lowest.
        let a = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))  // YYYY-MM-
        let b = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))  // DDTHH:MM
        let c = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self))  // :SS.mmmZ
        let digitsA: UInt64 = 0x00FF_FF00_FFFF_FFFF
        let digitsB: UInt64 = 0xFFFF_00FF_FF00_FFFF
        let digitsC: UInt64 = 0x00FF_FFFF_00FF_FF00
        guard a & ~digitsA == 0x2D00_002D_0000_0000,  // '-' '-'
            b & ~digitsB == 0x0000_3A00_0054_0000,  // 'T' ':'
            c & ~digitsC == 0x5A00_0000_2E00_003A  // ':' '.' 'Z'
        else { return nil }
        // A digit byte is 0x30 + 0...9: its high nibble is 3, and its low nibble plus 6
        // stays below 16 (no carry leaves a byte).
        @inline(__always) func notDigits(_ w: UInt64, _ mask: UInt64) -> UInt64 {
            let high = (w & 0xF0F0_F0F0_F0F0_F0F0) ^ 0x3030_3030_3030_3030
            let low = ((w & 0x0F0F_0F0F_0F0F_0F0F) &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0
            return (high | low) & mask
        }
        guard notDigits(a, digitsA) | notDigits(b, digitsB) | notDigits(c, digitsC) == 0 else { return nil }
        @inline(__always) func digit(_ w: UInt64, _ k: Int) -> Int64 { Int64((w >> (8 * k)) & 0x0F) }
        let year = digit(a, 0) &* 1000 &+ digit(a, 1) &* 100 &+ digit(a, 2) &* 10 &+ digit(a, 3)
        let month = digit(a, 5) &* 10 &+ digit(a, 6)
        let day = digit(b, 0) &* 10 &+ digit(b, 1)
        let hour = digit(b, 3) &* 10 &+ digit(b, 4)
        let minute = digit(b, 6) &* 10 &+ digit(b, 7)
        let second = digit(c, 1) &* 10 &+ digit(c, 2)
        let millis = digit(c, 4) &* 100 &+ digit(c, 5) &* 10 &+ digit(c, 6)
        guard month >= 1, month <= 12, day >= 1, day <= daysInMonth(year, month), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let secs = days(year: year, month: month, day: day) &* 86_400 &+ hour &* 3600 &+ minute &* 60 &+ second
        return Timestamp(microseconds: secs &* microsecondsPerSecond &+ millis &* 1000)
    }

    /// Any RFC 3339 time `parseRFC3339` takes: `t`/`z` in either case, 0–9+ fraction
    /// digits, `Z` or an offset.
    static func parseAnyRFC3339(_ s: UnsafeRawBufferPointer) -> Timestamp? {
        guard s.count >= 20,
            let year = digits(s, 0, 4), s[4] == UInt8(ascii: "-"),
            let month = digits(s, 5, 2), s[7] == UInt8(ascii: "-"),
            let day = digits(s, 8, 2), s[10] | 0x20 == UInt8(ascii: "t"),
            let hour = digits(s, 11, 2), s[13] == UInt8(ascii: ":"),
            let minute = digits(s, 14, 2), s[16] == UInt8(ascii: ":"),
            let second = digits(s, 17, 2)
        else { return nil }
        guard month >= 1, month <= 12, day >= 1, day <= daysInMonth(year, month),
            hour <= 23, minute <= 59, second <= 60  // 60: a leap second, read as the next minute's :00
        else { return nil }
        var i = 19
        var micros: Int64 = 0
        if s[i] == UInt8(ascii: ".") {
            i += 1
            var count = 0
            while i < s.count, s[i] &- UInt8(ascii: "0") < 10 {
                if count < 6 { micros = micros &* 10 &+ Int64(s[i] &- UInt8(ascii: "0")) }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            for _ in Swift.min(count, 6)..<6 { micros *= 10 }
        }
        guard i < s.count else { return nil }
        var offset: Int64 = 0
        if s[i] | 0x20 == UInt8(ascii: "z") {
            i += 1
        } else if s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") {
            guard i + 6 == s.count, let oh = digits(s, i + 1, 2), s[i + 3] == UInt8(ascii: ":"),
                let om = digits(s, i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * 60 * (s[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == s.count else { return nil }
        let days = Timestamp.days(year: year, month: month, day: day)
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Timestamp(microseconds: secs * microsecondsPerSecond + micros)
    }

    /// Parses a date `YYYY-MM-DD` as midnight UTC.
    public static func parseDate(_ text: String) -> Timestamp? {
        Array(text.utf8).withUnsafeBytes { parseDate($0) }
    }

    private static func parseDate(_ s: UnsafeRawBufferPointer) -> Timestamp? {
        guard s.count == 10, let year = digits(s, 0, 4), s[4] == UInt8(ascii: "-"),
            let month = digits(s, 5, 2), s[7] == UInt8(ascii: "-"), let day = digits(s, 8, 2),
            month >= 1, month <= 12, day >= 1, day <= daysInMonth(year, month)
        else { return nil }
        return Timestamp(microseconds: days(year: year, month: month, day: day) * microsecondsPerDay)
    }

    @inline(__always) private static func digits(_ s: UnsafeRawBufferPointer, _ at: Int, _ count: Int) -> Int64? {
        guard at + count <= s.count else { return nil }
        var v: Int64 = 0
        for k in at..<(at + count) {
            let d = s[k] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            v = v &* 10 &+ Int64(d)  // at most four digits: no overflow to check
        }
        return v
    }
}

extension Int64 {
    func quotientAndRemainderFloored(dividingBy d: Int64) -> (Int64, Int64) {
        var (q, r) = quotientAndRemainder(dividingBy: d)
        if r < 0 {
            q -= 1
            r += d
        }
        return (q, r)
    }
}
