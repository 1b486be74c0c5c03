import Foundation
import PushTrailModel
import PushTrailStore
import Testing

/// The sample data and what Samples/STORIES.md says `audit` must find in it.
enum AuditFixtures {
    typealias R = ReplayFixtures

    /// The repository's Samples directory, found from this file.
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples").path

    /// One row of STORIES.md's "Intended audit findings" table.
    struct IntendedFinding {
        var code: String
        var ids: [String]
        /// The task column when it names a single task.
        var task: Int?
    }

    /// Reads the "Intended audit findings (N)" table of STORIES.md rather than copying
    /// it, so the test and the story it checks cannot drift apart. (As read by hand:
    /// 9 delivery_failed, 4 sent_after_unregistered, 2 buttons_category_mismatch, 1 of
    /// each other code, 25 in all.)
    static func intendedFindings() throws -> (total: Int, rows: [IntendedFinding]) {
        let text = try String(contentsOfFile: samples + "/STORIES.md", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("## Intended audit findings") }) else {
            throw R.Failure(description: "STORIES.md has no intended-findings section")
        }
        let heading = lines[start]
        guard let open = heading.firstIndex(of: "("), let close = heading.firstIndex(of: ")"),
            let total = Int(heading[heading.index(after: open)..<close])
        else { throw R.Failure(description: "no total in \(heading)") }
        var rows: [IntendedFinding] = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3 else { continue }
            let code = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let ids = cells[2].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            rows.append(IntendedFinding(code: code, ids: ids, task: Int(cells[3])))
        }
        return (total, rows)
    }

    /// A store holding the sample events, ingested in file order.
    static func sampleStore(_ dir: TempDir) throws -> String {
        let r = R.run(dir.store, ["ingest", samples + "/events.ndjson"])
        guard r.status == 0 else { throw R.Failure(description: "ingest of the sample failed: \(r)") }
        return dir.store
    }

    /// `audit --json …`'s findings (exit 0 or 1).
    static func audit(_ store: String, _ argv: [String] = []) throws -> (status: Int32, findings: [JSON], counts: JSON)
    {
        let r = R.run(store, ["audit", "--json"] + argv)
        guard r.status == 0 || r.status == 1 else { throw R.Failure(description: "audit \(argv) failed: \(r)") }
        let json = try r.json()
        return (r.status, R.elements(json["findings"]), json["counts"] ?? .null)
    }

    /// Every task id and thread id named by the store's notifications (iOS payload keys,
    /// or an Android message's data map, whose values are strings) and actions.
    static func tasksAndThreads(_ store: String) throws -> (tasks: [Int], threads: [String]) {
        let r = R.run(store, ["log", "--json"])
        var tasks = Set<Int>()
        var threads = Set<String>()
        for line in try JSON.lines(r.stdout) {
            let e = line["event"]
            let data = e?["payload"]?["android"]?["data"] ?? e?["payload"]?["data"]
            let androidTask = data?["task_id"].flatMap { $0.int ?? $0.string.flatMap { Int($0) } }
            if let t = e?["task_id"]?.int ?? e?["payload"]?["task_id"]?.int ?? androidTask { tasks.insert(t) }
            if let t = e?["payload"]?["aps"]?["thread-id"]?.string ?? data?["thread_id"]?.string
                ?? e?["thread_id"]?.string
            {
                threads.insert(t)
            }
        }
        return (tasks.sorted(), threads.sorted())
    }

    /// The seqs of `events`.
    static func seqs(_ events: [JSON]) -> Set<Int> { Set(events.compactMap { $0["seq"]?.int }) }

    /// A device token for the unregistration stories.
    static let device = "aa11aa11bb22bb22cc33cc33dd44dd44ee55ee55ff66ff6600770077008800880099"
}

@Suite("audit command")
struct AuditCommandTests {
    typealias A = AuditFixtures
    typealias R = ReplayFixtures

