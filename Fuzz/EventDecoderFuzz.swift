// A libFuzzer target for the event decoder: one input is one NDJSON line.
// Built and run by Scripts/fuzz.sh, not by SwiftPM.

import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// With `PUSHTRAIL_FUZZ_SKIP_MESSAGES=1` the one-line-message check is skipped, to
/// fuzz on for crashes while a known message bug is open (see Scripts/fuzz.sh).
private let checkMessages = getenv("PUSHTRAIL_FUZZ_SKIP_MESSAGES") == nil

/// Checks, for any bytes, what ingest and the reading commands rely on: decoding never
/// traps; ingest's lean decoder and the full one agree on what they accept and why;
/// a rejection's reason fits on one line; and any JSON the tape accepts keeps its
/// value when compacted, so an event reads the same however it was spaced.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = UnsafeRawBufferPointer(start: data, count: size)
    var lean = EventDecoder()
    var full = EventDecoder()
    let leanResult = Result { () throws(InvalidEvent) -> FilingEvent in try lean.decodeForFiling(line) }
    let fullResult = Result { () throws(InvalidEvent) -> Event in try full.decode(line) }

    switch (leanResult, fullResult) {
    case (.success(let a), .success(let b)):
        require(a == b.filing, "lean and full decoders file the event differently")
    case (.failure(let a), .failure(let b)):
        require(a.reason == b.reason, "lean and full decoders give different reasons: \(a.reason) | \(b.reason)")
        if checkMessages { requireOneLine(a.reason) }
    case (.success, .failure(let b)):
        require(false, "ingest accepts a line that the full decoder rejects: \(b.reason)")
    case (.failure(let a), .success):
        require(false, "ingest rejects a line that the full decoder accepts: \(a.reason)")
    }

    roundTripCompactText(line, accepted: try? fullResult.get())
    return 0
}

/// Parses `line` as JSON; when it is valid, its compact text must parse to an equal
/// value, compact to itself, and (for an event) decode to the same envelope.
private func roundTripCompactText(_ line: UnsafeRawBufferPointer, accepted: Event?) {
    var tape = JSONTape()
    guard (try? tape.parse(line)) != nil else {
        require(accepted == nil, "the decoder accepts a line that is not valid JSON")
        return
    }
    let compact: [UInt8] = tape.nodes.withUnsafeBufferPointer { JSONView(nodes: $0, bytes: line).compactText(0) }
    compact.withUnsafeBytes { compactBytes in
        var again = JSONTape()
        do {
            try again.parse(compactBytes)
        } catch {
            require(false, "compactText gives invalid JSON: \(error)")
        }
        tape.nodes.withUnsafeBufferPointer { a in
            again.nodes.withUnsafeBufferPointer { b in
                let original = JSONView(nodes: a, bytes: line)
                let compacted = JSONView(nodes: b, bytes: compactBytes)
                require(JSONView.equal(original, 0, compacted, 0), "compactText changes the value")
                require(JSONView.equal(compacted, 0, original, 0), "JSONView.equal is not symmetric")
                require(compacted.compactText(0) == compact, "compactText is not idempotent")
            }
        }
        guard let accepted, line.count <= EventDecoder.maxLineBytes else { return }
        var decoder = EventDecoder()
        guard let event = try? decoder.decode(compactBytes) else {
            require(false, "an accepted event is rejected once compacted")
            return
        }
        require(
            event.id == accepted.id && event.at == accepted.at && event.user == accepted.user
                && event.device == accepted.device && event.type == accepted.type && event.taskID == accepted.taskID
                && event.threadID == accepted.threadID
                && event.referencedNotificationID == accepted.referencedNotificationID
                && event.identityKey == accepted.identityKey,
            "an event decodes differently once compacted")
    }
}

/// A reason is printed as `pushtrail: FILE:LINE: reason`: one line, nothing a terminal
/// would act on.
private func requireOneLine(_ reason: String) {
    require(!reason.isEmpty, "an empty reason")
    for scalar in reason.unicodeScalars where scalar.value < 0x20 {
        require(
            false,
            "reason holds control character U+\(String(scalar.value, radix: 16, uppercase: true)): "
                + "\(reason.debugDescription)"
        )
    }
}

/// Stops the run with `message`: libFuzzer records the input as a crash.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    var text = "EventDecoderFuzz: \(message())\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    abort()
}
