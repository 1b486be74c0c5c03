import Foundation
import PushTrailCLI
import PushTrailModel
import PushTrailStore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Event lines, stores and an in-process runner with a chosen clock, for the replay
/// command tests (`task`, `thread`, `log`, `export`).
enum ReplayFixtures {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The clock the runner uses unless a test picks another: 2026-12-01T09:30:00Z.
    static let defaultClock = Timestamp(microseconds: 1_796_117_400_000_000)

    /// Runs `pushtrail --store STORE argv…` in-process with `clock` as the time.
    static func run(
        _ store: String, _ argv: [String], clock: Timestamp = defaultClock, environment: [String: String] = [:]
    ) -> Outcome {
        let out = PushTrailCLI.OutputStream()
        let err = PushTrailCLI.OutputStream()
        let context = Context(stdout: out, stderr: err, environment: environment, clock: { clock })
        let status = PushTrail.main(["--store", store] + argv, context: context)
        return Outcome(status: status, stdoutBytes: out.captured, stderrBytes: err.captured)
    }

    /// Runs a command that must succeed and print JSON; returns the JSON.
    static func json(_ store: String, _ argv: [String], clock: Timestamp = defaultClock) throws -> JSON {
        let r = run(store, argv, clock: clock)
        guard r.status == 0 else { throw Failure(description: "\(argv) failed: \(r)") }
        return try r.json()
    }

    /// The event ids `log --json …` prints, in order.
    static func logIDs(_ store: String, _ argv: [String]) throws -> [String] {
        let r = run(store, ["log", "--json"] + argv)
        guard r.status == 0 else { throw Failure(description: "log \(argv) failed: \(r)") }
        return try JSON.lines(r.stdout).map { $0["event"]?["id"]?.string ?? "?" }
    }

    /// Writes `lines` to a file in `dir` and ingests it into `dir`'s store (or `store`).
    @discardableResult
    static func ingest(_ dir: TempDir, _ lines: [String], file: String = "events.ndjson", store: String? = nil) throws
        -> String
    {
        let store = store ?? dir.store
        let path = try dir.write(file, lines: lines)
        let r = run(store, ["ingest", path])
        guard r.status == 0 else { throw Failure(description: "ingest failed: \(r)") }
        return store
    }

    /// A microsecond clock value from RFC 3339 text.
    static func clock(_ text: String) throws -> Timestamp {
        guard let t = Timestamp.parseRFC3339(Array(text.utf8)) else { throw Failure(description: "bad time \(text)") }
        return t
    }