    @Test("audit --json on the sample finds what STORIES.md's intended-findings table lists, and exits 1")
    func sampleFindings() throws {
        let (total, rows) = try A.intendedFindings()
        #expect(total == 25)
        #expect(rows.count == FindingCode.allCases.count, "one table row per code")
        #expect(rows.reduce(0) { $0 + $1.ids.count } == total)

        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let (status, findings, counts) = try A.audit(store)
        #expect(status == 1)
        #expect(findings.count == total)
        var expectedCounts: [(key: String, value: JSON)] = []
        for row in rows { expectedCounts.append((row.code, .number(String(row.ids.count)))) }
        #expect(counts == .object(expectedCounts))
        for row in rows {
            let mine = findings.filter { $0["code"]?.string == row.code }
            #expect(Set(mine.compactMap { $0["id"]?.string }) == Set(row.ids), "\(row.code)")
            #expect(mine.count == row.ids.count, "\(row.code)")
            if let task = row.task {
                #expect(mine.allSatisfy { $0["task_id"]?.int == task }, "\(row.code) is about task \(task)")
            }
        }
        for f in findings {
            for key in ["code", "seq", "id", "task_id", "at", "message"] { #expect(f[key] != nil, "\(key) in \(f)") }
            #expect(f["message"]?.string?.isEmpty == false)
        }
        // Timeline order.
        let ats = findings.compactMap { $0["at"]?.string }
        #expect(ats == ats.sorted())
    }

    @Test("the text form lists the findings and exits 1; a clean stream says so and exits 0")
    func exitStatus() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let text = R.run(store, ["audit"])
        #expect(text.status == 1)
        #expect(text.stdout.hasPrefix("25 findings"), "\(text)")

        let clean = try TempDir()
        let cleanStore = try R.ingest(clean, R.Gutters.lines)
        let r = R.run(cleanStore, ["audit"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("no findings"))
        let json = R.run(cleanStore, ["audit", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(try json.json() == JSON.parse(#"{"findings":[],"counts":{}}"#))
    }

    @Test("--code keeps only the codes asked for; an unknown code is a usage error")
    func codeFilter() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let failed = try A.audit(store, ["--code", "delivery_failed"])
        #expect(failed.status == 1)
        #expect(failed.findings.count == 9)
        #expect(failed.findings.allSatisfy { $0["code"]?.string == "delivery_failed" })
        #expect(failed.counts == .object([("delivery_failed", .number("9"))]))

        let two = try A.audit(store, ["--code", "payload_too_large", "--code", "thread_id_mismatch"])
        #expect(Set(two.findings.compactMap { $0["code"]?.string }) == ["payload_too_large", "thread_id_mismatch"])
        #expect(two.findings.count == 2)

        let none = try A.audit(store, ["--code", "payload_too_large", "--task", "1101"])
        #expect(none.status == 0)
        #expect(none.findings.isEmpty)

        let bad = R.run(store, ["audit", "--code", "no_such_code"])
        #expect(bad.status == 2, "\(bad)")
    }

    @Test("audit --task N gives exactly the whole-store findings about task N")
    func taskScopedAudit() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let whole = try A.audit(store).findings
        let (tasks, _) = try A.tasksAndThreads(store)
        #expect(tasks.count == 19)
        for task in tasks {
            let scoped = try A.audit(store, ["--task", String(task)])
            let expected = whole.filter { $0["task_id"]?.int == task }
            #expect(scoped.findings == expected, "task \(task)")
            #expect(scoped.status == (expected.isEmpty ? 0 : 1), "task \(task)")
        }
    }

    @Test("audit --thread X gives exactly the whole-store findings of X's members")
    func threadScopedAudit() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let whole = try A.audit(store).findings
        let (_, threads) = try A.tasksAndThreads(store)
        #expect(threads.contains("residence-12"))
        for thread in threads {
            let members = A.seqs(R.elements(try R.json(store, ["thread", thread, "--json"])["events"]))
            let expected = whole.filter { members.contains($0["seq"]?.int ?? -1) }
            #expect(try A.audit(store, ["--thread", thread]).findings == expected, "thread \(thread)")
        }
    }

    @Test("audit --user U gives exactly the whole-store findings of U's events")
    func userScopedAudit() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let whole = try A.audit(store).findings
        for user in ["u_alice", "u_ben", "u_dana", "u_carlos", "u_farah", "u_gus", "u_hana", "u_ivan"] {
            let seqs = Set(
                try JSON.lines(R.run(store, ["log", "--json", "--user", user]).stdout).compactMap { $0["seq"]?.int })
            let expected = whole.filter { seqs.contains($0["seq"]?.int ?? -1) }
            #expect(try A.audit(store, ["--user", user]).findings == expected, "user \(user)")
        }
    }

    @Test("task and thread findings agree with audit on the sample: same seq, same code, same finding")
    func findingsAgreeEverywhere() throws {
        let dir = try TempDir()
        let store = try A.sampleStore(dir)
        let whole = try A.audit(store).findings
        let (tasks, threads) = try A.tasksAndThreads(store)

        // (seq, code) → the finding object as shown by task and thread.
        var shownInTasks: [String: JSON] = [:]
        var shownInThreads: [String: JSON] = [:]
        func key(_ f: JSON) -> String { "\(f["seq"]?.int ?? -1)/\(f["code"]?.string ?? "?")" }
        for task in tasks {
            for entry in R.elements(try R.json(store, ["task", String(task), "--json"])["history"]) {
                let list = R.elements(entry["findings"])
                #expect(entry["finding"] == (list.first?["code"] ?? .null), "task \(task): \(entry)")
                for f in list { shownInTasks[key(f)] = f }
            }
        }
        for thread in threads {
            for event in R.elements(try R.json(store, ["thread", thread, "--json"])["events"]) {
                let list = R.elements(event["findings"])
                #expect(event["finding"] == (list.first?["code"] ?? .null), "thread \(thread): \(event)")
                for f in list { shownInThreads[key(f)] = f }
            }
        }
        for f in whole where f["task_id"] != .null {
            let shown = shownInTasks[key(f)] ?? shownInThreads[key(f)]
            #expect(shown == f, "audit's \(key(f)) should appear the same in task \(f["task_id"]!) or its thread")
        }
        // And nothing shows up in task or thread that audit does not report.
        let audited = Set(whole.map(key))
        #expect(Set(shownInTasks.keys).subtracting(audited).isEmpty)
        #expect(Set(shownInThreads.keys).subtracting(audited).isEmpty)
        // Deliveries are not in task histories; every delivery finding is in a thread.
        for f in whole where f["code"] == .string("delivery_failed") {
            #expect(shownInThreads[key(f)] == f, "\(f)")
        }
    }

    // MARK: sent_after_unregistered through the store

    /// A notification to the device, its 410 at 09:00:00Z, then notifications at
    /// exactly 09:00:00Z and one microsecond later. `sameAtFirst` ingests the
    /// same-time notification before the 410.
    static func unregisteredStream(reason: String, sameAtFirst: Bool) -> [String] {
        let n1 = "ab000000-0000-4000-8000-000000000001"
        let actionable = R.actionable
        let same = R.notification(
            "ab000000-0000-4000-8000-000000000002", at: "2026-11-20T09:00:00Z", device: A.device,
            task: 7, thread: "task-7", custom: actionable)
        let gone = R.delivery("dlv-gone", for: n1, status: 410, reason: reason, at: "2026-11-20T09:00:00Z")
        return [
            R.notification(
                n1, at: "2026-11-20T08:00:00Z", device: A.device, task: 7, thread: "task-7", custom: actionable)
        ]
            + (sameAtFirst ? [same, gone] : [gone, same])
            + [
                R.notification(
                    "ab000000-0000-4000-8000-000000000003", at: "2026-11-20T09:00:00.000001Z", device: A.device,
                    task: 7, thread: "task-7", custom: actionable),
                R.notification(
                    "ab000000-0000-4000-8000-000000000004", at: "2026-11-20T10:00:00Z", device: "0ther0device",
                    task: 7, thread: "task-7", custom: actionable),
            ]
    }

    @Test(
        "sent_after_unregistered is strictly after the 410: not at the same at, yes 1 µs later; store and scoped agree",
        arguments: [("Unregistered", false), ("Unregistered", true), ("ExpiredToken", false)])
    func sentAfterUnregisteredBoundary(_ reason: String, _ sameAtFirst: Bool) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, AuditCommandTests.unregisteredStream(reason: reason, sameAtFirst: sameAtFirst))
        for scope in [[], ["--task", "7"], ["--thread", "task-7"], ["--user", "u_ann"]] {
            let (status, findings, _) = try A.audit(store, scope)
            #expect(status == 1)
            let late = findings.filter { $0["code"] == .string("sent_after_unregistered") }
            #expect(
                late.compactMap { $0["id"]?.string } == ["ab000000-0000-4000-8000-000000000003"],
                "\(scope): \(findings)")
            #expect(late.first?["message"]?.string?.contains("dlv-gone") == true, "\(scope)")
            #expect(late.first?["message"]?.string?.contains(reason) == true, "\(scope)")
            #expect(
                findings.compactMap { $0["code"]?.string }.sorted() == ["delivery_failed", "sent_after_unregistered"],
                "\(scope)")
        }
        // The task and thread views show it at the same event.
        let history = R.elements(try R.json(store, ["task", "7", "--json"])["history"])
        #expect(
            history.filter { $0["finding"] == .string("sent_after_unregistered") }.compactMap { $0["id"]?.string }
                == ["ab000000-0000-4000-8000-000000000003"])
        // Before the 410 was known (--until / --at), nothing is sent after it.
        let early = try A.audit(store, ["--until", "2026-11-20T08:59:59Z"])
        #expect(early.status == 0, "\(early.findings)")
    }

    /// Every way of asking for task 7's findings.
    static let scopes: [[String]] = [[], ["--task", "7"], ["--thread", "task-7"], ["--user", "u_ann"]]

    /// The ids flagged sent_after_unregistered by `audit --json` in `scope`.
    static func sentAfterUnregistered(_ store: String, _ scope: [String]) throws -> [String] {
        try A.audit(store, scope).findings.filter { $0["code"] == .string("sent_after_unregistered") }.compactMap {
            $0["id"]?.string
        }
    }

    // The rule: "a notification to a device … strictly later than a 410 delivery … for a
    // notification to that device". The device a 410 retires is the device of the
    // notification it answers; a delivery's own `device` field only stands in when that
    // notification is unknown. (docs/DESIGN.md now reads it the other way round; this
    // test keeps to the rule's wording.)
    @Test("sent_after_unregistered uses the device of the notification the 410 answers, in every scope")
    func unregisteredDeviceIsTheNotifications() throws {
        let dir = try TempDir()
        let d1 = A.device
        let d2 = "bb22bb22cc33cc33dd44dd44ee55ee55ff66ff66007700770088008800990099aa"
        let n1 = "ad000000-0000-4000-8000-000000000001"
        let store = try R.ingest(
            dir,
            [
                R.notification(
                    n1, at: "2026-11-20T08:00:00Z", device: d1, task: 7, thread: "task-7", custom: R.actionable),
                // The answer for n1 (sent to d1) carries another token in its own device field.
                R.delivery(
                    "dlv-mixed", for: n1, status: 410, reason: "Unregistered", at: "2026-11-20T09:00:00Z", device: d2),
                R.notification(
                    "ad000000-0000-4000-8000-000000000002", at: "2026-11-20T10:00:00Z", device: d1, task: 7,
                    thread: "task-7", custom: R.actionable),
                R.notification(
                    "ad000000-0000-4000-8000-000000000003", at: "2026-11-20T11:00:00Z", device: d2, task: 7,
                    thread: "task-7", custom: R.actionable),
            ])
        for scope in AuditCommandTests.scopes {
            #expect(
                try AuditCommandTests.sentAfterUnregistered(store, scope) == ["ad000000-0000-4000-8000-000000000002"],
                "\(scope): a 410 for a notification to d1 marks d1, not the delivery's own d2")
        }
    }

    @Test("a 410 ingested before its notification still marks the notification's device, in every scope and view")
    func unregisteredBeforeItsNotification() throws {
        let dir = try TempDir()
        let n1 = "ae000000-0000-4000-8000-000000000001"
        let n2 = "ae000000-0000-4000-8000-000000000002"
        // First run: only the 410 (no device field of its own).
        try R.ingest(
            dir, [R.delivery("dlv-early", for: n1, status: 410, reason: "Unregistered", at: "2026-11-20T08:00:01Z")],
            file: "first.ndjson")
        // Second run: the notification it answers, then a later one to the same device.
        let store = try R.ingest(
            dir,
            [
                R.notification(
                    n2, at: "2026-11-20T10:00:00Z", device: A.device, task: 7, thread: "task-7", custom: R.actionable),
                R.notification(
                    n1, at: "2026-11-20T08:00:00Z", device: A.device, task: 7, thread: "task-7", custom: R.actionable),
            ], file: "second.ndjson")
        for scope in AuditCommandTests.scopes {
            #expect(try AuditCommandTests.sentAfterUnregistered(store, scope) == [n2], "\(scope)")
        }
        let history = R.elements(try R.json(store, ["task", "7", "--json"])["history"])
        #expect(history.first { $0["id"] == .string(n2) }?["finding"] == .string("sent_after_unregistered"))
        let thread = R.elements(try R.json(store, ["thread", "task-7", "--json"])["events"])
        #expect(thread.first { $0["id"] == .string(n2) }?["finding"] == .string("sent_after_unregistered"))
    }

    @Test(
        "audit follows (at, seq): with a cancel and a notification at the same at, the lower seq decides",
        arguments: [true, false])
    func tiesInAudit(_ cancelFirst: Bool) throws {
        let dir = try TempDir()
        let cancel = R.action("tie-cancel", "cancel", at: "2026-11-20T09:00:00Z", task: 7)
        let notification = R.notification(
            "ac000000-0000-4000-8000-000000000001", at: "2026-11-20T09:00:00Z", task: 7,
            thread: "task-7", custom: R.actionable)
        let store = try R.ingest(dir, cancelFirst ? [cancel, notification] : [notification, cancel])
        let (status, findings, _) = try A.audit(store)
        if cancelFirst {
            #expect(status == 1)
            #expect(findings.compactMap { $0["code"]?.string } == ["category_state_mismatch"])
            #expect(findings.first?["seq"] == .number("2"))
        } else {
            #expect(status == 0, "\(findings)")
        }
        #expect(try A.audit(store, ["--task", "7"]).findings == findings)
    }
}
