import Foundation
import Testing

/// verify reads a duplicate-sort index key's values a page at a time once the key has
/// more than a few: an entry missing from the middle of such a key is still found.
@Suite("verify: index keys with pages of values")
struct VerifyPagesTests {
    /// 1,500 events of one user on one task and thread: `users`, `tasks`, `threads`
    /// and `time` each have a key with 1,500 values (several LMDB pages).
    func store() throws -> TempDir {
        let dir = try TempDir()
        let lines = (1...1500).map { i in
            Line.action(
                "act-\(i)", task: 77, user: "u_pages", at: "2026-11-\(10 + i % 9)T10:00:\(10 + i % 50)Z",
                extra: ",\"thread_id\":\"task-77\"")
        }
        let input = try dir.write("events.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return dir
    }

    @Test("a clean store with many values per key verifies")
    func clean() throws {
        let dir = try store()
        let r = CLI.run(store: dir.store, ["verify", "--json"])
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["events"]?.int == 1500)
    }

    @Test(
        "an entry removed from the middle of a many-valued key is named by its seq",
        arguments: [
            ("users", 1), ("users", 777), ("threads", 1499), ("tasks", 1000), ("time", 640), ("time", 1500),
        ] as [(String, UInt64)])
    func removedEntry(index: String, seq: UInt64) throws {
        let dir = try store()
        let key: [UInt8] =
            switch index {
            case "users": Array("u_pages".utf8)
            case "threads": Array("task-77".utf8)
            case "tasks": withUnsafeBytes(of: (UInt64(77) ^ (1 << 63)).bigEndian) { Array($0) }
            default: [0]
            }
        try Tampering.deleteIndexEntry(dir.store, index: index, key: key, seq: seq)
        let r = CLI.run(store: dir.store, ["verify", "--json"])
        #expect(r.status == 1, "\(r)")
        let json = try r.json()
        #expect(json["first_bad_seq"]?.int == Int(seq), "\(json)")
        #expect(json["reason"]?.string?.contains(index) == true, "\(json)")
    }
}
