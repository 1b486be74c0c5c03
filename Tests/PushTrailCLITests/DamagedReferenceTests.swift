import Foundation
import Testing

/// A rule that looks up another event (the notification an action or delivery names,
/// the answer that declared a device token dead) must fail on a damaged event, never
/// read it as "not found". Each store here is built so that the damaged event is read
/// only by that lookup: no other read of the query would meet the damage first.
@Suite("A damaged event that only a rule's lookup reads fails the query with exit 74")
struct DamagedReferenceTests {
    static let device = "d0d0d0d0aaaabbbbccccddddeeeeffff00001111222233334444555566667777"
    static let n7 = "7c000000-0000-4000-8000-000000000007"
    static let n8 = "8c000000-0000-4000-8000-000000000008"
    static let n9 = "9c000000-0000-4000-8000-000000000009"

    /// Ingests `lines` (seq 1, 2, … in order), then breaks the JSON of event `damaged`
    /// in place through LMDB: its first byte stops being `{`, header and hash kept.
    func store(_ lines: [String], damaging damaged: UInt64) throws -> TempDir {
        let dir = try TempDir()
        let input = try dir.write("events.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        var values = try TamperKit.values(dir.store)
        var value = values[Int(damaged) - 1]
        guard value[Tampering.eventHeaderSize] == UInt8(ascii: "{") else {
            throw HarnessError("event seq \(damaged) is not stored as plain JSON")
        }
        value[Tampering.eventHeaderSize] = UInt8(ascii: "x")
        try TamperKit.put(dir.store, seq: damaged, value)
        values = try TamperKit.values(dir.store)
        #expect(values[Int(damaged) - 1] == value)
        return dir
    }

    /// The query fails with exit 74 and one line naming the damaged seq.
    func expectDamage(_ dir: TempDir, _ argv: [String], seq: UInt64, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let r = CLI.run(store: dir.store, argv)
        #expect(r.status == 74, "\(argv): \(r)", sourceLocation: sourceLocation)
        #expect(
            r.stderr.contains("event seq \(seq) is damaged"), "\(argv): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(argv): \(r.stderr)", sourceLocation: sourceLocation)
    }

    /// An action on task 7 pressed on a notification of task 8 (seq 3, damaged): task 7's
    /// reports read that notification only to ask which buttons it offered.
    func pressOnOtherTasksNotification() throws -> TempDir {
        try store(
            [
                Line.notification(Self.n7, thread: "task-7", task: 7, at: "2026-11-20T08:00:00Z"),
                Line.action(
                    "act-7", task: 7, action: "complete", at: "2026-11-20T09:00:00Z",
                    extra: ",\"notification_id\":\"\(Self.n8)\",\"thread_id\":\"task-7\""),
                Line.notification(Self.n8, thread: "task-8", task: 8, at: "2026-11-20T07:00:00Z"),
            ], damaging: 3)
    }

    @Test("task, thread, show and a scoped audit: the pressed notification is damaged")
    func referencedNotification() throws {
        let dir = try pressOnOtherTasksNotification()
        for argv in [
            ["task", "7"], ["task", "7", "--json"], ["thread", "task-7"], ["show", "act-7"], ["audit", "--task", "7"],
        ] {
            expectDamage(dir, argv, seq: 3)
        }
        // The same store without a lookup of seq 3: answered.
        #expect(CLI.run(store: dir.store, ["log", "--task", "7", "--type", "notification"]).status == 0)
    }

    @Test("task and thread: the answer that declared the device's token dead is damaged")
    func deadTokenAnswer() throws {
        // Task 9's notification goes to a device whose token a 410 (seq 3, for task 8's
        // notification) declared dead an hour before: only the dead-token rule reads it.
        let dir = try store(
            [
                Line.notification(Self.n8, device: Self.device, thread: "task-8", task: 8, at: "2026-11-20T07:00:00Z"),
                Line.notification(Self.n9, device: Self.device, thread: "task-9", task: 9, at: "2026-11-20T09:00:00Z"),
                Line.delivery(
                    "dlv-gone", notification: Self.n8, status: 410, at: "2026-11-20T08:00:00Z",
                    extra: ",\"reason\":\"Unregistered\""),
            ], damaging: 3)
        for argv in [["task", "9"], ["thread", "task-9"], ["show", Self.n9], ["audit", "--task", "9"]] {
            expectDamage(dir, argv, seq: 3)
        }
    }

    @Test("a whole-store audit: a damaged notification named by an earlier action and delivery")
    func wholeAudit() throws {
        // The pass meets the action and the delivery (9:00, 9:10) before the notification
        // they name (9:30): their lookups are the first reads of seq 3.
        let lines = [
            Line.action(
                "act-9", task: 9, action: "complete", at: "2026-11-20T09:00:00Z",
                extra: ",\"notification_id\":\"\(Self.n9)\""),
            Line.delivery("dlv-9", notification: Self.n9, status: 410, at: "2026-11-20T09:10:00Z"),
            Line.notification(Self.n9, thread: "task-9", task: 9, at: "2026-11-20T09:30:00Z"),
        ]
        for argv in [["audit"], ["audit", "--json"], ["audit", "--until", "2026-11-20T10:00:00Z"]] {
            let dir = try store(lines, damaging: 3)
            expectDamage(dir, argv, seq: 3)
        }
        // Past the horizon the notification is not visible, so nothing reads it: answered.
        let dir = try store(lines, damaging: 3)
        let r = CLI.run(store: dir.store, ["audit", "--until", "2026-11-20T09:20:00Z", "--json"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
    }
}
