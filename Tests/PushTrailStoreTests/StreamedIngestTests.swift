import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// A body arrives in pieces of any size (the server's POSTs): wherever the pieces end,
/// the lines, and so what is stored and refused, are the same.
@Suite("Streamed ingest")
struct StreamedIngestTests {
    /// The sample events with a blank line, a CRLF line, a line that is not JSON and
    /// one over the longest line a body keeps (1 MiB), in among them.
    static func body() throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Samples/events.ndjson"), encoding: .utf8)
        var lines = text.split(separator: "\n").map { Array($0.utf8) }
        lines.insert([], at: 3)
        lines.insert(Array("   \r".utf8), at: 10)
        lines[20] += [0x0D]
        lines.insert(Array("{not json".utf8), at: 30)
        lines.insert([UInt8](repeating: 0x41, count: (1 << 20) + 100), at: 40)
        return Array(lines.joined(separator: [0x0A]))
    }

    /// What a store answers after `pieces` are fed in turn: the outcome, and every
    /// stored event's bytes.
    static func ingest(_ pieces: [ArraySlice<UInt8>], into path: String) throws -> (String, [[UInt8]]) {
        var options = StoreOptions()
        options.noSync = true
        let store = try Store(path: path, create: true, options: options)
        let ingest = StreamedIngest(store: store, strict: false)
        for piece in pieces {
            _ = Array(piece).withUnsafeBytes { ingest.feed($0) }
        }
        let outcome = try ingest.finish(recordedAt: fixedClock)
        let rejects = outcome.rejects.map { "\($0.line) \($0.reason)" }
        let stored = try store.read { reader in
            try (1...max(1, outcome.summary.appended)).compactMap { try reader.event(seq: UInt64($0))?.raw }
        }
        return ("\(outcome.summary) \(rejects)", stored)
    }

    @Test("a body fed in pieces of any size stores and refuses what it does whole")
    func piecesOfAnySize() throws {
        let body = try StreamedIngestTests.body()
        try withTemporaryDirectory { dir throws in
            let whole = try StreamedIngestTests.ingest([body[...]], into: dir + "/whole")
            #expect(whole.1.count > 200)
            #expect(whole.0.contains("rejected: 2"), "\(whole.0)")
            var rng = SplitMix(seed: 0x11)
            for round in 0..<4 {
                // Pieces of 1 byte up to a few KiB, and one ending at every line break.
                var pieces: [ArraySlice<UInt8>] = []
                var start = 0
                while start < body.count {
                    var size = Int.random(in: 1...(round == 1 ? 3 : 5000), using: &rng)
                    if round == 0 {
                        size = body[start...].firstIndex(of: 0x0A).map { $0 - start + 1 } ?? body.count - start
                    }
                    pieces.append(body[start..<min(start + size, body.count)])
                    start += size
                }
                let fed = try StreamedIngestTests.ingest(pieces, into: dir + "/pieces\(round)")
                #expect(fed.0 == whole.0, "round \(round)")
                #expect(fed.1 == whole.1, "round \(round)")
            }
        }
    }
}
