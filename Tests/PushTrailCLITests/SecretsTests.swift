import Foundation
import Testing

/// A store of `Samples/events.ndjson` plus a seeded corpus that puts device tokens on
/// every event type and provokes `sent_after_unregistered` findings (whose messages
/// name a device), and what the tests need to know about it.
final class TokenCorpus {
    let dir: TempDir
    var store: String { dir.store }
    /// Every device token stored, as ingested.
    private(set) var tokens: Set<String> = []
    private(set) var ids: [String] = []
    private(set) var notificationIDs: [String] = []
    private(set) var deliveryIDs: [String] = []
    private(set) var threads: Set<String> = []
    private(set) var tasks: Set<Int> = []
    private(set) var users: Set<String> = []
    private(set) var eventCount = 0

    /// Seeded events: for each device, a notification, its 410 Unregistered answer,
    /// then another notification to the same device (a finding), an action and a
    /// delivery that carry the device themselves. Tokens are 64 hex digits, plus a
    /// 160-digit one and one of 12 (short tokens are masked entirely).
    static func seededLines(seed: UInt64) -> [String] {
        var rng = TamperRandom(seed: seed)
        var devices = (0..<8).map { _ in rng.token() }
        devices.append(rng.token() + rng.token() + String(rng.token().prefix(32)))
        devices.append(String(rng.token().prefix(12)))
        var lines: [String] = []
        for (k, device) in devices.enumerated() {
            let task = 5000 + k
            let first = String(format: "5eed0000-0000-4000-8000-%012d", 2 * k)
            let second = String(format: "5eed0000-0000-4000-8000-%012d", 2 * k + 1)
            let user = "u_secret\(k % 3)"
            lines.append(
                Line.notification(
                    first, user: user, device: device, thread: "task-\(task)", task: task,
                    at: "2026-11-2\(k % 5)T08:00:00Z",
                    extra: ",\"topic\":\"com.example.app\""))
            lines.append(
                Line.delivery(
                    "sec-dlv-\(k)", user: user, notification: first, status: 410, at: "2026-11-2\(k % 5)T08:00:01Z",
                    extra: ",\"reason\":\"Unregistered\",\"device\":\"\(device)\""))
            lines.append(
                Line.notification(
                    second, user: user, device: device, thread: "task-\(task)", task: task,
                    at: "2026-11-2\(k % 5)T09:00:00Z",
                    extra: ",\"topic\":\"com.example.app\""))
            lines.append(
                Line.action(
                    "sec-act-\(k)", task: task, action: "open", user: user, at: "2026-11-2\(k % 5)T09:00:05Z",
                    extra: ",\"device\":\"\(device)\",\"notification_id\":\"\(second)\",\"thread_id\":\"task-\(task)\"")
            )
        }
        return lines
    }

    init() throws {
        dir = try TempDir()
        let seeded = try dir.write("seeded.ndjson", lines: TokenCorpus.seededLines(seed: 43))
        let r = CLI.run(store: dir.store, ["ingest", Samples.events, seeded])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        let log = CLI.run(store: dir.store, ["log", "--json"])
        for line in try JSON.lines(log.stdout) {
            guard let event = line["event"] else { continue }
            eventCount += 1
            let id = event["id"]?.string ?? ""
            ids.append(id)
            if let d = event["device"]?.string { tokens.insert(d) }
            // An Android notification names its device in the FCM message it sent.
            if let d = event["payload"]?["token"]?.string { tokens.insert(d) }
            if let u = event["user"]?.string { users.insert(u) }
            switch event["type"]?.string {
            case "notification":
                notificationIDs.append(id)
                let data = event["payload"]?["android"]?["data"] ?? event["payload"]?["data"]
                if let t = event["payload"]?["aps"]?["thread-id"]?.string ?? data?["thread_id"]?.string {
                    threads.insert(t)
                }
                let androidTask = data?["task_id"].flatMap { $0.int ?? $0.string.flatMap { Int($0) } }
                if let t = event["payload"]?["task_id"]?.int ?? androidTask { tasks.insert(t) }
            case "action":
                if let t = event["thread_id"]?.string { threads.insert(t) }
                if let t = event["task_id"]?.int { tasks.insert(t) }
            default:
                deliveryIDs.append(id)
            }
        }
    }