    /// A JSON string literal.
    static func q(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static let topic = "com.example.honeydue"
    static let actionable = #""button_types":["edit","complete","cancel","mark_in_progress"]"#

    static func notification(
        _ id: String, at: String, user: String = "u_ann", device: String? = nil, task: Int?, thread: String?,
        category: String? = "TASK_ACTIONABLE", title: String = "Reminder", subtitle: String? = nil,
        body: String = "Body text",
        custom: String = "", topic: String? = ReplayFixtures.topic
    ) -> String {
        var alert = "{\"title\":\(q(title))"
        if let subtitle { alert += ",\"subtitle\":\(q(subtitle))" }
        alert += ",\"body\":\(q(body))}"
        var aps = "{\"alert\":\(alert)"
        if let category { aps += ",\"category\":\(q(category))" }
        if let thread { aps += ",\"thread-id\":\(q(thread))" }
        aps += "}"
        var payload = "{\"aps\":\(aps)"
        if let task { payload += ",\"task_id\":\(task)" }
        if !custom.isEmpty { payload += "," + custom }
        payload += "}"
        var line = "{\"type\":\"notification\",\"id\":\(q(id)),\"at\":\(q(at)),\"user\":\(q(user))"
        if let device { line += ",\"device\":\(q(device))" }
        if let topic { line += ",\"topic\":\(q(topic))" }
        return line + ",\"payload\":\(payload)}"
    }

    static func action(
        _ id: String, _ kind: String, outcome: String = "ok", at: String, user: String = "u_ann", task: Int,
        notification: String? = nil, thread: String? = nil, extra: String = ""
    ) -> String {
        var line =
            "{\"type\":\"action\",\"id\":\(q(id)),\"at\":\(q(at)),\"user\":\(q(user)),\"task_id\":\(task),"
            + "\"action\":\(q(kind)),\"outcome\":\(q(outcome))"
        if let notification { line += ",\"notification_id\":\(q(notification))" }
        if let thread { line += ",\"thread_id\":\(q(thread))" }
        return line + extra + "}"
    }

    static func delivery(
        _ id: String, for notification: String, status: Int = 200, reason: String? = nil, at: String,
        user: String = "u_ann",
        device: String? = nil
    ) -> String {
        var line = "{\"type\":\"delivery\",\"id\":\(q(id)),\"at\":\(q(at)),\"user\":\(q(user))"
        if let device { line += ",\"device\":\(q(device))" }
        line += ",\"notification_id\":\(q(notification)),\"status\":\(status)"
        if let reason { line += ",\"reason\":\(q(reason))" }
        return line + "}"
    }

    /// The elements of a JSON array (none for anything else).
    static func elements(_ value: JSON?) -> [JSON] {
        if case .array(let elements)? = value { return elements }
        return []
    }

    /// `key` of every element, `null` where it is missing.
    static func column(_ events: [JSON], _ key: String) -> [JSON] { events.map { $0[key] ?? .null } }

    /// Strings as JSON values.
    static func strings(_ values: [String]) -> [JSON] { values.map { JSON.string($0) } }

    /// `value` without any member named "seq", at any depth (seqs differ between
    /// stores that ingested the same events in another order).
    static func withoutSeqs(_ value: JSON) -> JSON {
        switch value {
        case .object(let members): .object(members.filter { $0.key != "seq" }.map { ($0.key, withoutSeqs($0.value)) })
        case .array(let elements): .array(elements.map(withoutSeqs))
        default: value
        }
    }

    // MARK: The task-7 story

    /// Task 7 ("Clean gutters"), thread task-7: notified, started, renamed, a rejected
    /// complete, an accepted complete, notified completed. Seq = index + 1.
    enum Gutters {
        static let n1 = "7a000000-0000-4000-8000-000000000001"
        static let n2 = "7a000000-0000-4000-8000-000000000002"
        static let n3 = "7a000000-0000-4000-8000-000000000003"

        static let lines: [String] = [
            notification(
                n1, at: "2026-11-20T08:00:00Z", task: 7, thread: "task-7", title: "Due soon: Clean gutters",
                custom:
                    #""task_name":"Clean gutters","residence_id":12,"residence_name":"Home","due_date":"2026-11-25","#
                    + #""notification_type":"task_due_soon","#
                    + actionable),
            delivery("dlv-1", for: n1, at: "2026-11-20T08:00:01Z"),
            action(
                "act-1", "mark_in_progress", at: "2026-11-20T09:00:00Z", task: 7, notification: n1, thread: "task-7"),
            action(
                "act-2", "edit", at: "2026-11-21T10:00:00Z", task: 7,
                extra: #","changes":{"task_name":"Clean gutters and drains","due_date":"2026-11-27"}"#),
            notification(
                n2, at: "2026-11-22T08:00:00Z", task: 7, thread: "task-7", category: "TASK_IN_PROGRESS",
                title: "In progress",
                custom:
                    #""task_name":"Clean gutters and drains","due_date":"2026-11-27","#
                    + #""button_types":["edit","complete","cancel"]"#),
            action(
                "act-3", "complete", outcome: "rejected", at: "2026-11-22T09:00:00Z", task: 7, notification: n2,
                extra: #","http_status":409"#),
            action("act-4", "complete", at: "2026-11-22T10:00:00Z", task: 7, notification: n2),
            notification(
                n3, at: "2026-11-23T08:00:00Z", task: 7, thread: "task-7", category: "TASK_COMPLETED", title: "Done",
                custom: #""button_types":[]"#),
        ]
    }

    /// What `task 7 --json` should say at a horizon, worked out by hand.
    struct Expected: Sendable, CustomTestStringConvertible {
        var at: String
        var clock: String = "2026-12-01T09:30:00Z"
        var state: String
        var asOf: String
        var taskName: String
        var dueDate: String
        var completions: Int
        var historyIDs: [String]
        var testDescription: String { "--at \(at) (clock \(clock)) → \(state)" }
    }

    static let afterEdit = ["7a000000-0000-4000-8000-000000000001", "act-1", "act-2"]
    static let horizons: [Expected] = [
        Expected(
            at: "2026-11-21T12:00:00Z", state: "in_progress", asOf: "2026-11-21T12:00:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 0, historyIDs: afterEdit),
        // 11:30+02:00 is 09:30Z: after the rejected complete, before the accepted one.
        Expected(
            at: "2026-11-22T11:30:00+02:00", state: "in_progress", asOf: "2026-11-22T09:30:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 0,
            historyIDs: afterEdit + [Gutters.n2, "act-3"]),
        // 12:00+02:00 is 10:00Z, the complete's own time: at ≤ T includes it.
        Expected(
            at: "2026-11-22T12:00:00+02:00", state: "completed", asOf: "2026-11-22T10:00:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 1,
            historyIDs: afterEdit + [Gutters.n2, "act-3", "act-4"]),
        // A date is midnight UTC: before the edit.
        Expected(
            at: "2026-11-21", state: "in_progress", asOf: "2026-11-21T00:00:00.000Z",
            taskName: "Clean gutters", dueDate: "2026-11-25", completions: 0, historyIDs: [Gutters.n1, "act-1"]),
        Expected(
            at: "now", clock: "2026-11-21T00:00:00Z", state: "in_progress", asOf: "2026-11-21T00:00:00.000Z",
            taskName: "Clean gutters", dueDate: "2026-11-25", completions: 0, historyIDs: [Gutters.n1, "act-1"]),
        Expected(
            at: "now", state: "completed", asOf: "2026-12-01T09:30:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 1,
            historyIDs: afterEdit + [Gutters.n2, "act-3", "act-4", Gutters.n3]),
        Expected(
            at: "-2h", clock: "2026-11-22T11:30:00Z", state: "in_progress", asOf: "2026-11-22T09:30:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 0,
            historyIDs: afterEdit + [Gutters.n2, "act-3"]),
        Expected(
            at: "-2h", clock: "2026-11-22T12:00:00Z", state: "completed", asOf: "2026-11-22T10:00:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 1,
            historyIDs: afterEdit + [Gutters.n2, "act-3", "act-4"]),
        Expected(
            at: "-7d", clock: "2026-11-29T09:30:00Z", state: "in_progress", asOf: "2026-11-22T09:30:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 0,
            historyIDs: afterEdit + [Gutters.n2, "act-3"]),
        Expected(
            at: "-7d", clock: "2026-11-29T10:00:00Z", state: "completed", asOf: "2026-11-22T10:00:00.000Z",
            taskName: "Clean gutters and drains", dueDate: "2026-11-27", completions: 1,
            historyIDs: afterEdit + [Gutters.n2, "act-3", "act-4"]),
        // @3: the notification, its delivery and the mark_in_progress.
        Expected(
            at: "@3", state: "in_progress", asOf: "@3", taskName: "Clean gutters", dueDate: "2026-11-25",
            completions: 0, historyIDs: [Gutters.n1, "act-1"]),
        Expected(
            at: "@7", state: "completed", asOf: "@7", taskName: "Clean gutters and drains", dueDate: "2026-11-27",
            completions: 1, historyIDs: afterEdit + [Gutters.n2, "act-3", "act-4"]),
    ]

    // MARK: The task-9 thread

    /// Task 9: a thread with a delivery (naming its notification in upper case), an
    /// open without thread_id, a cancel in another thread, and a 410.
    enum Dryer {
        static let nA = "9b000000-0000-4000-8000-00000000000a"
        static let nB = "9b000000-0000-4000-8000-00000000000b"
        static let n10 = "9b000000-0000-4000-8000-000000000010"

        static let lines: [String] = [
            notification(
                nA, at: "2026-11-20T10:00:00Z", user: "u_bo", task: 9, thread: "task-9",
                title: "Due soon: Clean dryer vent",
                subtitle: "Maple Street House", body: "Clean dryer vent is due Friday.",
                custom: #""task_name":"Clean dryer vent","notification_type":"task_due_soon","# + actionable),
            delivery("dlv-a", for: nA.uppercased(), at: "2026-11-20T10:00:01Z", user: "u_bo"),
            action("act-open", "open", at: "2026-11-20T10:05:00Z", user: "u_bo", task: 9, notification: nA),
            action("act-cancel", "cancel", at: "2026-11-20T10:10:00Z", user: "u_ann", task: 9, thread: "elsewhere"),
            notification(
                nB, at: "2026-11-20T11:00:00Z", user: "u_bo", task: 9, thread: "task-9", category: "TASK_CANCELLED",
                title: "Cancelled: Clean dryer vent", body: "Alice cancelled Clean dryer vent.",
                custom: #""notification_type":"task_cancelled","button_types":["uncancel","delete"]"#),
            delivery("dlv-b", for: nB, status: 410, reason: "Unregistered", at: "2026-11-20T11:00:01Z", user: "u_bo"),
            action("act-other", "open", at: "2026-11-20T10:30:00Z", user: "u_bo", task: 10),
            notification(n10, at: "2026-11-20T09:00:00Z", user: "u_bo", task: 10, thread: "task-10"),
        ]
    }

    // MARK: The log stream

    /// Two users, two tasks, one delivery written late (seq 5, timeline 4th).
    enum Mixed {
        static let n1 = "c1000000-0000-4000-8000-000000000001"
        static let m1 = "c1000000-0000-4000-8000-000000000003"
        static let n2 = "c1000000-0000-4000-8000-000000000007"

        static let lines: [String] = [
            notification(
                n1, at: "2026-11-20T08:00:00Z", task: 7, thread: "task-7", title: "Clean gutters", custom: actionable),
            delivery("dlv-l1", for: n1, at: "2026-11-20T08:00:01Z"),
            notification(
                m1, at: "2026-11-20T09:00:00Z", user: "u_bo", task: 8, thread: "task-8", title: "Overdue: Mow lawn",
                custom: #""notification_type":"task_overdue","# + actionable),
            action(
                "act-l1", "mark_in_progress", at: "2026-11-20T10:00:00Z", task: 7, notification: n1, thread: "task-7"),
            delivery("dlv-l2", for: m1, status: 410, reason: "Unregistered", at: "2026-11-20T09:00:01Z", user: "u_bo"),
            action("act-l2", "complete", at: "2026-11-21T08:00:00Z", user: "u_bo", task: 8),
            notification(
                n2, at: "2026-11-21T09:00:00Z", task: 7, thread: "task-7", category: "TASK_IN_PROGRESS",
                title: "Gutters underway", custom: #""button_types":["edit","complete","cancel"]"#),
        ]

        /// Ids by seq (1-based).
        static func ids(_ seqs: [Int]) -> [String] {
            let all = [n1, "dlv-l1", m1, "act-l1", "dlv-l2", "act-l2", n2]
            return seqs.map { all[$0 - 1] }
        }
    }
}

@Suite("replay: task, thread, log and export")
struct ReplayCommandTests {
    typealias R = ReplayFixtures

    // MARK: task

    @Test("task --json gives every documented field on a hand-checked stream")
    func taskJSON() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Gutters.lines)
        let json = try R.json(store, ["task", "7", "--json"])
        for key in ["task_id", "state", "as_of", "fields", "history"] {
            #expect(json[key] != nil, "task --json has \(key)")
        }
        #expect(json["task_id"] == .number("7"))
        #expect(json["state"] == .string("completed"))
        #expect(json["as_of"] == .string("@8"))
        let fields = try #require(json["fields"])
        #expect(fields["task_name"] == .string("Clean gutters and drains"))
        #expect(fields["residence_id"] == .number("12"))
        #expect(fields["residence_name"] == .string("Home"))
        #expect(fields["due_date"] == .string("2026-11-27"))
        #expect(fields["completions"] == .number("1"))

        guard case .array(let history)? = json["history"] else {
            Issue.record("history is not an array: \(json)")
            return
        }
        // (seq, id, at, action, outcome, from, to, finding)
        let n: JSON = .null
        let expected: [(Int, String, String, JSON, JSON, String, String)] = [
            (1, R.Gutters.n1, "2026-11-20T08:00:00.000Z", n, n, "active", "active"),
            (
                3, "act-1", "2026-11-20T09:00:00.000Z", .string("mark_in_progress"), .string("ok"), "active",
                "in_progress"
            ),
            (4, "act-2", "2026-11-21T10:00:00.000Z", .string("edit"), .string("ok"), "in_progress", "in_progress"),
            (5, R.Gutters.n2, "2026-11-22T08:00:00.000Z", n, n, "in_progress", "in_progress"),
            (
                6, "act-3", "2026-11-22T09:00:00.000Z", .string("complete"), .string("rejected"), "in_progress",
                "in_progress"
            ),
            (7, "act-4", "2026-11-22T10:00:00.000Z", .string("complete"), .string("ok"), "in_progress", "completed"),
            (8, R.Gutters.n3, "2026-11-23T08:00:00.000Z", n, n, "completed", "completed"),
        ]
        #expect(history.count == expected.count)
        for (entry, e) in zip(history, expected) {
            #expect(entry["seq"] == .number(String(e.0)), "\(entry)")
            #expect(entry["id"] == .string(e.1), "\(entry)")
            #expect(entry["at"] == .string(e.2), "\(entry)")
            #expect(entry["action"] == e.3, "\(entry)")
            #expect(entry["outcome"] == e.4, "\(entry)")
            #expect(entry["from"] == .string(e.5), "\(entry)")
            #expect(entry["to"] == .string(e.6), "\(entry)")
            #expect(entry["finding"] == .null, "\(entry)")
        }
    }

    @Test(
        "task --at takes every time form and gives the hand-computed state",
        arguments: ReplayFixtures.horizons)
    func taskAt(_ expected: ReplayFixtures.Expected) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Gutters.lines)
        let json = try R.json(store, ["task", "7", "--json", "--at", expected.at], clock: try R.clock(expected.clock))
        #expect(json["state"] == .string(expected.state))
        #expect(json["as_of"] == .string(expected.asOf))
        #expect(json["fields"]?["task_name"] == .string(expected.taskName))
        #expect(json["fields"]?["due_date"] == .string(expected.dueDate))
        #expect(json["fields"]?["completions"] == .number(String(expected.completions)))
        guard case .array(let history)? = json["history"] else {
            Issue.record("no history: \(json)")
            return
        }
        #expect(history.compactMap { $0["id"]?.string } == expected.historyIDs)
    }

    @Test("--at=-2h is the same as --at -2h, and an @SEQ beyond the head is the head")
    func atSpellings() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Gutters.lines)
        let clock = try R.clock("2026-11-22T11:30:00Z")
        let separate = try R.json(store, ["task", "7", "--json", "--at", "-2h"], clock: clock)
        let joined = try R.json(store, ["task", "7", "--json", "--at=-2h"], clock: clock)
        #expect(separate == joined)
        #expect(joined["state"] == .string("in_progress"))
        let beyond = try R.json(store, ["task", "7", "--json", "--at", "@99"])
        #expect(beyond["as_of"] == .string("@8"))
        #expect(beyond["state"] == .string("completed"))
    }

    @Test("--at @SEQ is what the store knew after event SEQ, in timeline order even when a late event fills the past")
    func atSeqWithLateEvent() throws {
        let dir = try TempDir()
        let n = "d0000000-0000-4000-8000-000000000001"
        let store = try R.ingest(
            dir,
            [
                R.notification(n, at: "2026-11-20T08:00:00Z", task: 7, thread: "task-7", custom: R.actionable),
                R.action("late-complete", "complete", at: "2026-11-20T10:00:00Z", task: 7),
                // Uploaded late: the cancel happened before the complete.
                R.action("late-cancel", "cancel", at: "2026-11-20T09:00:00Z", task: 7),
            ])
        let at2 = try R.json(store, ["task", "7", "--json", "--at", "@2"])
        #expect(at2["state"] == .string("completed"))
        #expect(at2["as_of"] == .string("@2"))
        #expect(at2["fields"]?["completions"] == .number("1"))
        #expect(R.elements(at2["history"]).count == 2)
        #expect(at2["history"]?[1]?["finding"] == .null)

        let at3 = try R.json(store, ["task", "7", "--json", "--at", "@3"])
        #expect(at3["state"] == .string("completed"))
        #expect(at3["as_of"] == .string("@3"))
        let history = try #require(at3["history"])
        #expect(history[0]?["id"] == .string(n))
        #expect(history[1]?["id"] == .string("late-cancel"))
        #expect(history[1]?["seq"] == .number("3"))
        #expect(history[1]?["to"] == .string("cancelled"))
        #expect(history[2]?["id"] == .string("late-complete"))
        #expect(history[2]?["seq"] == .number("2"))
        #expect(history[2]?["from"] == .string("cancelled"))
        #expect(history[2]?["to"] == .string("completed"))
        #expect(history[2]?["finding"] == .string("invalid_transition"))

        let between = try R.json(store, ["task", "7", "--json", "--at", "2026-11-20T09:30:00Z"])
        #expect(between["state"] == .string("cancelled"))
    }

    @Test("events with the same at are ordered by seq", arguments: [true, false])
    func tiesBySeq(_ cancelFirst: Bool) throws {
        let dir = try TempDir()
        let n = "d1000000-0000-4000-8000-000000000001"
        let cancel = R.action("tie-cancel", "cancel", at: "2026-11-20T09:00:00Z", task: 7)
        let mark = R.action("tie-mark", "mark_in_progress", at: "2026-11-20T09:00:00Z", task: 7)
        let store = try R.ingest(
            dir,
            [
                R.notification(n, at: "2026-11-20T08:00:00Z", task: 7, thread: "task-7", custom: R.actionable)
            ] + (cancelFirst ? [cancel, mark] : [mark, cancel]))
        let json = try R.json(store, ["task", "7", "--json"])
        let history = try #require(json["history"])
        if cancelFirst {
            // cancelled, then mark_in_progress from cancelled: takes effect, flagged.
            #expect(json["state"] == .string("in_progress"))
            #expect(history[1]?["id"] == .string("tie-cancel"))
            #expect(history[2]?["id"] == .string("tie-mark"))
            #expect(history[2]?["finding"] == .string("invalid_transition"))
        } else {
            #expect(json["state"] == .string("cancelled"))
            #expect(history[1]?["id"] == .string("tie-mark"))
            #expect(history[2]?["id"] == .string("tie-cancel"))
            #expect(history[2]?["finding"] == .null)
        }
    }

    @Test("events ingested in a shuffled order give the same task and thread answers as in order")
    func shuffledIngest() throws {
        let ordered = try TempDir()
        let shuffled = try TempDir()
        let a = try R.ingest(ordered, R.Gutters.lines)
        let permutation = [7, 4, 1, 6, 0, 3, 5, 2]
        // Two files, so the order spans ingest runs too.
        try R.ingest(shuffled, permutation.prefix(4).map { R.Gutters.lines[$0] }, file: "first.ndjson")
        let b = try R.ingest(shuffled, permutation.dropFirst(4).map { R.Gutters.lines[$0] }, file: "second.ndjson")
        for argv in [
            ["task", "7", "--json"], ["thread", "task-7", "--json"],
            ["task", "7", "--json", "--at", "2026-11-22T09:30:00Z"],
            ["thread", "task-7", "--json", "--at", "2026-11-21T00:00:00Z"],
        ] {
            let x = R.withoutSeqs(try R.json(a, argv))
            let y = R.withoutSeqs(try R.json(b, argv))
            #expect(x == y, "\(argv)")
        }
        #expect(try R.json(b, ["task", "7", "--json"])["state"] == .string("completed"))
    }

    @Test("an unknown task or thread is exit 1 with one line on stderr")
    func unknownTaskOrThread() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Gutters.lines)
        for argv in [
            ["task", "404"], ["task", "404", "--json"], ["thread", "task-404"], ["thread", "task-404", "--json"],
            ["task", "7", "--at", "2026-11-01"],
        ] {
            let r = R.run(store, argv)
            #expect(r.status == 1, "\(argv): \(r)")
            #expect(r.stdout.isEmpty, "\(argv)")
            #expect(r.stderrLines.count == 1, "\(argv): \(r)")
        }
    }

    // MARK: the sample stories

    @Test(
        "on the sample, every task ends as STORIES.md's cast table says: state, name, residence, completions, due date")
    func sampleFinalStates() throws {
        let text = try String(contentsOfFile: AuditFixtures.samples + "/STORIES.md", encoding: .utf8)
        let rows = text.split(separator: "\n").map(String.init).filter {
            $0.range(of: #"^\| 1[123]\d\d \|"#, options: .regularExpression) != nil
        }
        #expect(rows.count == 19)
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let task = cells[0]
            var name = cells[1]
            if let renamed = name.range(of: "renamed to ") { name = String(name[renamed.upperBound...]) }
            if let recurs = name.range(of: " (recurs") { name = String(name[..<recurs.lowerBound]) }
            let final = cells[3].components(separatedBy: ", ")
            let json = try R.json(store, ["task", task, "--json"])
            #expect(json["state"] == .string(final[0]), "task \(task)")
            #expect(json["fields"]?["task_name"] == .string(name), "task \(task)")
            // Tasks 13xx are the Android stories: their last notification is an FCM message,
            // whose data map carries residence_id as a string.
            let residence: JSON = task.hasPrefix("13") ? .string(cells[2]) : .number(cells[2])
            #expect(json["fields"]?["residence_id"] == residence, "task \(task)")
            for part in final.dropFirst() {
                if part.hasPrefix("due ") {
                    #expect(json["fields"]?["due_date"] == .string(String(part.dropFirst(4))), "task \(task)")
                } else if let n = part.split(separator: " ").first.flatMap({ Int($0) }) {
                    #expect(json["fields"]?["completions"] == .number(String(n)), "task \(task)")
                }
            }
        }
    }

    @Test(
        "story a: after the failed complete task 1102 stays active with no completion; the failure is in its history"
    )
    func storyFailedComplete() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let json = try R.json(store, ["task", "1102", "--json", "--at", "2026-11-08T23:59:00Z"])
        #expect(json["state"] == .string("active"))
        #expect(json["fields"]?["completions"] == .number("0"))
        let step = R.elements(json["history"]).first { $0["id"] == .string("act_0013") }
        #expect(step?["action"] == .string("complete"))
        #expect(step?["outcome"] == .string("failed"))
        #expect(step?["from"] == .string("active"))
        #expect(step?["to"] == .string("active"))
        #expect(step?["finding"] == .null)
    }

    @Test(
        "story b: TASK_ACTIONABLE sent to cancelled task 1109 is flagged in its thread; the rejected complete is not"
    )
    func storyWrongButtons() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = R.elements(try R.json(store, ["thread", "task-1109", "--json"])["events"])
        let sent = events.first { $0["id"] == .string("14557b3c-ed72-4565-89d3-91e6848930e4") }
        #expect(sent?["task_state"] == .string("cancelled"))
        #expect(sent?["category"] == .string("TASK_ACTIONABLE"))
        #expect(sent?["finding"] == .string("category_state_mismatch"))
        let pressed = events.first { $0["id"] == .string("act_0033") }
        #expect(pressed?["outcome"] == .string("rejected"))
        #expect(pressed?["task_state"] == .string("cancelled"))
        #expect(pressed?["finding"] == .null)
    }

