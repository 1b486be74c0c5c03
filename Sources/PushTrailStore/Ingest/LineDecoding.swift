import PushTrailModel

/// Turns one input line into an event to append or a rejection, and an append's
/// conflict into a rejection: shared by the pipelined and the strict ingest, so that
/// both refuse the same lines with the same words.
extension Ingest {
    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    static func decode(
        _ line: InputLine, source: String, ordinal: Int = 0, decoder: inout EventDecoder
    ) -> Result<PendingEvent, Rejection> {
        let content = line.content
        if line.truncated {
            return .failure(
                Rejection(
                    source: source, line: line.number,
                    reason: """
                        line is over \(line.bytes.count) bytes, far over the limit of \(EventDecoder.maxLineBytes) \
                        (64 KiB); only its start was read
                        """,
                    raw: line.bytes, isConflict: false, ordinal: ordinal))
        }
        do {
            let event = try decoder.decodeForFiling(content)
            // The line's own array when it has no `\r` to drop: no copy.
            let raw = line.hasCarriageReturn ? Array(content) : line.bytes
            var pending = PendingEvent(event: event, raw: raw, source: source, line: line.number)
            pending.ordinal = ordinal
            pending.hadCarriageReturn = line.hasCarriageReturn
            return .success(pending)
        } catch {
            return .failure(
                Rejection(
                    source: source, line: line.number, reason: InvalidEvent.from(error).reason, raw: line.bytes,
                    isConflict: false, ordinal: ordinal))
        }
    }

    static func conflict(_ pending: PendingEvent, _ seq: UInt64) -> Rejection {
        Rejection(
            source: pending.source, line: pending.line,
            reason: """
                id "\(EventDecoder.shown(pending.event.id))" is already stored as seq \(seq) with different \
                content (a conflict); give this event a new id
                """,
            raw: pending.hadCarriageReturn ? pending.raw + [0x0D] : pending.raw, isConflict: true,
            ordinal: pending.ordinal)
    }
}
