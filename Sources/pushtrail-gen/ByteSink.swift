#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The output buffer: events are appended as bytes and written in ~1 MiB chunks, so the
/// hot loop never touches `String` or the C library except for the periodic `fwrite`.
struct ByteSink {
    static let chunk = 1 << 20
    /// Room past the chunk size for the line being written (lines stay far below this).
    static let slack = 1 << 17

    let base: UnsafeMutablePointer<UInt8>
    var count = 0
    let file: UnsafeMutablePointer<FILE>
    private(set) var failed = false
    /// "000102…ff": two hex digits per byte value.
    private let hexPairs: UnsafeMutablePointer<UInt8>
    /// "0001…99": two decimal digits per value below 100.
    private let decimalPairs: UnsafeMutablePointer<UInt8>
    /// `YYYY-MM-DDT` of `cachedDay`, so most timestamps skip the calendar arithmetic.
    private let dayPrefix: UnsafeMutablePointer<UInt8>
    private var cachedDay = Int.min

    init(file: UnsafeMutablePointer<FILE>) {
        self.file = file
        base = .allocate(capacity: Self.chunk + Self.slack)
        let digits = Array("0123456789abcdef".utf8)
        hexPairs = .allocate(capacity: 512)
        for value in 0..<256 {
            hexPairs[2 * value] = digits[value >> 4]
            hexPairs[2 * value + 1] = digits[value & 15]
        }
        decimalPairs = .allocate(capacity: 200)
        for value in 0..<100 {
            decimalPairs[2 * value] = UInt8(48 + value / 10)
            decimalPairs[2 * value + 1] = UInt8(48 + value % 10)
        }
        dayPrefix = .allocate(capacity: 11)
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        base[count] = value
        count += 1
    }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer in
            (base + count).update(from: buffer.baseAddress!, count: buffer.count)
            count += buffer.count
        }
    }

    @inline(__always)
    mutating func bytes(_ source: UnsafePointer<UInt8>, _ length: Int) {
        (base + count).update(from: source, count: length)
        count += length
    }

    @inline(__always)
    mutating func int(_ value: Int) {
        var v = value
        if v < 0 {
            byte(45)
            v = -v
        }
        if v < 10 {
            byte(UInt8(48 + v))
            return
        }
        var digits = 0
        var probe = v
        while probe > 0 {
            digits += 1
            probe /= 10
        }
        var at = count + digits - 1
        while v > 0 {
            base[at] = UInt8(48 + v % 10)
            v /= 10
            at -= 1
        }
        count += digits
    }

    /// `value` in decimal, zero-padded to `width` digits.
    @inline(__always)
    mutating func padded(_ value: Int, width: Int) {
        var v = value
        var at = count + width - 1
        while at >= count {
            base[at] = UInt8(48 + v % 10)
            v /= 10
            at -= 1
        }
        count += width
    }

    /// The low `digits` hex digits of `value` (`digits` is even).
    @inline(__always)
    mutating func hex(_ value: UInt64, digits: Int) {
        var v = value
        var at = count + digits - 2
        while at >= count {
            let pair = hexPairs + 2 * Int(v & 0xFF)
            base[at] = pair[0]
            base[at + 1] = pair[1]
            v >>= 8
            at -= 2
        }
        count += digits
    }

    @inline(__always)
    private mutating func twoDigits(_ value: Int) {
        let pair = decimalPairs + 2 * value
        base[count] = pair[0]
        base[count + 1] = pair[1]
        count += 2
    }

    /// A lowercase UUID, `8-4-4-4-12`.
    @inline(__always)
    mutating func uuid(_ high: UInt64, _ low: UInt64) {
        hex(high >> 32, digits: 8)
        byte(45)
        hex(high >> 16, digits: 4)
        byte(45)
        hex(high, digits: 4)
        byte(45)
        hex(low >> 48, digits: 4)
        byte(45)
        hex(low, digits: 12)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    @inline(__always)
    mutating func timestamp(_ ms: Int) {
        let day = CivilCalendar.day(ofMilliseconds: ms)
        if day != cachedDay {
            let start = count
            isoDate(day)
            byte(84)
            dayPrefix.update(from: base + start, count: 11)
            count = start
            cachedDay = day
        }
        bytes(dayPrefix, 11)
        var rest = ms - day * CivilCalendar.msPerDay
        twoDigits(rest / 3_600_000)
        rest %= 3_600_000
        byte(58)
        twoDigits(rest / 60_000)
        rest %= 60_000
        byte(58)
        twoDigits(rest / 1000)
        byte(46)
        rest %= 1000
        byte(UInt8(48 + rest / 100))
        twoDigits(rest % 100)
        byte(90)
    }

    /// `YYYY-MM-DD`.
    @inline(__always)
    mutating func isoDate(_ day: Int) {
        let date = CivilCalendar.civil(day)
        padded(date.year, width: 4)
        byte(45)
        padded(date.month, width: 2)
        byte(45)
        padded(date.day, width: 2)
    }

    /// `Wed, Nov 4`, the way the app's notification bodies show dates.
    mutating func displayDate(_ day: Int) {
        let date = CivilCalendar.civil(day)
        let weekday = CivilCalendar.weekday(day)
        let weekdays: StaticString = "SunMonTueWedThuFriSat"
        weekdays.withUTF8Buffer { p in bytes(p.baseAddress! + weekday * 3, 3) }
        byte(44)
        byte(32)
        let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
        months.withUTF8Buffer { p in bytes(p.baseAddress! + (date.month - 1) * 3, 3) }
        byte(32)
        int(date.day)
    }

    @inline(__always)
    mutating func flushIfFull() {
        if count >= Self.chunk { flush() }
    }

    mutating func flush() {
        guard count > 0 else { return }
        if !failed {
            let written = fwrite(base, 1, count, file)
            if written != count { failed = true }
        }
        count = 0
    }
}
