// A libFuzzer target for the time expressions of --at, --since and --until.
// Built and run by Scripts/fuzz.sh, not by SwiftPM.

import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// 2026-12-01T09:30:00Z: a fixed clock, so a crash replays the same way.
private let now = Timestamp(microseconds: 1_796_117_400_000_000)

/// With `PUSHTRAIL_FUZZ_SKIP_MESSAGES=1` the one-line-message check is skipped, to
/// fuzz on for crashes while a known message bug is open (see Scripts/fuzz.sh).
private let checkMessages = getenv("PUSHTRAIL_FUZZ_SKIP_MESSAGES") == nil

/// Checks, for any text a user can type: parsing never traps; an error is one line
/// that shows a valid form; a time within years 0–9999 prints as RFC 3339 and reads
/// back as the same instant; `parseTime` agrees with `parse`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let horizon: Horizon
    do {
        horizon = try TimeExpression.parse(text, now: now)
    } catch {
        let message = error.description
        require(message.contains(TimeExpression.examples), "the error shows no valid form: \(message.debugDescription)")
        for scalar in message.unicodeScalars where checkMessages && scalar.value < 0x20 {
            require(
                false,
                "the error holds control character U+\(String(scalar.value, radix: 16, uppercase: true)): "
                    + "\(message.debugDescription)"
            )
        }
        require((try? TimeExpression.parseTime(text, now: now)) == nil, "parseTime accepts what parse rejects")
        return 0
    }
    switch horizon {
    case .sequence:
        require((try? TimeExpression.parseTime(text, now: now)) == nil, "parseTime accepts @SEQ")
    case .pinned:
        require(false, "parse made a pinned horizon, which only the site makes (at and through)")
    case .time(let t):
        require((try? TimeExpression.parseTime(text, now: now)) == t, "parseTime and parse disagree")
        // 0000-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z: the years RFC 3339 can write.
        guard t.microseconds >= -62_167_219_200_000_000, t.microseconds < 253_402_300_800_000_000 else { break }
        let printed = t.formatted(fractionDigits: 6)
        guard case .time(let back)? = try? TimeExpression.parse(printed, now: now) else {
            require(false, "\(printed) (from \(text.debugDescription)) does not parse")
            return 0
        }
        require(
            back == t,
            "\(text.debugDescription) prints as \(printed), "
                + "which reads back as \(back.microseconds) µs, not \(t.microseconds)"
        )
    }
    return 0
}

/// Stops the run with `message`: libFuzzer records the input as a crash.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    var text = "TimeExpressionFuzz: \(message())\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    abort()
}
