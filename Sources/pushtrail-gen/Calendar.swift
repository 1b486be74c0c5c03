/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01),
/// after Howard Hinnant's `days_from_civil` / `civil_from_days`.
enum CivilCalendar {
    static let msPerDay = 86_400_000

    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    @inline(__always)
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// 0 = Sunday.
    @inline(__always)
    static func weekday(_ days: Int) -> Int {
        let w = (days + 4) % 7
        return w < 0 ? w + 7 : w
    }

    @inline(__always)
    static func day(ofMilliseconds ms: Int) -> Int {
        ms >= 0 ? ms / msPerDay : (ms - msPerDay + 1) / msPerDay
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Parses `YYYY-MM-DD` or RFC 3339 (`Z` or `±HH:MM`, optional fraction) into
    /// milliseconds since the epoch; nil when it is not one of those.
    static func parseTimestamp(_ text: String) -> Int? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var value = 0
            for i in at..<at + count {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard b.count >= 10, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
            let day = digits(8, 2), (1...12).contains(month), day >= 1,
            day <= daysInMonth(year: year, month: month)
        else { return nil }
        var ms = days(year: year, month: month, day: day) * msPerDay
        if b.count == 10 { return ms }
        guard b.count >= 20, b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = digits(11, 2), b[13] == 58,
            let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2), hour < 24, minute < 60,
            second < 61
        else { return nil }
        ms += (hour * 3600 + minute * 60 + second) * 1000
        var i = 19
        if b[i] == 46 {
            i += 1
            var fraction = 0
            var scale = 100
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Int(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
            ms += fraction
        }
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            return i + 1 == b.count ? ms : nil
        }
        guard b[i] == 43 || b[i] == 45, i + 6 == b.count, let oh = digits(i + 1, 2), b[i + 3] == 58,
            let om = digits(i + 4, 2), oh < 24, om < 60
        else { return nil }
        let offset = (oh * 60 + om) * 60_000
        return b[i] == 43 ? ms - offset : ms + offset
    }
}
