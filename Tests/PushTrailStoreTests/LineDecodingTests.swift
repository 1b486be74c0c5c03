import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// The words of the rejections both ingest modes give, byte for byte: they reach
/// `--rejects` files and stderr, and docs/EVENTS.md quotes them.
@Suite("Ingest's line decoding: the rejections' exact words")
struct LineDecodingTests {
    @Test("a line cut by the reader is refused with its length and the limit")
    func truncatedLine() {
        let bytes = [UInt8](repeating: 0x61, count: 70000)
        let line = InputLine(bytes: bytes, number: 3, truncated: true)
        var decoder = EventDecoder()
        guard case .failure(let r) = Ingest.decode(line, source: "in.ndjson", ordinal: 9, decoder: &decoder) else {
            Issue.record("a truncated line decoded")
            return
        }
        #expect(r.reason == "line is over 70000 bytes, far over the limit of 65536 (64 KiB); only its start was read")
        #expect(r.source == "in.ndjson" && r.line == 3 && r.ordinal == 9 && !r.isConflict && r.raw == bytes)
    }

    @Test("a conflict names the id and the stored seq, and keeps a CRLF line's \\r")
    func conflict() throws {
        let line = InputLine(bytes: Fixture.action.bytes + [0x0D], number: 4, truncated: false)
        var decoder = EventDecoder()
        guard case .success(let pending) = Ingest.decode(line, source: "a", ordinal: 2, decoder: &decoder) else {
            Issue.record("a good line was refused")
            return
        }
        let r = Ingest.conflict(pending, 7)
        let expected =
            "id \"act-1\" is already stored as seq 7 with different content (a conflict); give this event a new id"
        #expect(r.reason == expected)
        #expect(r.isConflict && r.line == 4 && r.ordinal == 2 && r.raw == Fixture.action.bytes + [0x0D])
    }
}