    /// The tokens found in `text`.
    func leaked(in text: String) -> [String] { tokens.filter { text.contains($0) }.sorted() }
}

@Suite("secrets: device tokens never appear unmasked in human output or error messages")
struct SecretsTests {
    /// Every human-output command over the whole corpus: (argv, outcome).
    func humanRuns(_ c: TokenCorpus) -> [([String], Outcome)] {
        var runs: [[String]] = [
            ["log"], ["log", "-r"], ["log", "-n", "5"], ["log", "--type", "notification"],
            ["log", "--type", "delivery"],
            ["audit"], ["audit", "--code", "sent_after_unregistered"], ["stats"], ["head"], ["verify"],
        ]
        runs += c.users.sorted().flatMap { [["log", "--user", $0], ["audit", "--user", $0]] }
        // Searching for a token finds its events, but the lines shown still mask it.
        runs += c.tokens.sorted().map { ["log", "--grep", $0] }
        runs += c.threads.sorted().flatMap { [["thread", $0], ["audit", "--thread", $0], ["log", "--thread", $0]] }
        runs += c.tasks.sorted().map { ["task", String($0)] }
        runs += c.ids.map { ["show", $0] }
        runs += (1...c.eventCount).map { ["show", "@\($0)"] }
        // .apns payloads to stdout: the device is not part of a payload.
        runs += c.notificationIDs.map { ["export", $0, "-o", "-", "--bundle", "com.example.app"] }
        runs += c.threads.sorted().map { ["export", "--thread", $0, "-o", "-", "--bundle", "com.example.app"] }
        // HTML reports and replay scripts show devices in their meta lines, masked.
        runs += c.threads.sorted().flatMap {
            [
                ["report", "--thread", $0, "-o", "-"],
                ["replay", "--thread", $0, "--dry-run", "--bundle", "com.example.app"],
            ]
        }
        runs += c.tasks.sorted().map { ["report", "--task", String($0), "-o", "-"] }
        runs += c.users.sorted().map { ["report", "--user", $0, "--since", "2020-01-01", "-o", "-"] }
        return runs.map { ($0, CLI.run(store: c.store, $0)) }
    }

    @Test("every human-output command over Samples/events.ndjson and a seeded corpus: 0 tokens in stdout or stderr")
    func humanOutput() throws {
        let c = try TokenCorpus()
        #expect(c.tokens.count == 22, "12 sample devices (6 of them FCM tokens) and 10 seeded: \(c.tokens.count)")
        var commands = 0
        var masksSeen = 0
        for (argv, r) in humanRuns(c) {
            commands += 1
            #expect([0, 1].contains(r.status), "\(argv): \(r)")
            #expect(c.leaked(in: r.stdout) == [], "\(argv) prints a token on stdout")
            #expect(c.leaked(in: r.stderr) == [], "\(argv) prints a token on stderr")
            if c.tokens.contains(where: { $0.count > 12 && r.stdout.contains($0.prefix(4) + "…" + $0.suffix(4)) }) {
                masksSeen += 1
            }
        }
        // The device rows and finding messages are there, masked.
        #expect(masksSeen > 100, "\(masksSeen) of \(commands) outputs show a masked token")
        print(
            "secrets: \(commands) human-output commands over \(c.eventCount) events and \(c.tokens.count) tokens: "
                + "0 leaks")
    }

