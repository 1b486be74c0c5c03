import Foundation
import Testing

@Suite("show, head and stats")
struct ShowHeadStatsTests {
    static let token = "9d8ad616fd35cf2c9eaa3ca931b5131329be5d2129810b3824c2771116e58928"

    /// A store with three events: a notification (with a device), an action, a delivery.
    func smallStore() throws -> (TempDir, [String]) {
        let dir = try TempDir()
        let lines = [
            Line.notification(
                "2c3728f5-ac04-4973-862a-20422bdae4b1", user: "u_alice", device: ShowHeadStatsTests.token,
                thread: "task-1102",
                task: 1102, at: "2026-11-08T08:00:00.250Z",
                extra: ",\"topic\":\"com.tt.honeyDue.honeyDueDev\",\"x-unknown\":{\"kept\":[1,\"two\",null]}"),
            Line.action(
                "act_0013", task: 1102, action: "complete", outcome: "failed", user: "u_alice",
                at: "2026-11-08T16:42:00Z",
                extra: ",\"http_status\":500,\"error\":\"Internal Server Error\""),
            Line.delivery(
                "dlv_0023", user: "u_alice", notification: "2c3728f5-ac04-4973-862a-20422bdae4b1",
                at: "2026-11-08T08:00:01Z"),
        ]
        let input = try dir.write("small.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return (dir, lines)
    }

    @Test("show --json has exactly seq, recorded_at, hash and event, and event is the ingested line")
    func showJSON() throws {
        let (dir, lines) = try smallStore()
        for (i, line) in lines.enumerated() {
            let r = CLI.run(store: dir.store, ["show", "--json", "@\(i + 1)"])
            #expect(r.status == 0, "\(r)")
            let json = try r.json()
            #expect(Set(json.keys) == ["seq", "recorded_at", "hash", "event"])
            #expect(json["seq"]?.int == i + 1)
            #expect(json["recorded_at"]?.string == CLI.nowText)
            #expect(isLowercaseSHA256Hex(json["hash"]?.string))
            #expect(json["event"] == (try JSON.parse(line)))
            #expect(r.stdout.hasSuffix("}\n"))
            #expect(r.stdout.split(separator: "\n").count == 1, "one line of JSON")
        }
    }

    @Test("show ID and show @SEQ show the same event")
    func showByIDAndSeq() throws {
        let (dir, _) = try smallStore()
        for (id, seq) in [("2c3728f5-ac04-4973-862a-20422bdae4b1", 1), ("act_0013", 2), ("dlv_0023", 3)] {
            let byID = CLI.run(store: dir.store, ["show", "--json", id])
            let bySeq = CLI.run(store: dir.store, ["show", "--json", "@\(seq)"])
            #expect(byID.status == 0)
            #expect(byID.stdout == bySeq.stdout)
            #expect(try byID.json()["seq"]?.int == seq)
            let text = CLI.run(store: dir.store, ["show", id])
            #expect(text.status == 0)
            #expect(text.stdout == CLI.run(store: dir.store, ["show", "@\(seq)"]).stdout)
            #expect(text.stdout.contains(id))
        }
    }

    @Test("show in text: type and id, seq, times in UTC, user, task, thread, the event pretty-printed")
    func showText() throws {
        let (dir, _) = try smallStore()
        let r = CLI.run(store: dir.store, ["show", "@1"])
        #expect(r.status == 0)
        let out = r.stdout
        #expect(out.hasPrefix("notification 2c3728f5-ac04-4973-862a-20422bdae4b1\n"), "\(out)")
        #expect(out.contains("2026-11-08T08:00:00.250Z"))
        #expect(out.contains(CLI.nowText))
        #expect(out.contains("u_alice"))
        #expect(out.contains("1102"))
        #expect(out.contains("task-1102"))
        #expect(out.contains("\"x-unknown\""), "unknown fields are kept and shown")
        #expect(!out.contains("\u{1B}["), "no colour off a terminal")
    }

    @Test("an unknown id, or a seq past the end, is exit 1 with one line on stderr")
    func showUnknown() throws {
        let (dir, _) = try smallStore()
        for target in ["no-such-event", "@4", "@0"] {
            let r = CLI.run(store: dir.store, ["show", target])
            #expect(r.status == 1, "\(target): \(r)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderrLines.count == 1)
            #expect(r.stderr.contains(target))
        }
    }

    @Test("show with no operand, or two, is a usage error")
    func showUsage() throws {
        let (dir, _) = try smallStore()
        #expect(CLI.run(store: dir.store, ["show"]).status == 2)
        #expect(CLI.run(store: dir.store, ["show", "@1", "@2"]).status == 2)
    }

    @Test("device tokens are masked in human output and shown in full with --show-tokens")
    func tokenMasking() throws {
        let (dir, _) = try smallStore()
        let masked = CLI.run(store: dir.store, ["show", "@1"])
        #expect(masked.status == 0)
        #expect(!masked.stdout.contains(ShowHeadStatsTests.token), "the full token leaked: \(masked.stdout)")
        #expect(!masked.stdout.contains(String(ShowHeadStatsTests.token.prefix(16))))
        #expect(masked.stdout.contains("device"))

        for argv in [["show", "--show-tokens", "@1"], ["--show-tokens", "show", "@1"]] {
            let shown = CLI.run(store: dir.store, argv)
            #expect(shown.status == 0)
            #expect(shown.stdout.contains(ShowHeadStatsTests.token), "\(argv)")
        }
        // --json is machine output: the event exactly as ingested.
        let json = CLI.run(store: dir.store, ["show", "--json", "@1"])
        #expect(try json.json()["event"]?["device"]?.string == ShowHeadStatsTests.token)
    }

    @Test("head --json is {seq, hash} with 64 lowercase hex digits, equal to the last event's hash")
    func head() throws {
        let (dir, _) = try smallStore()
        let r = CLI.run(store: dir.store, ["head", "--json"])
        #expect(r.status == 0)
        let head = try r.json()
        #expect(Set(head.keys) == ["seq", "hash"])
        #expect(head["seq"]?.int == 3)
        #expect(isLowercaseSHA256Hex(head["hash"]?.string))
        #expect(head["hash"] == (try CLI.show(dir.store, "@3")?["hash"]))
        #expect(head["hash"] != (try CLI.show(dir.store, "@2")?["hash"]))

        let text = CLI.run(store: dir.store, ["head"])
        #expect(text.stdout == "seq 3 \(head["hash"]?.string ?? "")\n")
    }

    @Test("head changes with every append and every hash differs")
    func headMoves() throws {
        let dir = try TempDir()
        var hashes: Set<String> = []
        for i in 1...4 {
            let input = try dir.write("in\(i).ndjson", lines: [Line.delivery("d-\(i)")])
            #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
            let head = try CLI.head(dir.store)
            #expect(head["seq"]?.int == i)
            hashes.insert(head["hash"]?.string ?? "")
        }
        #expect(hashes.count == 4)
    }

    @Test("stats --json on the sample file matches counts taken from the file itself")
    func statsOnSamples() throws {
        let dir = try TempDir()
        #expect(CLI.run(store: dir.store, ["ingest", Samples.events]).status == 0)

        // Count independently of the store code.
        let events = try JSON.lines(try String(contentsOfFile: Samples.events, encoding: .utf8))
        var byType: [String: Int] = [:]
        var users: Set<String> = []
        var tasks: Set<Int> = []
        var threads: Set<String> = []
        var times: [Int64] = []
        for e in events {
            let type = try #require(e["type"]?.string)
            byType[type, default: 0] += 1
            users.insert(try #require(e["user"]?.string))
            times.append(try UTC.microseconds(try #require(e["at"]?.string)))
            switch type {
            case "notification":
                // iOS: the payload's keys; Android: the FCM message's data map, whose values are strings.
                let data = e["payload"]?["android"]?["data"] ?? e["payload"]?["data"]
                let androidTask = data?["task_id"].flatMap { $0.int ?? $0.string.flatMap { Int($0) } }
                if let t = e["payload"]?["task_id"]?.int ?? androidTask { tasks.insert(t) }
                if let t = e["payload"]?["aps"]?["thread-id"]?.string ?? data?["thread_id"]?.string {
                    threads.insert(t)
                }
            case "action":
                if let t = e["task_id"]?.int { tasks.insert(t) }
                if let t = e["thread_id"]?.string { threads.insert(t) }
            default: break
            }
        }

        let r = CLI.run(store: dir.store, ["stats", "--json"])
        #expect(r.status == 0)
        let stats = try r.json()
        #expect(
            Set(stats.keys) == [
                "events", "by_type", "tasks", "threads", "users", "first_at", "last_at", "store_bytes", "format",
                "dictionaries", "streams",
            ])
        // 224 events: too few to train a dictionary on, so records are whole (format 1).
        #expect(stats["format"]?.int == 1 && stats["dictionaries"]?.int == 0)
        #expect(stats["events"]?.int == events.count)
        #expect(stats["by_type"]?["notification"]?.int == byType["notification"])
        #expect(stats["by_type"]?["action"]?.int == byType["action"])
        #expect(stats["by_type"]?["delivery"]?.int == byType["delivery"])
        #expect(stats["users"]?.int == users.count)
        #expect(stats["tasks"]?.int == tasks.count)
        #expect(stats["threads"]?.int == threads.count)
        #expect(stats["first_at"]?.string == UTC.format(times.min() ?? 0))
        #expect(stats["last_at"]?.string == UTC.format(times.max() ?? 0))
        let size = try FileManager.default.attributesOfItem(atPath: dir.store + "/data.mdb")[.size] as? NSNumber
        #expect(stats["store_bytes"]?.int == size?.intValue)
        // The figures STORIES.md gives, as a cross-check of the counting above.
        #expect(events.count == 224)
        #expect(byType == ["notification": 86, "delivery": 84, "action": 54])

        let text = CLI.run(store: dir.store, ["stats"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("224"))
    }

    @Test("stats orders first_at and last_at by time, not by input order or written offset")
    func statsTimeSpan() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "in.ndjson",
            lines: [
                Line.delivery("late", at: "2026-11-29T10:00:00Z"),
                Line.delivery("early-with-offset", at: "2026-11-03T01:30:00+05:00"),  // 2026-11-02T20:30Z
                Line.delivery("middle", at: "2026-11-10T00:00:00Z"),
            ])
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        let stats = try CLI.stats(dir.store)
        #expect(stats["first_at"]?.string == "2026-11-02T20:30:00.000Z")
        #expect(stats["last_at"]?.string == "2026-11-29T10:00:00.000Z")
    }
}
