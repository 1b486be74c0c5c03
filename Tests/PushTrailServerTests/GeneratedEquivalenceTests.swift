import Foundation
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// The read routes over a store of 20,000 generated events (both platforms, anomalies
/// that give findings): for a spread of tasks, threads, users, events and filters, each
/// answer is byte for byte what the CLI's `--json` prints on the same store.
@Suite("pushtrail-server: a generated store answers as the CLI does")
struct GeneratedEquivalenceTests {
    /// The generator's arguments: deterministic, ending a few hours before the fixture's
    /// clock, so that `-3d` falls among the events.
    static let generator = [
        "--events", "20000", "--seed", "7", "--anomalies", "0.02", "--android-share", "0.3", "--start", "2026-11-25",
    ]

    /// `count` items spread evenly over `items` (all of them when there are fewer).
    static func spread<T>(_ items: [T], _ count: Int) -> [T] {
        items.count <= count ? items : (0..<count).map { items[$0 * items.count / count] }
    }

    /// Comparisons made, by kind, and the questions both sides found nothing for.
    struct Tally {
        var compared: [String: Int] = [:]
        var notFound = 0
        /// Lines of the listings compared.
        var listed = 0
    }

    @Test(
        "tasks, threads, events, listings, audits, head and stats of 20,000 generated events equal the CLI's --json",
        .enabled(if: ServerFixture.haveCurl), .timeLimit(.minutes(5)))
    func generated() throws {
        let started = Date()
        let events = NSTemporaryDirectory() + "pushtrail-gen-\(UUID().uuidString).ndjson"
        defer { try? FileManager.default.removeItem(atPath: events) }
        // A missing generator fails the test, with how to build it.
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: try ServerProcessTests.built("pushtrail-gen"))
        gen.arguments = Self.generator + ["-o", events]
        try gen.run()
        gen.waitUntilExit()
        try #require(gen.terminationStatus == 0, "pushtrail-gen \(Self.generator) exited \(gen.terminationStatus)")
        let fixture = try ServerFixture(events: events)

        // What the store holds, to choose from.
        var tasks: Set<Int64> = []
        var threads: Set<String> = []
        var users: Set<String> = []
        var android = 0
        let head = try fixture.store.read { reader in
            try reader.log(LogQuery()) { loaded in
                if let t = loaded.event.taskID { tasks.insert(t) }
                if let th = loaded.event.threadID { threads.insert(th) }
                users.insert(loaded.event.user)
                if loaded.event.notification?.platform == .android { android += 1 }
                return true
            }
            return try reader.head().seq
        }
        try #require(head == 20000, "the store holds \(head) events, not the generator's 20,000")
        #expect(tasks.count > 1000 && threads.count > 1000 && users.count > 50 && android > 1000)
        let someTasks = Self.spread(tasks.sorted(), 40)
        let someThreads = Self.spread(threads.sorted(), 40)
        let someUsers = Self.spread(users.sorted(), 15)

        var tally = Tally()
        /// `route` answers as `argv` prints: 200 and the same bytes when the CLI exits 0 (or,
        /// for `audit`, 1: findings); 404 when the CLI exits 1 for want of what was asked.
        func same(_ kind: String, _ route: String, _ argv: [String], findings: Bool = false) throws {
            let cli = fixture.cli(argv)
            let http = try fixture.request("GET", route)
            if cli.status == 0 || findings && cli.status == 1 {
                #expect(http.status == 200, "\(route): \(http.status) \(http.text.prefix(200))")
                #expect(http.body == cli.stdout, "\(route) differs from \(argv)")
                tally.compared[kind, default: 0] += 1
                if kind == "listing" { tally.listed += http.body.filter { $0 == 0x0A }.count }
            } else {
                #expect(cli.status == 1, "\(argv): exit \(cli.status): \(cli.stderr)")
                #expect(http.status == 404, "\(route): \(http.status), where \(argv) exits \(cli.status)")
                // The same reason, the CLI's naming `--at` and the store.
                let reason = (http.json["error"] as? String ?? "").replacingOccurrences(
                    of: "before at", with: "before --at")
                #expect(!reason.isEmpty && cli.stderr.hasPrefix("pushtrail: \(reason) in "), "\(route): \(http.text)")
                tally.notFound += 1
            }
        }

        // Tasks and threads, now and at a spread of horizons: two seqs, a time, a date and
        // a time relative to the clock.
        let ats: [String?] = [nil, "@\(head / 10)", "@\(head / 2)", "2026-11-27T06:30:00.250Z", "2026-11-29", "-3d"]
        for at in ats {
            let (query, atArgs) = ServerFixture.question(at.map { [("at", $0)] } ?? [])
            for task in someTasks {
                try same("task", "/v1/tasks/\(task)\(query)", ["task", String(task), "--json"] + atArgs)
            }
            for thread in someThreads {
                try same(
                    "thread", "/v1/threads/\(ServerFixture.encoded(thread))\(query)",
                    ["thread", thread, "--json"] + atArgs)
            }
        }
        let horizonMisses = tally.notFound
        try same("task", "/v1/tasks/999999999", ["task", "999999999", "--json"])
        try same("thread", "/v1/threads/no-such-thread", ["thread", "no-such-thread", "--json"])