    @Test(
        "show and thread print a device masked to its first and last four characters; a short token is hidden entirely")
    func maskShape() throws {
        let c = try TokenCorpus()
        let token = "9d8ad616fd35cf2c9eaa3ca931b5131329be5d2129810b3824c2771116e58928"  // u_alice, Samples
        let show = CLI.run(store: c.store, ["show", "211d7f5a-7c27-42dc-95c3-3ad40a4d8571"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("9d8a…8928"), "\(show.stdout)")
        #expect(!show.stdout.contains(token))
        let short = try #require(c.tokens.first { $0.count == 12 })
        let seqOfShort = try #require(
            try JSON.lines(CLI.run(store: c.store, ["log", "--json", "--grep", short]).stdout).first?["seq"]?.int)
        let hidden = CLI.run(store: c.store, ["show", "@\(seqOfShort)"])
        #expect(!hidden.stdout.contains(short) && !hidden.stdout.contains(String(short.prefix(4))), "\(hidden.stdout)")
    }

    @Test(
        "errors don't echo a stored token: unknown ids, threads, tasks, a non-notification export, conflicts, rejects"
    )
    func errorPaths() throws {
        let c = try TokenCorpus()
        var rng = TamperRandom(seed: 47)
        let stranger = rng.token()  // token-shaped, not stored
        let anyToken = try #require(c.tokens.sorted().first)
        let deliveryID = try #require(c.deliveryIDs.first)
        let runs: [[String]] = [
            ["show", stranger], ["show", "@999999"], ["thread", stranger], ["task", "999999"], ["export", stranger],
            ["export", deliveryID, "-o", "-"], ["export", "--thread", stranger, "-o", "-"],
            ["log", "--user", stranger],
            ["audit", "--user", stranger], ["audit", "--code", "nonsense"], ["log", "--since", stranger],
            ["show", String(anyToken.prefix(20))],
        ]
        for argv in runs {
            let r = CLI.run(store: c.store, argv)
            #expect(c.leaked(in: r.stdout + r.stderr) == [], "\(argv): \(r)")
        }

        // A conflict (a stored id with a different device) and rejected lines whose bad
        // field holds a token: the messages quote at most 40 characters of a value.
        let notification = try #require(
            try JSON.lines(CLI.run(store: c.store, ["log", "--raw", "--grep", anyToken, "-n", "1"]).stdout).first)
        let conflicting = Line.notification(
            notification["id"]?.string ?? "", device: c.tokens.sorted().last, thread: "t", task: 1)
        let bad = try c.dir.write(
            "bad.ndjson",
            lines: [
                conflicting,
                "{\"type\":\"\(anyToken)\",\"id\":\"x1\",\"at\":\"\(Line.at)\",\"user\":\"u\","
                    + "\"device\":\"\(anyToken)\"}",
                "{\"type\":\"delivery\",\"id\":\"x2\",\"at\":\"\(anyToken)\",\"user\":\"u\","
                    + "\"notification_id\":\"n\",\"status\":200}",
                "{\"type\":\"delivery\",\"id\":\"x3\",\"at\":\"\(Line.at)\",\"user\":\"u\","
                    + "\"notification_id\":\"n\",\"status\":200,\"device\":[\"\(anyToken)\"]}",
                "{\"type\":\"delivery\",\"id\":\"x4\",\"at\":\"\(Line.at)\",\"user\":\"u\","
                    + "\"notification_id\":\"n\",\"status\":\"\(anyToken)\"}",
                "{\"type\":\"action\",\"id\":\"x5\",\"at\":\"\(Line.at)\",\"user\":\"u\","
                    + "\"task_id\":1,\"action\":\"\(anyToken)\",\"outcome\":\"ok\"}",
                "{\"type\":\"delivery\",\"id\":\"\(anyToken)x\",\"at\":\"\(Line.at)\",\"user\":\"u\","
                    + "\"notification_id\":\"n\",\"status\":200,\"status\":200}",
                "{\"device\":\"\(anyToken)\"",
            ])
        for argv in [["ingest", bad], ["ingest", "--json", bad], ["ingest", "--strict", bad]] {
            let r = CLI.run(store: c.store, argv)
            #expect(r.status == 65, "\(argv): \(r)")
            // --strict stops at the first bad line; otherwise one line per bad line.
            #expect(r.stderrLines.count >= (argv.contains("--strict") ? 1 : 8), "\(r)")
            #expect(c.leaked(in: r.stdout + r.stderr) == [], "\(argv): \(r)")
        }
    }

    @Test("through the real process too: show, thread, task, audit and log keep tokens masked")
    func realProcess() throws {
        let c = try TokenCorpus()
        let argvs: [[String]] = [
            ["show", "@1"], ["thread", "task-1103"], ["task", "1103"], ["audit"], ["log"], ["thread", "task-5000"],
            ["show", "nope-" + String(repeating: "5eed", count: 16)],
        ]
        for argv in argvs {
            let r = try Binary.run(["--store", c.store] + argv)
            #expect([0, 1].contains(r.status), "\(argv): \(r)")
            #expect(c.leaked(in: r.stdout + r.stderr) == [], "\(argv): \(r)")
        }
    }

    @Test("--show-tokens reveals them on purpose: show, thread and audit findings print the full token")
    func showTokens() throws {
        let c = try TokenCorpus()
        let token = "9d8ad616fd35cf2c9eaa3ca931b5131329be5d2129810b3824c2771116e58928"
        let show = CLI.run(store: c.store, ["show", "211d7f5a-7c27-42dc-95c3-3ad40a4d8571", "--show-tokens"])
        #expect(show.status == 0)
        #expect(show.stdout.contains(token), "\(show.stdout)")
        let global = CLI.run(store: c.store, ["--show-tokens", "show", "211d7f5a-7c27-42dc-95c3-3ad40a4d8571"])
        #expect(global.stdout.contains(token), "as a global option before the command too")
        let thread = CLI.run(store: c.store, ["thread", "task-1103", "--show-tokens"])
        #expect(thread.status == 0)
        #expect(thread.stdout.contains(token), "\(thread.stdout)")

        // The seeded corpus re-notifies every device after its 410: audit names them.
        let seededTokens = Set(
            TokenCorpus.seededLines(seed: 43).compactMap { line -> String? in
                (try? JSON.parse(line))?["device"]?.string
            })
        let audit = CLI.run(store: c.store, ["audit", "--code", "sent_after_unregistered", "--show-tokens"])
        #expect(audit.status == 1)
        for t in seededTokens { #expect(audit.stdout.contains(t), "audit --show-tokens names \(t)") }
        let masked = CLI.run(store: c.store, ["audit", "--code", "sent_after_unregistered"])
        #expect(c.leaked(in: masked.stdout) == [])
    }

    @Test("machine output (--json, --raw) keeps events exactly as ingested, device included: it is not human output")
    func machineOutput() throws {
        // Tokens are masked in *human* output only. `log --raw` must give back what was
        // ingested (re-ingestible), and `show --json` / `log --json` embed the
        // event as ingested, so a token stays in them. Derived JSON (`thread`, `task`,
        // `audit --json`) has no device field; audit's finding messages stay masked.
        let c = try TokenCorpus()
        let raw = CLI.run(store: c.store, ["log", "--raw"])
        #expect(c.leaked(in: raw.stdout).count == c.tokens.count)
        let show = CLI.run(store: c.store, ["show", "--json", "211d7f5a-7c27-42dc-95c3-3ad40a4d8571"])
        #expect(
            try show.json()["event"]?["device"]?.string
                == "9d8ad616fd35cf2c9eaa3ca931b5131329be5d2129810b3824c2771116e58928")
        for argv in [["thread", "task-1103", "--json"], ["task", "1103", "--json"], ["audit", "--json"]] {
            let r = CLI.run(store: c.store, argv)
            #expect(c.leaked(in: r.stdout + r.stderr) == [], "\(argv)")
        }
    }
}