    @Test(
        "story c and offsets: task 1106's thread flags both sends to the dead token; -05:00 times order as instants"
    )
    func storyDeadToken() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = R.elements(try R.json(store, ["thread", "task-1106", "--json"])["events"])
        let flagged = events.filter { $0["finding"] == .string("sent_after_unregistered") }.compactMap {
            $0["id"]?.string
        }
        #expect(flagged == ["529bda1f-f15c-491e-8ed9-a25bf8e144e2", "f90d3d47-2259-4d39-8663-c4ae857c01f8"])
        let ids = events.compactMap { $0["id"]?.string }
        let notification = try #require(ids.firstIndex(of: "8056ca00-322f-4bdc-a894-6864007fcacc"))
        let started = try #require(ids.firstIndex(of: "act_0012"))
        #expect(notification < started, "act_0012 (09:30:12.345-05:00 = 14:30Z) comes after the 13:00Z notification")
        #expect(events[notification]["finding"] == .null)
        #expect(events[started]["at"] == .string("2026-11-08T14:30:12.345Z"))
    }

    // MARK: thread

    @Test(
        "thread --json: members through notification_id (in any case), per-type fields, and the task state after each")
    func threadJSON() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Dryer.lines)
        let json = try R.json(store, ["thread", "task-9", "--json"])
        #expect(json["thread_id"] == .string("task-9"))
        #expect(json["as_of"] == .string("@8"))
        guard case .array(let events)? = json["events"] else {
            Issue.record("no events: \(json)")
            return
        }
        #expect(events.compactMap { $0["id"]?.string } == [R.Dryer.nA, "dlv-a", "act-open", R.Dryer.nB, "dlv-b"])
        #expect(R.column(events, "seq") == [1, 2, 3, 5, 6].map { JSON.number(String($0)) })
        #expect(
            R.column(events, "type") == R.strings(["notification", "delivery", "action", "notification", "delivery"]))
        #expect(R.column(events, "task_id") == Array(repeating: JSON.number("9"), count: 5))
        // The cancel in thread "elsewhere" is not shown but moves the state.
        #expect(R.column(events, "task_state") == R.strings(["active", "active", "active", "cancelled", "cancelled"]))
        #expect(
            R.column(events, "at")
                == R.strings([
                    "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:01.000Z", "2026-11-20T10:05:00.000Z",
                    "2026-11-20T11:00:00.000Z", "2026-11-20T11:00:01.000Z",
                ]))
        #expect(R.column(events, "finding") == [.null, .null, .null, .null, .string("delivery_failed")])

        let first = events[0]
        #expect(first["category"] == .string("TASK_ACTIONABLE"))
        #expect(first["notification_type"] == .string("task_due_soon"))
        #expect(first["title"] == .string("Due soon: Clean dryer vent"))
        #expect(first["subtitle"] == .string("Maple Street House"))
        #expect(first["body"] == .string("Clean dryer vent is due Friday."))
        #expect(first["buttons"] == .array(R.strings(["edit", "complete", "cancel", "mark_in_progress"])))
        let cancelled = events[3]
        #expect(cancelled["category"] == .string("TASK_CANCELLED"))
        #expect(cancelled["subtitle"] == .null)
        #expect(cancelled["buttons"] == .array(R.strings(["uncancel", "delete"])))
        #expect(events[2]["action"] == .string("open"))
        #expect(events[2]["outcome"] == .string("ok"))
        #expect(events[1]["status"] == .number("200"))
        #expect(events[1]["reason"] == .null)
        #expect(events[4]["status"] == .number("410"))
        #expect(events[4]["reason"] == .string("Unregistered"))
    }

    @Test("an action naming another thread is a member of that thread only")
    func otherThread() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Dryer.lines)
        let json = try R.json(store, ["thread", "elsewhere", "--json"])
        guard case .array(let events)? = json["events"] else {
            Issue.record("no events: \(json)")
            return
        }
        #expect(events.compactMap { $0["id"]?.string } == ["act-cancel"])
        #expect(events.first?["task_state"] == .string("cancelled"))
        #expect(events.first?["action"] == .string("cancel"))
        // Task 10's events stay out of task-9.
        let nine = try R.json(store, ["thread", "task-9", "--json"])
        #expect(!nine.description.contains("act-other"))
        #expect(!nine.description.contains(R.Dryer.n10))
    }

    @Test("thread --at limits the timeline to events at or before T")
    func threadAt() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Dryer.lines)
        let json = try R.json(store, ["thread", "task-9", "--json", "--at", "2026-11-20T10:59:59Z"])
        #expect(json["as_of"] == .string("2026-11-20T10:59:59.000Z"))
        guard case .array(let events)? = json["events"] else {
            Issue.record("no events: \(json)")
            return
        }
        #expect(events.compactMap { $0["id"]?.string } == [R.Dryer.nA, "dlv-a", "act-open"])
        let bySeq = try R.json(store, ["thread", "task-9", "--json", "--at", "@5"])
        #expect(bySeq["events"]?[3]?["id"] == .string(R.Dryer.nB))
        #expect(bySeq["events"]?[3]?["task_state"] == .string("cancelled"))
        #expect(bySeq["events"]?[4] == nil, "the 410 (seq 6) is not known at @5")
    }

    // MARK: log

    @Test(
        "log filters select what each filter says, in timeline order",
        arguments: [
            (["--user", "u_ann"], [1, 2, 4, 7]),
            (["--user", "u_bo"], [3, 5, 6]),
            (["--task", "7"], [1, 2, 4, 7]),
            (["--task", "8"], [3, 5, 6]),
            (["--thread", "task-7"], [1, 2, 4, 7]),
            (["--thread", "task-8"], [3, 5]),
            (["--type", "delivery"], [2, 5]),
            (["--type", "action"], [4, 6]),
            (["--category", "TASK_IN_PROGRESS"], [7]),
            (["--category", "TASK_ACTIONABLE"], [1, 3]),
            (["--since", "2026-11-20T09:00:00Z"], [3, 5, 4, 6, 7]),
            (["--until", "2026-11-20T09:00:01Z"], [1, 2, 3, 5]),
            (["--since", "2026-11-21"], [6, 7]),
            (["--since", "@4"], [5, 6, 7]),
            (["--until", "@3"], [1, 2, 3]),
            (["--since", "@2", "--until", "@5"], [3, 5, 4]),
            (["--grep", "underway"], [7]),
            (["--grep", "UNDERWAY"], [7]),
            (["--grep", "u_bo"], [3, 5, 6]),
            (["--user", "u_ann", "--type", "action"], [4]),
            (["--task", "7", "--since", "2026-11-21"], [7]),
            (["--thread", "task-7", "--type", "delivery"], [2]),
            (["--user", "u_bo", "--until", "@5"], [3, 5]),
            (["--task", "7", "--category", "TASK_IN_PROGRESS"], [7]),
            (["--task", "8", "--type", "delivery", "--grep", "unregistered"], [5]),
            ([], [1, 2, 3, 5, 4, 6, 7]),
        ] as [([String], [Int])])
    func logFilters(_ filters: [String], _ seqs: [Int]) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Mixed.lines)
        #expect(try R.logIDs(store, filters) == R.Mixed.ids(seqs))
    }

    @Test(
        "log -n N gives the last N in timeline order, -r newest first",
        arguments: [
            (["-n", "2"], [6, 7]),
            (["-n", "2", "-r"], [7, 6]),
            (["-r"], [7, 6, 4, 5, 3, 2, 1]),
            (["-n", "2", "--user", "u_ann"], [4, 7]),
            (["-n", "2", "--thread", "task-7"], [4, 7]),
            (["-n", "2", "--task", "8"], [5, 6]),
            (["-n", "2", "--until", "2026-11-20T09:00:01Z"], [3, 5]),
            (["-r", "--since", "2026-11-20T10:00:00Z"], [7, 6, 4]),
            (["-n", "0"], []),
            (["-n", "50"], [1, 2, 3, 5, 4, 6, 7]),
        ] as [([String], [Int])])
    func logLimitAndReverse(_ options: [String], _ seqs: [Int]) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Mixed.lines)
        #expect(try R.logIDs(store, options) == R.Mixed.ids(seqs))
    }

    @Test("log --json lines carry seq, recorded_at and the event as ingested")
    func logJSONShape() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Mixed.lines)
        let r = R.run(store, ["log", "--json", "--type", "delivery"])
        let lines = try JSON.lines(r.stdout)
        #expect(lines.count == 2)
        #expect(lines.first?["seq"] == .number("2"))
        #expect(lines.first?["recorded_at"]?.string?.hasSuffix("Z") == true)
        #expect(try lines.first?["event"] == JSON.parse(R.Mixed.lines[1]))
    }

    @Test("no match is an empty answer with exit 0, in every output form")
    func logNoMatch() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, R.Mixed.lines)
        for argv in [
            ["log", "--user", "nobody"], ["log", "--json", "--grep", "zzz-nothing"], ["log", "--raw", "--task", "999"],
            ["log", "--thread", "task-404"], ["log", "--since", "2027-01-01"],
            ["log", "--type", "action", "--category", "TASK_ACTIONABLE"],
        ] {
            let r = R.run(store, argv)
            #expect(r.status == 0, "\(argv): \(r)")
            #expect(r.stdout.isEmpty, "\(argv): \(r)")
            #expect(r.stderr.isEmpty, "\(argv): \(r)")
        }
    }

    @Test("log --raw ingested into a fresh store gives the same events: the round trip")
    func rawRoundTrip() throws {
        let dir = try TempDir()
        // A line with spacing, escapes, unknown fields, number spellings and an offset.
        let odd =
            #"{ "type" : "delivery", "id":"dlv-odd", "at":"2026-11-21T09:00:01.123456+02:00", "user":"u_\u0061nn", "#
            + #""notification_id":""#
            + R.Mixed.n2.uppercased()
            + #"", "status":200, "meta":{"z":[1.50,2e3,"é\u00e9 \"q\"",true,null],"a":{}}, "device":"ab12"  }"#
        let store = try R.ingest(dir, R.Mixed.lines + [odd])
        let raw = R.run(store, ["log", "--raw"])
        #expect(raw.status == 0)
        #expect(raw.stdout.split(separator: "\n").count == 8)
        try dir.write("raw.ndjson", bytes: raw.stdoutBytes)

        let fresh = dir.file("fresh")
        let ingest = R.run(fresh, ["ingest", dir.file("raw.ndjson")])
        #expect(ingest.status == 0, "\(ingest)")

        let before = R.run(store, ["log", "--json"])
        let after = R.run(fresh, ["log", "--json"])
        let x = try JSON.lines(before.stdout).map { $0["event"] }
        let y = try JSON.lines(after.stdout).map { $0["event"] }
        #expect(x.count == 8)
        #expect(x == y)
        // And each is the line as it was first ingested.
        let originals = try (R.Mixed.lines + [odd]).map { try JSON.parse($0) }
        for event in x { #expect(originals.contains { $0 == event }, "\(String(describing: event))") }
        // Stored exactly as received: the raw bytes survive the trip.
        #expect(R.run(fresh, ["log", "--raw"]).stdoutBytes == raw.stdoutBytes)
        #expect(raw.stdout.contains(#""at":"2026-11-21T09:00:01.123456+02:00", "user":"u_\u0061nn""#))
    }

    // MARK: export

    /// Notifications to export. `x0` is ingested last but is the earliest of task-7.
    enum Exports {
        static let x1 = "e0000000-0000-4000-8000-000000000001"
        static let x2 = "e0000000-0000-4000-8000-000000000002"
        static let x0 = "e0000000-0000-4000-8000-000000000000"
        static let big = "e0000000-0000-4000-8000-0000000000b1"
        static let weird = "e0000000-0000-4000-8000-0000000000c1"

        /// x1's payload as emitted: keys in an unusual order, spacing inside values.
        static let x1Payload =
            #"{"task_id":7,"aps":{"thread-id":"task-7","alert":{"title":"First","body":"One"},"#
            + #""category":"TASK_ACTIONABLE"},"zeta":{ "b" : 1, "a" : [1, 2.50, "x\"y"] },"#
            + #""task_name":"Clean gutters","alpha":"é\u00e9"}"#

        static let lines: [String] = [
            #"{"type":"notification","id":""# + x1
                + #"","at":"2026-11-20T08:00:00Z","user":"u_ann","topic":"com.example.honeydue","payload":"#
                + x1Payload + "}",
            ReplayFixtures.action("act-x1", "open", at: "2026-11-20T09:00:00Z", task: 7, notification: x1),
            ReplayFixtures.delivery("dlv-x1", for: x1, at: "2026-11-20T08:00:01Z"),
            ReplayFixtures.notification(
                x2, at: "2026-11-21T09:00:00Z", task: 7, thread: "task-7", title: "Second", topic: nil),
            ReplayFixtures.notification(
                x0, at: "2026-11-19T08:00:00Z", task: 7, thread: "task-7", title: "Zeroth", topic: "com.example.other"),
            ReplayFixtures.notification(
                big, at: "2026-11-20T08:00:00Z", task: 8, thread: "task-8", title: "Big",
                custom: "\"pad\":\"" + String(repeating: "p", count: 5000) + "\""),
            ReplayFixtures.notification(
                weird, at: "2026-11-20T08:00:00Z", task: 9, thread: "task-9", category: "WEIRD_CATEGORY"),
        ]
    }

    /// The JSON of a written .apns file.
    static func apns(_ path: String) throws -> JSON {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReplayFixtures.Failure(description: "no file \(path)")
        }
        return try JSON.parse(Array(data))
    }

    @Test("export EVENT_ID writes the bundle key first, then the payload's keys in their order with equal values")
    func exportByID() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let out = dir.file("x1.apns")
        let r = R.run(store, ["export", Exports.x1, "-o", out])
        #expect(r.status == 0, "\(r)")
        #expect(!r.stderr.contains("warning"), "\(r)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.hasPrefix(#"{"Simulator Target Bundle":"com.example.honeydue","#), "\(text)")
        let file = try ReplayCommandTests.apns(out)
        let payload = try JSON.parse(Exports.x1Payload)
        #expect(file.keys == ["Simulator Target Bundle"] + payload.keys)
        #expect(file["Simulator Target Bundle"] == .string("com.example.honeydue"))
        for key in payload.keys { #expect(file[key] == payload[key], "\(key)") }
        // Nested objects keep their key order too.
        #expect(file["zeta"]?.keys == ["b", "a"])
        // The notification id is case-insensitive.
        let upper = R.run(store, ["export", Exports.x1.uppercased(), "-o", "-"])
        #expect(upper.status == 0, "\(upper)")
        #expect(try JSON.parse(upper.stdoutBytes) == file)
    }

    @Test(
        "export --thread X --at T picks the latest notification at or before T, in timeline order",
        arguments: [
            ("2026-11-19T12:00:00Z", "Zeroth"),
            ("2026-11-21T08:59:59Z", "First"),
            ("2026-11-21T09:00:00Z", "Second"),
            ("@1", "First"),
            ("@4", "Second"),
            ("@7", "Second"),
        ])
    func exportThreadAt(_ at: String, _ title: String) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let r = R.run(store, ["export", "--thread", "task-7", "--at", at, "-o", "-", "--bundle", "com.cli"])
        #expect(r.status == 0, "\(r)")
        let file = try JSON.parse(r.stdoutBytes)
        #expect(file["aps"]?["alert"]?["title"] == .string(title))
    }

    @Test("export --task N picks the task's latest notification")
    func exportTask() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let seven = R.run(store, ["export", "--task", "7", "-o", "-", "--bundle", "com.cli"])
        #expect(seven.status == 0, "\(seven)")
        #expect(try JSON.parse(seven.stdoutBytes)["aps"]?["alert"]?["title"] == .string("Second"))
        let early = R.run(store, ["export", "--task", "7", "--at", "2026-11-20T12:00:00Z", "-o", "-"])
        #expect(try JSON.parse(early.stdoutBytes)["aps"]?["alert"]?["title"] == .string("First"))
        let none = R.run(store, ["export", "--task", "7", "--at", "2026-11-01", "-o", "-"])
        #expect(none.status == 1, "\(none)")
        #expect(none.stdout.isEmpty)
        let unknown = R.run(store, ["export", "--task", "404", "-o", "-"])
        #expect(unknown.status == 1, "\(unknown)")
    }

    @Test("the bundle id is --bundle, else the topic, else $PUSHTRAIL_BUNDLE, else a usage error naming --bundle")
    func bundlePrecedence() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let env = ["PUSHTRAIL_BUNDLE": "com.env"]
        func bundle(_ id: String, _ extra: [String], _ environment: [String: String]) throws -> JSON? {
            let r = R.run(store, ["export", id, "-o", "-"] + extra, environment: environment)
            guard r.status == 0 else { return nil }
            return try JSON.parse(r.stdoutBytes)["Simulator Target Bundle"]
        }
        #expect(try bundle(Exports.x1, ["--bundle", "com.cli"], env) == .string("com.cli"))
        #expect(try bundle(Exports.x1, [], env) == .string("com.example.honeydue"))
        #expect(try bundle(Exports.x2, [], env) == .string("com.env"))
        #expect(try bundle(Exports.x2, ["--bundle", "com.cli"], [:]) == .string("com.cli"))

        let out = dir.file("nobundle.apns")
        let r = R.run(store, ["export", Exports.x2, "-o", out])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderrLines.first?.contains("--bundle") == true, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("exporting an action or a delivery is exit 1 naming its type; an unknown id is exit 1")
    func exportNotANotification() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let action = R.run(store, ["export", "act-x1", "-o", "-"])
        #expect(action.status == 1, "\(action)")
        #expect(action.stderr.contains("action"), "\(action)")
        #expect(action.stdout.isEmpty)
        let delivery = R.run(store, ["export", "dlv-x1", "-o", "-"])
        #expect(delivery.status == 1, "\(delivery)")
        #expect(delivery.stderr.contains("delivery"), "\(delivery)")
        let unknown = R.run(store, ["export", "no-such-event", "-o", "-"])
        #expect(unknown.status == 1, "\(unknown)")
    }

    @Test("export warns on stderr, and still writes, for a payload over 4096 bytes and for an unknown category")
    func exportWarnings() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let bigPath = dir.file("big.apns")
        let big = R.run(store, ["export", Exports.big, "-o", bigPath])
        #expect(big.status == 0, "\(big)")
        #expect(big.stderr.contains("warning") && big.stderr.contains("4096"), "\(big)")
        #expect(FileManager.default.fileExists(atPath: bigPath))

        let weird = R.run(store, ["export", Exports.weird, "-o", dir.file("weird.apns")])
        #expect(weird.status == 0, "\(weird)")
        #expect(weird.stderr.contains("warning") && weird.stderr.contains("WEIRD_CATEGORY"), "\(weird)")
        #expect(FileManager.default.fileExists(atPath: dir.file("weird.apns")))

        let fine = R.run(store, ["export", Exports.x1, "-o", "-"])
        #expect(!fine.stderr.contains("warning"), "\(fine)")
    }

    @Test("-o - writes the file to standard output")
    func exportToStdout() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let r = R.run(store, ["export", Exports.x1, "-o", "-"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix(#"{"Simulator Target Bundle":"#))
        let file = try JSON.parse(r.stdoutBytes)
        #expect(file.keys.first == "Simulator Target Bundle")
        #expect(file["task_name"] == .string("Clean gutters"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.hasSuffix(".apns") })
    }

    @Test("export never overwrites an existing file without --force")
    func exportNoClobber() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let path = try dir.write("exists.apns", bytes: Array("keep me\n".utf8))
        let r = R.run(store, ["export", Exports.x1, "-o", path])
        #expect(r.status != 0, "\(r)")
        #expect(r.status == 74, "DESIGN: an existing file is exit 74")
        #expect(r.stderr.contains("--force"), "\(r)")
        #expect(try dir.read("exists.apns") == Array("keep me\n".utf8))

        let forced = R.run(store, ["export", Exports.x1, "-o", path, "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try ReplayCommandTests.apns(path)["task_name"] == .string("Clean gutters"))
    }

    @Test("export --all --dir writes every notification of the thread as numbered files in timeline order")
    func exportAll() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Exports.lines)
        let out = dir.file("all")
        let r = R.run(store, ["export", "--thread", "task-7", "--all", "--dir", out, "--bundle", "com.cli"])
        #expect(r.status == 0, "\(r)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        // x0 (seq 5) is first in time, then x1 (seq 1), then x2 (seq 4).
        #expect(names == ["01-task-7-5.apns", "02-task-7-1.apns", "03-task-7-4.apns"])
        let titles = try names.map { try ReplayCommandTests.apns(out + "/" + $0)["aps"]?["alert"]?["title"] }
        #expect(titles == [.string("Zeroth"), .string("First"), .string("Second")])

        // Without a bundle for x2 (no topic), nothing is written.
        let none = R.run(store, ["export", "--thread", "task-7", "--all", "--dir", dir.file("none")])
        #expect(none.status == 2, "\(none)")
        #expect(none.stderr.contains("--bundle"))
    }

    /// Thread ids that must not steer a default file name anywhere.
    static let hostileThreads: [String] = [
        "../x", "a/b", ".hidden", "..", "line\nbreak", "/etc/passwd", String(repeating: "a", count: 255),
        String(repeating: "é", count: 120) + String(repeating: "b", count: 15),
    ]

    /// Whether `name` is a safe `.apns` file name ending in `-<seq>.apns`.
    static func isSafe(_ name: String, seq: UInt64) -> Bool {
        name.utf8.count <= 255 && name.hasSuffix("-\(seq).apns") && !name.hasPrefix(".")
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            }
    }

    @Test(
        "SafeFileName keeps hostile ids inside the dir: safe characters, not hidden, ≤ 255 bytes, ending -<seq>.apns",
        arguments: ReplayCommandTests.hostileThreads + [
            String(repeating: "x", count: 300), String(repeating: "/", count: 300), "",
        ])
    func safeFileName(_ stem: String) throws {
        for prefix in ["", "01-", "1234-"] {
            let name = SafeFileName.apns(stem: stem, seq: 123_456_789, prefix: prefix)
            #expect(ReplayCommandTests.isSafe(name, seq: 123_456_789), "\(name)")
            #expect(name.hasPrefix(prefix))
            #expect(name != "." && name != "..")
        }
        #expect(SafeFileName.apns(stem: "task-7", seq: 3) == "task-7-3.apns")
    }

    @Test(
        "export --all --dir with hostile thread ids writes each file directly inside DIR",
        arguments: ReplayCommandTests.hostileThreads)
    func exportAllHostile(_ thread: String) throws {
        let dir = try TempDir()
        let store = try R.ingest(
            dir,
            [
                R.notification(
                    "f0000000-0000-4000-8000-000000000001", at: "2026-11-20T08:00:00Z", task: 7, thread: thread)
            ])
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        let out = dir.file("out")
        let r = R.run(store, ["export", "--thread", thread, "--all", "--dir", out])
        #expect(r.status == 0, "\(r)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(names.count == 1, "\(names)")
        for name in names {
            #expect(ReplayCommandTests.isSafe(name, seq: 1), "\(name)")
            #expect(name.hasPrefix("01-"))
            var isDirectory: ObjCBool = false
            #expect(
                FileManager.default.fileExists(atPath: out + "/" + name, isDirectory: &isDirectory)
                    && !isDirectory.boolValue)
        }
        // Nothing appeared next to DIR.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == before.union(["out"]))
    }

    @Test(
        "export without -o writes <thread>-<seq>.apns into the current directory, whatever the thread id (built binary)"
    )
    func exportDefaultNameInCurrentDirectory() throws {
        let binary = try Binary.path()
        let dir = try TempDir()
        let lines = ReplayCommandTests.hostileThreads.enumerated().map { i, thread in
            R.notification(
                String(format: "f1000000-0000-4000-8000-%012d", i + 1), at: "2026-11-20T08:00:00Z", task: 7,
                thread: thread)
        }
        let store = try R.ingest(dir, lines)
        let cwd = dir.file("cwd")
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: false)
        let outside = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        for (i, thread) in ReplayCommandTests.hostileThreads.enumerated() {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--store", store, "export", "--thread", thread]
            process.currentDirectoryURL = URL(fileURLWithPath: cwd)
            process.environment = ["PATH": "/usr/bin:/bin"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(thread.debugDescription)")
            let seq = UInt64(i + 1)
            let written = try FileManager.default.contentsOfDirectory(atPath: cwd).filter {
                $0.hasSuffix("-\(seq).apns")
            }
            #expect(written.count == 1, "\(thread.debugDescription): \(written)")
            for name in written { #expect(ReplayCommandTests.isSafe(name, seq: seq), "\(name)") }
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cwd).count == ReplayCommandTests.hostileThreads.count)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == outside)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/x-1.apns"))
    }
}
