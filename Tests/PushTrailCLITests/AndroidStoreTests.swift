import Foundation
import Testing

/// Android notifications through the whole tool: ingest, verify, the raw round trip, and
/// the dead-token rule across deliveries, as audit, task and thread each report it.
@Suite("Android notifications in a store")
struct AndroidStoreTests {
    static let token = "cAnDrOiDiNsTaNcE01:APA91bTeStToKeNfOrAnDrOiDsToReTeStS0123456789abcdefghijklmnopqrst"

    static func notification(_ id: String, at: String, category: String = "TASK_ACTIONABLE") -> String {
        #"{"type":"notification","id":""# + id + #"","at":""# + at
            + #"","user":"u_tab","platform":"android","project":"honeydue-prod","payload":{"token":""# + token
            + #"","data":{"task_id":"31","thread_id":"task-31","category":""# + category
            + #"","title":"Clean gutters","body":"Due soon","button_types":"complete,cancel,mark_in_progress","#
            + #""is_premium":"true"},"android":{"priority":"HIGH"}}}"#
    }

    static func delivery(_ id: String, for notification: String, at: String, status: Int, reason: String?) -> String {
        #"{"type":"delivery","id":""# + id + #"","at":""# + at + #"","user":"u_tab","notification_id":""#
            + notification + #"","status":"# + String(status)
            + (reason.map { #","reason":""# + $0 + #"""# } ?? #","message_id":"projects/honeydue-prod/messages/0:1""#)
            + "}"
    }

    /// A notification, FCM's answer to it, and a later notification to the same token.
    static func store(answer status: Int, reason: String?) throws -> TempDir {
        let dir = try TempDir()
        let input = try dir.write(
            "events.ndjson",
            lines: [
                notification("a0000000-0000-4000-8000-000000000001", at: "2026-11-30T08:00:00Z"),
                delivery(
                    "d-1", for: "a0000000-0000-4000-8000-000000000001", at: "2026-11-30T08:00:01Z",
                    status: status, reason: reason),
                notification("a0000000-0000-4000-8000-000000000002", at: "2026-11-30T09:00:00Z"),
            ])
        let ingest = CLI.run(store: dir.store, ["ingest", input])
        guard ingest.status == 0 else { throw HarnessError("ingest failed: \(ingest)") }
        return dir
    }

    /// The codes of each report's findings: audit's and thread task-31's.
    static func codes(_ store: String) throws -> (audit: [String], thread: [String]) {
        let audit = try CLI.run(store: store, ["audit", "--json"]).json()
        let thread = try CLI.run(store: store, ["thread", "task-31", "--json"]).json()
        let auditCodes = ReplayFixtures.elements(audit["findings"]).compactMap { $0["code"]?.string }
        let threadCodes = ReplayFixtures.elements(thread["events"]).flatMap { event in
            ReplayFixtures.elements(event["findings"]).compactMap { $0["code"]?.string }
        }
        return (auditCodes.sorted(), threadCodes.sorted())
    }

    @Test("FCM's 404 UNREGISTERED declares the token dead: the next push is flagged by audit and thread alike")
    func unregistered() throws {
        let dir = try Self.store(answer: 404, reason: "UNREGISTERED")
        let (audit, thread) = try Self.codes(dir.store)
        #expect(audit == ["delivery_failed", "sent_after_unregistered"])
        #expect(thread == audit)
        let message = try CLI.run(store: dir.store, ["audit", "--code", "sent_after_unregistered"]).stdout
        #expect(message.contains("after FCM answered 404 UNREGISTERED for it"), "\(message)")
        #expect(!message.contains(Self.token), "the token is masked")
    }

    @Test("a 404 without UNREGISTERED, or a 400 INVALID_ARGUMENT, fails the delivery but leaves the token alive")
    func otherErrors() throws {
        for (status, reason) in [(404, "NOT_FOUND"), (400, "INVALID_ARGUMENT"), (404, nil as String?)] {
            let dir = try Self.store(answer: status, reason: reason)
            let (audit, thread) = try Self.codes(dir.store)
            #expect(audit == ["delivery_failed"], "\(status) \(reason ?? "-")")
            #expect(thread == audit)
        }
        let accepted = try Self.store(answer: 200, reason: nil)
        #expect(try Self.codes(accepted.store).audit.isEmpty)
    }

    @Test("verify passes, log --raw gives the lines back byte for byte, show masks payload.token")
    func roundTrip() throws {
        let dir = try Self.store(answer: 404, reason: "UNREGISTERED")
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)
        let raw = CLI.run(store: dir.store, ["log", "--raw"])
        #expect(raw.stdoutBytes == (try dir.read("events.ndjson")))
        let show = CLI.run(store: dir.store, ["show", "a0000000-0000-4000-8000-000000000002"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("platform  android"), "\(show)")
        #expect(!show.stdout.contains(Self.token), "\(show)")
        #expect(
            CLI.run(store: dir.store, ["show", "a0000000-0000-4000-8000-000000000002", "--show-tokens"]).stdout
                .contains(Self.token))
    }

    @Test("thread --json entries say the platform and the buttons shown; log and task name the platform")
    func platformShown() throws {
        let dir = try Self.store(answer: 200, reason: nil)
        let thread = try CLI.run(store: dir.store, ["thread", "task-31", "--json"]).json()
        let first = try #require(thread["events"]?[0])
        #expect(first["platform"]?.string == "android")
        #expect(
            ReplayFixtures.elements(first["buttons"]).compactMap(\.string) == [
                "complete", "cancel", "mark_in_progress",
            ])
        let delivery = try #require(thread["events"]?[1])
        #expect(delivery["message_id"]?.string == "projects/honeydue-prod/messages/0:1")
        let log = CLI.run(store: dir.store, ["log"]).stdout
        #expect(log.contains("notification android TASK_ACTIONABLE [complete, cancel, mark_in_progress]"), "\(log)")
        let task = CLI.run(store: dir.store, ["task", "31"]).stdout
        #expect(task.contains("notification android"), "\(task)")
    }
}
