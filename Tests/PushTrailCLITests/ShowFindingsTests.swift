import Foundation
import Testing

/// `show` puts one event in its task's story: the state there and the event's findings,
/// the same ones `thread` and `audit` give, whatever the event's type.
@Suite("show: an event's task state and findings, for every type")
struct ShowFindingsTests {
    func store() throws -> TempDir {
        let dir = try TempDir()
        let lines = [
            Line.notification("n-1", thread: "task-5", task: 5, at: "2026-11-20T08:00:00Z"),
            Line.delivery(
                "d-1", notification: "n-1", status: 400, at: "2026-11-20T08:00:01Z",
                extra: ",\"reason\":\"BadDeviceToken\""),
            Line.action("a-1", task: 5, action: "cancel", at: "2026-11-20T09:00:00Z"),
        ]
        let input = try dir.write("events.ndjson", lines: lines)
        guard CLI.run(store: dir.store, ["ingest", input]).status == 0 else { throw HarnessError("seeding failed") }
        return dir
    }

    @Test("a failed delivery shows its task and its delivery_failed finding, as audit lists it")
    func failedDelivery() throws {
        let dir = try store()
        let r = CLI.run(store: dir.store, ["show", "d-1"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("task      5"), "\(r.stdout)")
        let finding = "⚠ delivery_failed: delivery d-1 for notification n-1: APNs answered 400 BadDeviceToken"
        #expect(r.stdout.contains(finding), "\(r.stdout)")
        let audit = try CLI.run(store: dir.store, ["audit", "--json"]).json()
        #expect(audit["findings"]?[0]?["id"]?.string == "d-1", "\(audit)")
        #expect(audit["findings"]?[0]?["code"]?.string == "delivery_failed")
    }

    @Test("an accepted action shows the state it moved the task from and to")
    func transition() throws {
        let dir = try store()
        let r = CLI.run(store: dir.store, ["show", "a-1"])
        #expect(r.stdout.contains("state     active → cancelled"), "\(r.stdout)")
        let n = CLI.run(store: dir.store, ["show", "n-1"])
        #expect(n.stdout.contains("state     active (the task at this point)"), "\(n.stdout)")
    }
}
