import Foundation
import Testing

@Suite("verify: the chain and the indexes, tampered with through LMDB")
struct VerifyTests {
    /// A store of `count` events over three users, built in-process (every handle is
    /// closed when this returns).
    func store(count: Int = 10) throws -> TempDir {
        let dir = try TempDir()
        let lines = (1...count).map { i -> String in
            switch i % 3 {
            case 0:
                return Line.notification(
                    String(format: "00000000-0000-4000-8000-%012d", i), user: "u\(i % 3)", thread: "task-\(i)", task: i,
                    at: "2026-11-\(10 + i % 9)T10:00:00Z")
            case 1: return Line.action("act-\(i)", task: i, user: "u\(i % 3)", at: "2026-11-\(10 + i % 9)T10:00:00Z")
            default: return Line.delivery("dlv-\(i)", user: "u\(i % 3)", at: "2026-11-\(10 + i % 9)T10:00:00Z")
            }
        }
        let input = try dir.write("events.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return dir
    }

    func verify(_ dir: TempDir) throws -> (Outcome, JSON) {
        let r = CLI.run(store: dir.store, ["verify", "--json"])
        return (r, try r.json())
    }

    @Test("a clean store verifies: exit 0, ok true, events and head equal to head --json")
    func clean() throws {
        let dir = try store()
        let (r, json) = try verify(dir)
        #expect(r.status == 0, "\(r)")
        #expect(json["ok"]?.bool == true)
        #expect(json["events"]?.int == 10)
        #expect(json["head"] == (try CLI.head(dir.store)))
        #expect(json["first_bad_seq"] == nil)
        #expect(json["reason"] == nil)
        let text = CLI.run(store: dir.store, ["verify"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("ok"))
    }

    @Test("an empty store verifies")
    func empty() throws {
        let dir = try TempDir()
        let input = try dir.write("bad.ndjson", lines: ["nope"])
        _ = CLI.run(store: dir.store, ["ingest", "--strict", input])
        let (r, json) = try verify(dir)
        #expect(r.status == 0)
        #expect(json["events"]?.int == 0)
    }

    @Test("one byte changed in a stored event's JSON: exit 1 naming that seq", arguments: [1, 4, 10] as [UInt64])
    func changedByte(seq: UInt64) throws {
        let dir = try store()
        let before = try #require(try Tampering.value(dir.store, seq: seq))
        let offset = try Tampering.rewriteUserByte(dir.store, seq: seq)
        let after = try #require(try Tampering.value(dir.store, seq: seq))
        #expect(before.count == after.count)
        #expect(zip(before, after).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset) == [offset])

        let (r, json) = try verify(dir)
        #expect(r.status == 1, "\(r)")
        #expect(json["ok"]?.bool == false)
        #expect(json["first_bad_seq"]?.int == Int(seq))
        #expect(json["reason"]?.string?.isEmpty == false)
        let text = CLI.run(store: dir.store, ["verify"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("seq \(seq)"), "\(text)")
    }

    @Test("a deleted event is detected at its seq", arguments: [1, 5, 10] as [UInt64])
    func deletedEvent(seq: UInt64) throws {
        let dir = try store()
        try Tampering.deleteEvent(dir.store, seq: seq)
        let (r, json) = try verify(dir)
        #expect(r.status == 1, "\(r)")
        #expect(json["ok"]?.bool == false)
        #expect(json["first_bad_seq"]?.int == Int(seq))
    }

    @Test("two events swapped are detected at the first of them")
    func reordered() throws {
        let dir = try store()
        try Tampering.swapEvents(dir.store, 3, 6)
        let (r, json) = try verify(dir)
        #expect(r.status == 1)
        #expect(json["first_bad_seq"]?.int == 3)
    }

    @Test("a users index entry removed is detected with its event's seq")
    func removedUserEntry() throws {
        let dir = try store()
        // Event 5 is a delivery for user u2 (5 % 3 == 2).
        try Tampering.deleteIndexEntry(dir.store, index: "users", key: Array("u2".utf8), seq: 5)
        let (r, json) = try verify(dir)
        #expect(r.status == 1, "\(r)")
        #expect(json["ok"]?.bool == false)
        #expect(json["first_bad_seq"]?.int == 5)
        #expect(json["reason"]?.string?.contains("users") == true, "\(json)")
    }

    @Test("a threads index entry removed is detected with its event's seq")
    func removedThreadEntry() throws {
        let dir = try store()
        try Tampering.deleteIndexEntry(dir.store, index: "threads", key: Array("task-6".utf8), seq: 6)
        let (r, json) = try verify(dir)
        #expect(r.status == 1, "\(r)")
        #expect(json["first_bad_seq"]?.int == 6)
    }

    @Test("an id entry removed is detected with its event's seq")
    func removedID() throws {
        let dir = try store()
        try Tampering.deleteID(dir.store, id: "act-7")
        let (r, json) = try verify(dir)
        #expect(r.status == 1, "\(r)")
        #expect(json["first_bad_seq"]?.int == 7)
    }

    @Test("verify of a tampered store exits 1 from the real process too")
    func tamperedThroughBinary() throws {
        let dir = try store()
        try Tampering.rewriteUserByte(dir.store, seq: 2)
        let r = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(r.status == 1, "\(r)")
        #expect(try r.json()["first_bad_seq"]?.int == 2)
    }
}
