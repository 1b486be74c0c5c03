import Foundation
import Testing

/// `log --user U -n N` is the first thing support looks at: the user's last N events,
/// found by the events' headers and read only as far as needed.
@Suite("log --user -n: the user's last events, in timeline order, reading no more than those")
struct LogUserRecentTests {
    /// Ten events of `u_many`, appended in an order unlike their times, and one of
    /// another user; returns the store and the ids in timeline order.
    func store() throws -> (TempDir, [String]) {
        let dir = try TempDir()
        let hours = [5, 1, 9, 3, 7, 0, 8, 2, 6, 4]
        var lines = hours.map { h in
            Line.delivery("d-\(h)", user: "u_many", at: String(format: "2026-11-20T%02d:00:00Z", h))
        }
        lines.insert(Line.delivery("other", user: "u_other", at: "2026-11-20T23:00:00Z"), at: 3)
        let input = try dir.write("events.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return (dir, (0..<10).map { "d-\($0)" })
    }

    func ids(_ r: Outcome) throws -> [String] {
        try r.stdout.split(separator: "\n").map { try JSON.parse(String($0))["event"]?["id"]?.string ?? "?" }
    }

    @Test("the last N in timeline order, and newest first with -r, for every N")
    func lastN() throws {
        let (dir, timeline) = try store()
        for n in [0, 1, 3, 10, 25] {
            let r = CLI.run(store: dir.store, ["log", "--user", "u_many", "--json", "-n", String(n)])
            #expect(r.status == 0, "\(r)")
            #expect(try ids(r) == Array(timeline.suffix(n)), "-n \(n)")
            let newest = CLI.run(store: dir.store, ["log", "--user", "u_many", "--json", "-n", String(n), "-r"])
            #expect(try ids(newest) == Array(timeline.suffix(n).reversed()), "-n \(n) -r")
        }
        let all = CLI.run(store: dir.store, ["log", "--user", "u_many", "--json"])
        #expect(try ids(all) == timeline)
        let since = CLI.run(
            store: dir.store, ["log", "--user", "u_many", "--json", "-n", "2", "--until", "2026-11-20T06:30:00Z"])
        #expect(try ids(since) == ["d-5", "d-6"])
    }

    @Test("the last 3 are answered even when an older event of the user is damaged; the whole list is not")
    func readsOnlyWhatItShows() throws {
        let (dir, _) = try store()
        // d-0, the oldest, is damaged in place.
        var values = try TamperKit.values(dir.store)
        let seq = try #require(values.firstIndex { String(decoding: $0, as: UTF8.self).contains("\"d-0\"") }) + 1
        values[seq - 1][Tampering.eventHeaderSize] = UInt8(ascii: "x")
        try TamperKit.put(dir.store, seq: UInt64(seq), values[seq - 1])
        let recent = CLI.run(store: dir.store, ["log", "--user", "u_many", "--json", "-n", "3"])
        #expect(recent.status == 0, "\(recent)")
        #expect(try ids(recent) == ["d-7", "d-8", "d-9"])
        let whole = CLI.run(store: dir.store, ["log", "--user", "u_many", "--json"])
        #expect(whole.status == 74, "\(whole)")
        #expect(whole.stderr.contains("event seq \(seq) is damaged"), "\(whole.stderr)")
    }
}
