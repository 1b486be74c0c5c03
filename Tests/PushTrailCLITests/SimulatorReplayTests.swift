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

/// A stand-in for `xcrun` in a directory of its own, to put first on PATH. Each call
/// records the time it started (`date +%s%N`), its arguments and its standard input.
/// With `failOnCall`, that call exits 1 with two lines on stderr, without reading its
/// input. With `sleep`, a stand-in `sleep` records its argument and returns at once.
final class StandIn: @unchecked Sendable {
    let dir: TempDir
    var bin: String { dir.file("bin") }
    var log: String { dir.file("log") }
    /// PATH with the stand-ins first (the script needs date, cat and printf).
    var path: String { bin + ":/usr/bin:/bin" }

    init(failOnCall: Int? = nil, sleep: Bool = false) throws {
        dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.file("bin"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir.file("log"), withIntermediateDirectories: false)
        var xcrun = """
            #!/bin/sh
            log='\(log)'
            n=$(( $(cat "$log/count" 2>/dev/null || echo 0) + 1 ))
            echo "$n" > "$log/count"
            date +%s%N > "$log/$n.time"
            printf '%s\\n' "$@" > "$log/$n.args"
            grep '^SigIgn:' /proc/$$/status > "$log/$n.sigign" 2>/dev/null || true

            """
        if let failOnCall {
            xcrun += """
                if [ "$n" -eq \(failOnCall) ]; then
                    echo "Invalid device: $3" >&2
                    echo "second line of the error" >&2
                    exit 1
                fi

                """
        }
        xcrun += "cat > \"$log/$n.stdin\"\necho \"Notification sent to '$4'\"\n"
        try install("xcrun", xcrun)
        if sleep { try install("sleep", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)/sleeps'\n") }
    }

    private func install(_ name: String, _ script: String) throws {
        let p = try dir.write("bin/" + name, bytes: Array(script.utf8))
        chmod(p, 0o755)
    }

    struct Call {
        var arguments: [String]
        var input: [UInt8]
        var startNanoseconds: Int64
    }

    /// The calls, in the order they were made.
    func calls() throws -> [Call] {
        guard let count = try? String(contentsOfFile: log + "/count", encoding: .utf8) else { return [] }
        return try (1...Int(count.trimmingCharacters(in: .whitespacesAndNewlines))!).map { n in
            let args = try String(contentsOfFile: "\(log)/\(n).args", encoding: .utf8)
            let time = try String(contentsOfFile: "\(log)/\(n).time", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            return Call(
                arguments: args.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init),
                input: Array(FileManager.default.contents(atPath: "\(log)/\(n).stdin") ?? Data()),
                startNanoseconds: try #require(Int64(time), "date +%s%N gave \(time)"))
        }
    }

    /// The arguments `sleep` was called with.
    func sleeps() throws -> [String] {
        guard let text = try? String(contentsOfFile: log + "/sleeps", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }
}

/// A thread of three notifications with an answer after each, hand-written: gaps of
/// 2.5 seconds and 3 days 2 hours, a title and an error with newlines, a bundle id with a quote.
enum Chores {
    static let thread = "chores-1"
    static let n1 = "a1000000-0000-4000-8000-000000000001"
    static let n2 = "a1000000-0000-4000-8000-000000000002"
    static let n3 = "a1000000-0000-4000-8000-000000000003"
    static let token = "9d8ad616c0ffee00112233445566778899aabbccddeeff00112233445566b7f0"

    static let lines: [String] = [
        #"{"type":"notification","id":"a1000000-0000-4000-8000-000000000001","at":"2026-11-20T08:00:00Z","#
            + #""user":"u_ann","device":"9d8ad616c0ffee00112233445566778899aabbccddeeff00112233445566b7f0","#
            + #""topic":"com.example.honeydue","payload":{"aps":{"alert":{"title":"Due soon","#
            + #""body":"Take out the bins"},"category":"TASK_ACTIONABLE","thread-id":"chores-1"},"task_id":7}}"#,
        #"{"type":"delivery","id":"dlv-1","at":"2026-11-20T08:00:01Z","user":"u_ann","#
            + #""notification_id":"a1000000-0000-4000-8000-000000000001","status":200}"#,
        #"{"type":"notification","id":"a1000000-0000-4000-8000-000000000002","at":"2026-11-20T08:00:02.5Z","#
            + #""user":"u_ann","topic":"com.example.honeydue","payload":{"aps":{"alert":{"title":"Don't\nforget","#
            + #""body":"The bins"},"category":"TASK_ACTIONABLE","thread-id":"chores-1"},"task_id":7,"#
            + #""note":"a \"quoted\" word"}}"#,
        #"{"type":"action","id":"act-1","at":"2026-11-20T09:00:00Z","user":"u_ann","task_id":7,"action":"complete","#
            + #""outcome":"failed","notification_id":"a1000000-0000-4000-8000-000000000002","http_status":500,"#
            + #""error":"Internal\nServer Error"}"#,
        #"{"type":"notification","id":"a1000000-0000-4000-8000-000000000003","at":"2026-11-23T10:00:02.5Z","#
            + #""user":"u_ann","topic":"com.example.o'neil","payload":{"aps":{"alert":{"title":"Done","#
            + #""body":"Bins are out"},"category":"TASK_COMPLETED","thread-id":"chores-1"},"task_id":7}}"#,
        #"{"type":"delivery","id":"dlv-3","at":"2026-11-23T10:00:03.5Z","user":"u_ann","#
            + #""notification_id":"a1000000-0000-4000-8000-000000000003","status":410,"reason":"Unregistered"}"#,
    ]

    /// The `.apns` bytes of each notification, written out by hand.
    static let payloads: [String] = [
        #"{"Simulator Target Bundle":"com.example.honeydue","aps":{"alert":{"title":"Due soon","#
            + #""body":"Take out the bins"},"category":"TASK_ACTIONABLE","thread-id":"chores-1"},"task_id":7}"#
            + "\n",
        #"{"Simulator Target Bundle":"com.example.honeydue","aps":{"alert":{"title":"Don't\nforget","#
            + #""body":"The bins"},"category":"TASK_ACTIONABLE","thread-id":"chores-1"},"task_id":7,"#
            + #""note":"a \"quoted\" word"}"#
            + "\n",
        #"{"Simulator Target Bundle":"com.example.o'neil","aps":{"alert":{"title":"Done","body":"Bins are out"},"#
            + #""category":"TASK_COMPLETED","thread-id":"chores-1"},"task_id":7}"#
            + "\n",
    ]

    /// `replay --thread chores-1 --device "Kid's iPhone" --dry-run`, worked out by hand.
    static let script = #"""
        #!/bin/sh
        # pushtrail replay: thread chores-1 as of @6, 3 notifications
        set -e

        # push 1/3 #1 TASK_ACTIONABLE "Due soon" · 2026-11-20T08:00:00.000Z · user u_ann · device 9d8a…b7f0
        xcrun simctl push 'Kid'\''s iPhone' 'com.example.honeydue' - <<'PUSHTRAIL_APNS_1'
        <payload 1>
        PUSHTRAIL_APNS_1

        # 2026-11-20T08:00:01.000Z  #2  delivery 200 accepted · user u_ann
        # 2.5 seconds later
        sleep 2.5
        # push 2/3 #3 TASK_ACTIONABLE "Don't␣forget" · 2026-11-20T08:00:02.500Z · user u_ann
        xcrun simctl push 'Kid'\''s iPhone' 'com.example.honeydue' - <<'PUSHTRAIL_APNS_3'
        <payload 2>
        PUSHTRAIL_APNS_3

        # 2026-11-20T09:00:00.000Z  #4  action complete → failed (HTTP 500: Internal␣Server Error) · user u_ann
        # 3 days 2 hours later — waiting 10 seconds (--max-gap)
        sleep 10
        # push 3/3 #5 TASK_COMPLETED "Done" · 2026-11-23T10:00:02.500Z · user u_ann
        xcrun simctl push 'Kid'\''s iPhone' 'com.example.o'\''neil' - <<'PUSHTRAIL_APNS_5'
        <payload 3>
        PUSHTRAIL_APNS_5
        # 2026-11-23T10:00:03.500Z  #6  delivery 410 Unregistered · user u_ann

        """#

    /// What a real run prints on stdout.
    static let pushed = """
        pushed 1/3 #1 TASK_ACTIONABLE "Due soon" · 2026-11-20T08:00:00.000Z · user u_ann · device 9d8a…b7f0
          2026-11-20T08:00:01.000Z  #2  delivery 200 accepted · user u_ann
        pushed 2/3 #3 TASK_ACTIONABLE "Don't␣forget" · 2026-11-20T08:00:02.500Z · user u_ann
          2026-11-20T09:00:00.000Z  #4  action complete → failed (HTTP 500: Internal␣Server Error) · user u_ann
        pushed 3/3 #5 TASK_COMPLETED "Done" · 2026-11-23T10:00:02.500Z · user u_ann
          2026-11-23T10:00:03.500Z  #6  delivery 410 Unregistered · user u_ann

        """

    static func store(_ dir: TempDir) throws -> String { try ReplayFixtures.ingest(dir, lines) }
}

@Suite("replay: a thread pushed to the iOS Simulator")
struct SimulatorReplayTests {
    typealias R = ReplayFixtures

    // MARK: - The plan

    /// An event of a hand-made timeline: a name, a time in microseconds, a kind.
    struct Item: Equatable {
        var name: String
        var at: Int64
        var notification: Bool
    }

    static func n(_ name: String, _ at: Int64) -> Item { Item(name: name, at: at, notification: true) }
    static func e(_ name: String, _ at: Int64) -> Item { Item(name: name, at: at, notification: false) }

    static func plan(_ items: [Item], speed: Double = 1, cap: Int64? = nil) -> ReplayPlan<Item> {
        ReplayPlan(
            items, at: { Timestamp(microseconds: $0.at) }, isNotification: { $0.notification }, speed: speed,
            maxWaitMicroseconds: cap)
    }

    static let second: Int64 = 1_000_000
    static let day: Int64 = 86_400 * second

    @Test(
        "each wait is the gap from the previous notification divided by the speed, to the nearest microsecond",
        arguments: [
            (1.0, [0, 3_000_000, 500_000] as [Int64]),
            (2.0, [0, 1_500_000, 250_000]),
            (0.5, [0, 6_000_000, 1_000_000]),
            (3.0, [0, 1_000_000, 166_667]),
        ])
    func waitsAreGapsOverSpeed(_ speed: Double, _ waits: [Int64]) {
        let plan = Self.plan(
            [Self.n("a", 10 * Self.second), Self.n("b", 13 * Self.second), Self.n("c", 13_500_000)], speed: speed)
        #expect(plan.steps.map(\.notification.name) == ["a", "b", "c"])
        #expect(plan.steps.map(\.waitMicroseconds) == waits)
        #expect(plan.steps.map(\.gapMicroseconds) == [0, 3_000_000, 500_000])
        #expect(plan.steps.allSatisfy { !$0.capped })
    }

    @Test("a wait longer than the cap is cut to the cap and marked; shorter ones are kept")
    func capping() {
        let d = 4 * Self.second + 3 * Self.day
        let items = [
            Self.n("a", 0), Self.n("b", 3 * Self.second), Self.n("c", 4 * Self.second), Self.n("d", d),
            Self.n("e", d + 2 * Self.second),
        ]
        let plan = Self.plan(items, cap: 2 * Self.second)
        #expect(
            plan.steps.map(\.waitMicroseconds) == [0, 2 * Self.second, Self.second, 2 * Self.second, 2 * Self.second])
        #expect(plan.steps.map(\.gapMicroseconds) == [0, 3 * Self.second, Self.second, 3 * Self.day, 2 * Self.second])
        // A gap equal to the cap is not shortened.
        #expect(plan.steps.map(\.capped) == [false, true, false, true, false])
        // The cap applies after the speed: 3 seconds at speed 2 is 1.5 seconds, under the cap.
        let fast = Self.plan(items, speed: 2, cap: 2 * Self.second)
        #expect(fast.steps.map(\.waitMicroseconds) == [0, 1_500_000, 500_000, 2 * Self.second, Self.second])
        #expect(fast.steps.map(\.capped) == [false, false, false, true, false])
    }

    @Test("without a cap (--max-gap 0) the waits are the real gaps, days included")
    func noCap() {
        let plan = Self.plan([Self.n("a", 0), Self.n("b", 3 * Self.day + 2 * 3_600 * Self.second)], cap: nil)
        #expect(plan.steps.map(\.waitMicroseconds) == [0, 3 * Self.day + 7_200 * Self.second])
        #expect(plan.steps.map(\.capped) == [false, false])
    }

    @Test("a single notification is one step with no wait; the events around it are before and after it")
    func single() {
        let plan = Self.plan(
            [Self.e("early", 0), Self.n("only", 5 * Self.second), Self.e("answer", 9 * Self.second)], cap: Self.second)
        #expect(plan.steps.count == 1)
        #expect(plan.steps[0].notification.name == "only")
        #expect(plan.steps[0].waitMicroseconds == 0)
        #expect(plan.steps[0].gapMicroseconds == 0)
        #expect(plan.steps[0].before.map(\.name) == ["early"])
        #expect(plan.after.map(\.name) == ["answer"])
        #expect(Self.plan([Self.e("x", 0)]).steps.isEmpty)
    }

    @Test("notifications with the same at keep their order and wait 0 between them")
    func ties() {
        let plan = Self.plan(
            [Self.n("seq 4", 7 * Self.second), Self.n("seq 2", 7 * Self.second), Self.n("seq 9", 8 * Self.second)],
            speed: 0.5)
        #expect(plan.steps.map(\.notification.name) == ["seq 4", "seq 2", "seq 9"])
        #expect(plan.steps.map(\.waitMicroseconds) == [0, 0, 2 * Self.second])
    }

    @Test("actions and deliveries are attached to the next notification, and those after the last to the end")
    func attachedEvents() {
        let items = [
            Self.e("action before", 0), Self.n("n1", 1), Self.e("delivery 1", 2), Self.e("action 1", 3),
            Self.n("n2", 4), Self.n("n3", 5), Self.e("delivery 3", 6), Self.e("action 3", 7),
        ]
        let plan = Self.plan(items)
        #expect(plan.steps.map(\.notification.name) == ["n1", "n2", "n3"])
        #expect(plan.steps.map { $0.before.map(\.name) } == [["action before"], ["delivery 1", "action 1"], []])
        #expect(plan.after.map(\.name) == ["delivery 3", "action 3"])
    }

    // MARK: - --dry-run

    @Test(
        "--dry-run prints the exact sh script: comments on one line, quoted device and bundle, sleeps, here-documents")
    func dryRunScript() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let r = CLI.run(store: store, ["replay", "--thread", Chores.thread, "--device", "Kid's iPhone", "--dry-run"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
        var expected = Chores.script
        for (i, payload) in Chores.payloads.enumerated() {
            expected = expected.replacing("<payload \(i + 1)>\n", with: payload)
        }
        #expect(r.stdout == expected)
        // The payloads are the bytes export writes.
        for (id, payload) in zip([Chores.n1, Chores.n2, Chores.n3], Chores.payloads) {
            #expect(CLI.run(store: store, ["export", id, "-o", "-"]).stdoutBytes == Array(payload.utf8))
        }
    }

    @Test(
        "the --dry-run script, run by /bin/sh, pushes payloads byte for byte to device and bundle and sleeps as planned"
    )
    func dryRunScriptRuns() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let script = CLI.run(
            store: store, ["replay", "--thread", Chores.thread, "--device", "Kid's iPhone", "--dry-run"])
        #expect(script.status == 0, "\(script)")
        let standIn = try StandIn(sleep: true)
        let path = try dir.write("replay.sh", bytes: script.stdoutBytes)
        let (status, output) = try Self.sh(path, path: standIn.path)
        #expect(status == 0, "\(output)")
        let calls = try standIn.calls()
        #expect(calls.count == 3)
        #expect(
            calls.map(\.arguments) == [
                ["simctl", "push", "Kid's iPhone", "com.example.honeydue", "-"],
                ["simctl", "push", "Kid's iPhone", "com.example.honeydue", "-"],
                ["simctl", "push", "Kid's iPhone", "com.example.o'neil", "-"],
            ])
        #expect(calls.map(\.input) == Chores.payloads.map { Array($0.utf8) })
        #expect(try standIn.sleeps() == ["2.5", "10"])
    }

    @Test(
        "a topic with a quote and a combining accent stays one word of the --dry-run script: no command runs from it")
    func dryRunQuoteWithAccent() throws {
        let dir = try TempDir()
        // "'" then U+0301 is one Character, so a replace by Character finds no quote in it.
        let topic = "com.x'\u{301}; echo INJECTED >&2; '"
        let store = try R.ingest(
            dir,
            [
                R.notification(
                    "d1000000-0000-4000-8000-000000000001", at: "2026-11-20T08:00:00Z", task: 7, thread: "t",
                    topic: topic)
            ])
        let r = CLI.run(store: store, ["replay", "--thread", "t", "--dry-run"])
        #expect(r.status == 0, "\(r)")
        let standIn = try StandIn()
        let (status, errors) = try Self.sh(try dir.write("replay.sh", bytes: r.stdoutBytes), path: standIn.path)
        #expect(status == 0, "\(errors)")
        #expect(!errors.contains("INJECTED"), "\(errors)")
        #expect(try standIn.calls().map(\.arguments) == [["simctl", "push", "booted", topic, "-"]])
    }

    @Test("--speed and --max-gap 0 change the sleeps; --bundle replaces every topic")
    func dryRunTiming() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let r = CLI.run(
            store: store,
            ["replay", "--thread", Chores.thread, "--dry-run", "--speed", "2", "--max-gap", "0", "--bundle", "com.cli"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("sleep ") } == ["sleep 1.25", "sleep 133200"])
        #expect(lines.contains("# 2.5 seconds later — waiting 1.25 seconds"))
        #expect(lines.contains("# 3 days 2 hours later — waiting 1 day 13 hours"))
        #expect(
            lines.filter { $0.hasPrefix("xcrun ") }.allSatisfy {
                $0.hasPrefix("xcrun simctl push 'booted' 'com.cli' - <<'PUSHTRAIL_APNS_")
            })
        #expect(lines.filter { $0.hasPrefix("{\"Simulator Target Bundle\":\"com.cli\",") }.count == 3)
        // A cap shorter than a millisecond rounds to no sleep at all.
        let tiny = CLI.run(store: store, ["replay", "--thread", Chores.thread, "--dry-run", "--max-gap", "0.0004"])
        #expect(tiny.status == 0, "\(tiny)")
        #expect(!tiny.stdout.contains("sleep"), "\(tiny)")
    }

    /// The notifications of thread task-1102 up to Alice's failed complete (STORIES.md a).
    static let storyA: [(seq: Int, id: String)] = [
        (23, "0d7a0fbb-6d33-4a22-8351-3e1feea68eb8"), (24, "9725e629-e08f-412f-8845-cff8400f2acd"),
        (54, "2c3728f5-ac04-4973-862a-20422bdae4b1"), (55, "730c8628-6852-4c59-96f9-c648d234605a"),
    ]

    @Test(
        "on the sample, story a's thread as of the evening of the failed complete gives the exact script, and it runs")
    func dryRunSample() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let r = CLI.run(store: store, ["replay", "--thread", "task-1102", "--at", "2026-11-08T23:59:00Z", "--dry-run"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
        var expected = #"""
            #!/bin/sh
            # pushtrail replay: thread task-1102 as of 2026-11-08T23:59:00.000Z, 4 notifications
            set -e

            # push 1/4 #23 TASK_ACTIONABLE "Due soon: Clean gutters" · 2026-11-04T08:00:00.180Z · user u_alice · \#
            device 9d8a…8928
            xcrun simctl push 'booted' 'com.tt.honeyDue.honeyDueDev' - <<'PUSHTRAIL_APNS_23'
            <23>
            PUSHTRAIL_APNS_23

            # 0.037 seconds later
            sleep 0.037
            # push 2/4 #24 TASK_ACTIONABLE "Due soon: Clean gutters" · 2026-11-04T08:00:00.217Z · user u_ben · \#
            device ae4d…7b86
            xcrun simctl push 'booted' 'com.tt.honeyDue.honeyDueDev' - <<'PUSHTRAIL_APNS_24'
            <24>
            PUSHTRAIL_APNS_24

            # 2026-11-04T08:00:00.926Z  #25  delivery 200 accepted · user u_ben · device ae4d…7b86
            # 2026-11-04T08:00:01.157Z  #26  delivery 200 accepted · user u_alice · device 9d8a…8928
            # 4 days later — waiting 10 seconds (--max-gap)
            sleep 10
            # push 3/4 #54 TASK_ACTIONABLE "Due soon: Clean gutters" · 2026-11-08T08:00:00.936Z · user u_alice · \#
            device 9d8a…8928
            xcrun simctl push 'booted' 'com.tt.honeyDue.honeyDueDev' - <<'PUSHTRAIL_APNS_54'
            <54>
            PUSHTRAIL_APNS_54

            # 0.037 seconds later
            sleep 0.037
            # push 4/4 #55 TASK_ACTIONABLE "Due soon: Clean gutters" · 2026-11-08T08:00:00.973Z · user u_ben · \#
            device ae4d…7b86
            xcrun simctl push 'booted' 'com.tt.honeyDue.honeyDueDev' - <<'PUSHTRAIL_APNS_55'
            <55>
            PUSHTRAIL_APNS_55
            # 2026-11-08T08:00:01.291Z  #56  delivery 200 accepted · user u_ben · device ae4d…7b86
            # 2026-11-08T08:00:02.485Z  #57  delivery 200 accepted · user u_alice · device 9d8a…8928
            # 2026-11-08T16:42:00.696Z  #61  action complete → failed (HTTP 500: Internal Server Error) · \#
            user u_alice · device 9d8a…8928

            """#
        var exports: [[UInt8]] = []
        for (seq, id) in Self.storyA {
            let export = CLI.run(store: store, ["export", id, "-o", "-"])
            #expect(export.status == 0, "\(export)")
            exports.append(export.stdoutBytes)
            expected = expected.replacing("<\(seq)>\n", with: export.stdout)
        }
        #expect(r.stdout == expected)

        let standIn = try StandIn(sleep: true)
        let (status, output) = try Self.sh(try dir.write("replay.sh", bytes: r.stdoutBytes), path: standIn.path)
        #expect(status == 0, "\(output)")
        let calls = try standIn.calls()
        #expect(calls.map(\.input) == exports)
        #expect(calls.allSatisfy { $0.arguments == ["simctl", "push", "booted", "com.tt.honeyDue.honeyDueDev", "-"] })
        #expect(try standIn.sleeps() == ["0.037", "10", "0.037"])
    }

    /// Runs `script` with /bin/sh and `PATH=path`; returns its status and stderr.
    static func sh(_ script: String, path: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script]
        process.environment = ["PATH": path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    // MARK: - Real runs against a stand-in xcrun

    @Test(
        "a real run pushes each notification in order via xcrun simctl push DEVICE BUNDLE -, the export bytes on stdin"
    )
    func realRun() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let standIn = try StandIn()
        // Planned waits: 2.5 seconds / 20 = 0.125 seconds, then 3 days 2 hours / 20 cut to 0.3 seconds.
        let r = try Binary.run(
            [
                "--store", store, "replay", "--thread", Chores.thread, "--device", "Kid's iPhone", "--speed", "20",
                "--max-gap", "0.3",
            ],
            environment: ["PATH": standIn.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == Chores.pushed)
        #expect(r.stderr == "pushtrail: pushed 3 notifications to Kid's iPhone\n", "no progress lines off a terminal")
        let calls = try standIn.calls()
        #expect(calls.count == 3)
        #expect(
            calls.map { $0.arguments[3] } == ["com.example.honeydue", "com.example.honeydue", "com.example.o'neil"])
        for call in calls {
            #expect(Array(call.arguments.prefix(3)) + [call.arguments[4]] == ["simctl", "push", "Kid's iPhone", "-"])
        }
        // In seq order, each byte-identical to export's output.
        let exports = [Chores.n1, Chores.n2, Chores.n3].map {
            CLI.run(store: store, ["export", $0, "-o", "-"]).stdoutBytes
        }
        #expect(calls.map(\.input) == exports)
        #if os(Linux)
            // SIGPIPE is ignored in pushtrail, not in the programs it runs.
            let ignored = try String(contentsOfFile: standIn.log + "/1.sigign", encoding: .utf8)
            let mask = UInt64(
                ignored.split(separator: "\t").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "", radix: 16)
            #expect(mask.map { $0 & (1 << (UInt64(SIGPIPE) - 1)) == 0 } == true, "\(ignored)")
        #endif
        // At least the planned waits apart (a lower bound only: machines may be slow).
        if calls.count == 3 {
            #expect(calls[1].startNanoseconds - calls[0].startNanoseconds >= 125_000_000)
            #expect(calls[2].startNanoseconds - calls[1].startNanoseconds >= 300_000_000)
        }
    }

    @Test("on a terminal, each wait shows on stderr, saying when --max-gap shortened it")
    func waitingLines() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let standIn = try StandIn()
        let r = CLI.run(
            store: store, ["replay", "--thread", Chores.thread, "--max-gap", "0.05"],
            environment: ["PATH": standIn.path],
            stderrIsTerminal: true)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("\r\u{1B}[K2.5 seconds later — waiting 0.05 seconds (--max-gap)"), "\(r)")
        #expect(r.stderr.contains("\r\u{1B}[K3 days 2 hours later — waiting 0.05 seconds (--max-gap)"), "\(r)")
        #expect(try standIn.calls().count == 3)
    }

    @Test("when xcrun fails, replay says how many were pushed and the first line of its error, and exits 74")
    func xcrunFails() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let standIn = try StandIn(failOnCall: 2)
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Chores.thread, "--max-gap", "0"] + ["--speed", "1000000"],
            environment: ["PATH": standIn.path])
        #expect(r.status == 74, "\(r)")
        #expect(r.stdout == Chores.pushed.split(separator: "\n").prefix(2).map { $0 + "\n" }.joined())
        #expect(
            r.stderrLines == [
                "pushtrail: pushed 1 of 3 notifications",
                "pushtrail: xcrun simctl push failed (exit 1): Invalid device: booted",
            ])
        #expect(try standIn.calls().count == 2, "nothing is pushed after the failure")
    }

    @Test("without xcrun on PATH, a real run is exit 74 with the hint, and nothing else is printed")
    func noXcrun() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let empty = try TempDir()
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Chores.thread], environment: ["PATH": empty.path])
        #expect(r.status == 74, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr
                == "pushtrail: xcrun not found: replay needs Xcode's simctl (macOS); use --dry-run to print the "
                + "commands, or export --all --dir DIR for .apns files\n"
        )
        // --dry-run needs no xcrun.
        let dry = try Binary.run(
            ["--store", store, "replay", "--thread", Chores.thread, "--dry-run"], environment: ["PATH": empty.path])
        #expect(dry.status == 0, "\(dry)")
    }

    @Test(
        "--step pushes the first at once and each next one on Enter; the end of input stops cleanly",
        arguments: [("\n\n", 3), ("\n", 2), ("", 1)])
    func step(_ input: String, _ pushed: Int) throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let standIn = try StandIn()
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Chores.thread, "--step"], input: .pipe(Array(input.utf8)),
            environment: ["PATH": standIn.path])
        #expect(r.status == 0, "\(r)")
        #expect(try standIn.calls().count == pushed)
        #expect(r.stdout.split(separator: "\n").filter { $0.hasPrefix("pushed ") }.count == pushed)
        let prompts = r.stderrLines.filter { $0.contains("press Enter to push the next notification") }
        #expect(prompts.count == min(pushed, 2), "\(r)")
        #expect(prompts.first == "pushtrail: press Enter to push the next notification (2/3, 2.5 seconds later)")
        #expect(
            r.stderrLines.last
                == (pushed == 3
                    ? "pushtrail: pushed 3 notifications to booted"
                    : "pushtrail: end of input: pushed \(pushed) of 3 notifications"))
    }

    // MARK: - Errors

    @Test(
        "bad options are usage errors (exit 2) naming the option, before anything is pushed",
        arguments: [
            (["--step", "--speed", "2"], "--speed"), (["--step", "--max-gap", "1"], "--max-gap"),
            (["--step", "--dry-run"], "--step"),
            (["--speed", "0"], "--speed"), (["--speed", "-1"], "--speed"), (["--speed", "fast"], "--speed"),
            (["--speed", "inf"], "--speed"), (["--speed", "nan"], "--speed"),
            (["--max-gap", "-1"], "--max-gap"), (["--max-gap", "soon"], "--max-gap"),
            (["--device", ""], "--device"), (["--at", "yesterday"], "--at"),
        ])
    func usageErrors(_ extra: [String], _ option: String) throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let standIn = try StandIn()
        let r = CLI.run(
            store: store, ["replay", "--thread", Chores.thread] + extra, environment: ["PATH": standIn.path])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrLines.first?.contains(option) == true, "\(r)")
        #expect(try standIn.calls().isEmpty)
    }

    @Test("replay without --thread, or with an operand, is a usage error naming --thread")
    func missingThread() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        for argv in [["replay"], ["replay", "--thread", ""], ["replay", Chores.thread]] {
            let r = CLI.run(store: store, argv)
            #expect(r.status == 2, "\(argv): \(r)")
            #expect(r.stdout.isEmpty)
        }
        #expect(CLI.run(store: store, ["replay"]).stderrLines.first?.contains("--thread") == true)
    }

    @Test("an unknown thread is exit 1 with thread's own message; so is a thread with no notification by --at")
    func unknownThread() throws {
        let dir = try TempDir()
        let store = try Chores.store(dir)
        let r = CLI.run(store: store, ["replay", "--thread", "nope", "--dry-run"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == CLI.run(store: store, ["thread", "nope"]).stderr)
        #expect(r.stderrLines.count == 1)
        let early = CLI.run(store: store, ["replay", "--thread", Chores.thread, "--at", "2026-11-01", "--dry-run"])
        #expect(early.status == 1, "\(early)")
        #expect(early.stderr == CLI.run(store: store, ["thread", Chores.thread, "--at", "2026-11-01"]).stderr)
        // Only an action names this thread: nothing to push.
        let actionOnly = try TempDir()
        let other = try R.ingest(
            actionOnly, [R.action("act-t", "open", at: "2026-11-20T08:00:00Z", task: 7, thread: "lonely")])
        let lonely = CLI.run(store: other, ["replay", "--thread", "lonely", "--dry-run"])
        #expect(lonely.status == 1, "\(lonely)")
        #expect(lonely.stderr.contains("no notification"), "\(lonely)")
    }

    @Test(
        "the bundle id is as in export: --bundle, the topic, $PUSHTRAIL_BUNDLE, or a usage error; export's warnings too"
    )
    func bundleAndWarnings() throws {
        let dir = try TempDir()
        let store = try R.ingest(
            dir,
            [
                R.notification(
                    "b1000000-0000-4000-8000-000000000001", at: "2026-11-20T08:00:00Z", task: 7, thread: "t", topic: nil
                ),
                R.notification(
                    "b1000000-0000-4000-8000-000000000002", at: "2026-11-20T08:00:01Z", task: 7, thread: "t",
                    category: "ODD"),
            ])
        let none = CLI.run(store: store, ["replay", "--thread", "t", "--dry-run"])
        #expect(none.status == 2, "\(none)")
        #expect(none.stderrLines.first?.contains("--bundle") == true, "\(none)")
        let env = CLI.run(
            store: store, ["replay", "--thread", "t", "--dry-run"], environment: ["PUSHTRAIL_BUNDLE": "com.env"])
        #expect(env.status == 0, "\(env)")
        let pushes = env.stdout.split(separator: "\n").filter { $0.hasPrefix("xcrun ") }
        #expect(pushes.map { $0.split(separator: " ")[4] } == ["'com.env'", "'\(R.topic)'"])
        #expect(
            env.stderrLines == [
                "pushtrail: warning: category \"ODD\" is not one the app registers "
                    + "(\(PushTrailModel.Category.allCases.map(\.rawValue).joined(separator: ", "))): "
                    + "the simulator will show no action buttons"
            ])
    }

    // MARK: - Help, completion, man page

    @Test("--help, the command list, bash completion and the man page know replay")
    func documented() throws {
        let help = CLI.run(["replay", "--help"])
        #expect(help.status == 0)
        for option in ["--thread", "--at", "--device", "--bundle", "--speed", "--step", "--max-gap", "--dry-run"] {
            #expect(help.stdout.contains(option), "\(option)")
        }
        #expect(CLI.run(["--help"]).stdout.contains("\n  replay "))
        #expect(CLI.run(["manpage"]).stdout.contains(".B pushtrail replay"))
        let dir = try TempDir()
        let script = try ShellIntegrationTests.script("bash", in: dir)
        #expect(
            try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "rep"]).sorted() == ["replay", "report"])
        #expect(try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "repl"]) == ["replay"])
        #expect(try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "replay", "--ma"]) == ["--max-gap"])
    }
}