        // Events by seq and by id.
        for seq in Self.spread(Array(1...head), 40) {
            try same("event", "/v1/events/@\(seq)", ["show", "@\(seq)", "--json"])
            let id = try #require(try fixture.store.read { try $0.event(seq: seq)?.decode().id })
            try same("event", "/v1/events/\(ServerFixture.encoded(id))", ["show", id, "--json"])
        }
        try same("event", "/v1/events/@\(head + 1)", ["show", "@\(head + 1)", "--json"])
        try same("event", "/v1/events/no-such-event", ["show", "no-such-event", "--json"])

        // Listings: each filter alone and combined, with limit and order.
        var listings: [[(String, String)]] = [
            [("limit", "300")], [("limit", "300"), ("order", "desc")], [("limit", "0")],
            [("type", "delivery"), ("limit", "500")], [("type", "action"), ("order", "desc"), ("limit", "400")],
            [("type", "notification"), ("since", "2026-11-30T12:00:00Z")],
            [("since", "-3d"), ("until", "@\(head - 2000)")],
            [("since", "@\(head / 2)"), ("until", "@\(head / 2 + 700)")],
            [("until", "2026-11-25T06:00:00Z")], [("grep", "HVAC"), ("limit", "200")], [("grep", "water heater")],
            [("category", "TASK_CANCELLED")], [("category", "TASK_IN_PROGRESS"), ("order", "desc"), ("limit", "50")],
            [("notification_type", "task_overdue")], [("user", "nobody")],
        ]
        listings += someTasks.prefix(5).map { [("task", String($0))] }
        listings += someThreads.suffix(5).map { [("thread", $0), ("order", "desc")] }
        listings += someUsers.map { [("user", $0)] }
        listings.append([("user", someUsers[3]), ("type", "notification"), ("since", "2026-11-26")])
        for parameters in listings {
            let (query, argv) = ServerFixture.question(parameters)
            try same("listing", "/v1/events" + query, ["log", "--json"] + argv)
        }

        // The audit, of the whole store and filtered; it has findings, so the CLI exits 1.
        let whole = fixture.cli(["audit", "--json"])
        #expect(whole.status == 1, "audit of the generated store: exit \(whole.status), \(whole.stderr)")
        let findings = (try? JSONSerialization.jsonObject(with: Data(whole.stdout)) as? [String: Any])?["findings"]
        #expect((findings as? [Any])?.count ?? 0 > 100, "\(String(decoding: whole.stdout.prefix(300), as: UTF8.self))")
        var audits: [[(String, String)]] = [
            [], [("since", "-3d")], [("until", "@\(head / 2)")], [("type", "delivery")],
            [("code", "delivery_failed,invalid_transition")], [("code", "fcm_invalid_data")],
            [("category", "TASK_ACTIONABLE"), ("since", "2026-11-27")], [("grep", "HVAC")],
        ]
        audits += someTasks.prefix(5).map { [("task", String($0))] }
        audits += someThreads.prefix(5).map { [("thread", $0)] }
        audits += someUsers.map { [("user", $0)] }
        for parameters in audits {
            let (query, argv) = ServerFixture.question(parameters)
            try same("audit", "/v1/audit" + query, ["audit", "--json"] + argv, findings: true)
        }
        try same("head", "/v1/head", ["head", "--json"])
        try same("stats", "/v1/stats", ["stats", "--json"])

        // The spread did exercise every route, and some horizons fall before a task or thread.
        let counts = tally.compared
        let seconds = Date().timeIntervalSince(started)
        print(
            "generated equivalence: \(counts.sorted { $0.key < $1.key }), \(tally.listed) listed lines, "
                + "\(tally.notFound) 404s, \(seconds) s")
        let reports = counts["task", default: 0] + counts["thread", default: 0]
        #expect(reports + horizonMisses == ats.count * (someTasks.count + someThreads.count), "\(counts)")
        #expect(counts["task", default: 0] >= 120 && counts["thread", default: 0] >= 120, "\(counts)")
        #expect(counts["event"] == 80 && counts["listing"] == listings.count && tally.listed > 5000, "\(tally)")
        #expect(counts["audit"] == audits.count && counts["head"] == 1 && counts["stats"] == 1, "\(counts)")
        #expect(horizonMisses > 10 && tally.notFound == horizonMisses + 4, "\(tally)")
    }
}
