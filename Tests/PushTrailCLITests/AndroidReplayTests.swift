import Foundation
import Testing

/// An Android thread of three notifications with an answer after each, hand-written:
/// gaps of 2.5 seconds and 3 days 2 hours; a title with a quote and a newline, a body
/// with `$` and backticks; one message whose `android.data` replaces its `data`; and
/// a last one for another package and no project.
enum Yard {
    static let thread = "yard-1"
    static let token = "tokA:APA91bAnnsPhoneToken0000"

    static let lines: [String] = [
        #"{"type":"notification","id":"c1000000-0000-4000-8000-000000000001","at":"2026-11-20T08:00:00Z","#
            + #""user":"u_ann","platform":"android","project":"honeydue-prod","payload":{"token":"\#(token)","#
            + #""data":{"thread_id":"yard-1","category":"TASK_ACTIONABLE","title":"Rake leaves","#
            + #""body":"It's fall","task_id":"9","button_types":"complete,cancel,mark_in_progress"},"#
            + #""android":{"priority":"HIGH","restricted_package_name":"com.tt.honeydue"}}}"#,
        #"{"type":"delivery","id":"dlv-1","at":"2026-11-20T08:00:01Z","user":"u_ann","#
            + #""notification_id":"c1000000-0000-4000-8000-000000000001","status":200}"#,
        #"{"type":"notification","id":"c1000000-0000-4000-8000-000000000002","at":"2026-11-20T08:00:02.5Z","#
            + #""user":"u_ann","platform":"android","project":"honeydue-prod","payload":{"token":"\#(token)","#
            + #""data":{"thread_id":"yard-1","stale":"replaced by android.data"},"#
            + #""android":{"restricted_package_name":"com.tt.honeydue","data":{"thread_id":"yard-1","#
            + #""category":"TASK_ACTIONABLE","title":"Don't\nforget","body":"Costs $5 `now`","task_id":"9"}}}}"#,
        #"{"type":"action","id":"act-1","at":"2026-11-20T09:00:00Z","user":"u_ann","task_id":9,"action":"complete","#
            + #""outcome":"failed","notification_id":"c1000000-0000-4000-8000-000000000002","http_status":500,"#
            + #""error":"Internal Server Error"}"#,
        #"{"type":"notification","id":"c1000000-0000-4000-8000-000000000003","at":"2026-11-23T10:00:02.5Z","#
            + #""user":"u_ann","platform":"android","payload":{"token":"\#(token)","#
            + #""data":{"thread_id":"yard-1","category":"TASK_COMPLETED","title":"Done","task_id":"9"},"#
            + #""android":{"restricted_package_name":"com.other"}}}"#,
        #"{"type":"delivery","id":"dlv-3","at":"2026-11-23T10:00:03.5Z","user":"u_ann","#
            + #""notification_id":"c1000000-0000-4000-8000-000000000003","status":200}"#,
    ]

    /// What each push must deliver: the seq, the package, the data map, the sender.
    static let pushes: [(seq: Int, package: String, data: [(String, String)], from: String)] = [
        (
            1, "com.tt.honeydue",
            [
                ("thread_id", "yard-1"), ("category", "TASK_ACTIONABLE"), ("title", "Rake leaves"),
                ("body", "It's fall"), ("task_id", "9"), ("button_types", "complete,cancel,mark_in_progress"),
            ], "honeydue-prod"
        ),
        (
            3, "com.tt.honeydue",
            [
                ("thread_id", "yard-1"), ("category", "TASK_ACTIONABLE"), ("title", "Don't\nforget"),
                ("body", "Costs $5 `now`"), ("task_id", "9"),
            ], "honeydue-prod"
        ),
        (
            5, "com.other",
            [("thread_id", "yard-1"), ("category", "TASK_COMPLETED"), ("title", "Done"), ("task_id", "9")],
            "pushtrail"
        ),
    ]

    /// `replay --thread yard-1 --serial emulator-5554 --dry-run`, worked out by hand.
    static let script = #"""
        #!/bin/sh
        # pushtrail replay: thread yard-1 as of @6, 3 Android notifications
        # Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
        # Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
        set -e

        # push 1/3 #1 TASK_ACTIONABLE "Rake leaves" · 2026-11-20T08:00:00.000Z · user u_ann · device tokA…0000
        adb -s emulator-5554 shell am broadcast \
            -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
            -a com.google.android.c2dm.intent.RECEIVE \
            --es thread_id yard-1 \
            --es category TASK_ACTIONABLE \
            --es title "'Rake leaves'" \
            --es body "'It'\\''s fall'" \
            --es task_id 9 \
            --es button_types complete,cancel,mark_in_progress \
            --es google.message_id "pushtrail-1-$(date +%s)-$$" \
            --es from honeydue-prod

        # 2026-11-20T08:00:01.000Z  #2  delivery 200 accepted · user u_ann
        # 2.5 seconds later
        sleep 2.5
        # push 2/3 #3 TASK_ACTIONABLE "Don't␣forget" · 2026-11-20T08:00:02.500Z · user u_ann · device tokA…0000
        adb -s emulator-5554 shell am broadcast \
            -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
            -a com.google.android.c2dm.intent.RECEIVE \
            --es thread_id yard-1 \
            --es category TASK_ACTIONABLE \
            --es title "'Don'\\''t
        forget'" \
            --es body "'Costs \$5 \`now\`'" \
            --es task_id 9 \
            --es google.message_id "pushtrail-3-$(date +%s)-$$" \
            --es from honeydue-prod

        # 2026-11-20T09:00:00.000Z  #4  action complete → failed (HTTP 500: Internal Server Error) · user u_ann
        # 3 days 2 hours later — waiting 10 seconds (--max-gap)
        sleep 10
        # push 3/3 #5 TASK_COMPLETED "Done" · 2026-11-23T10:00:02.500Z · user u_ann · device tokA…0000
        adb -s emulator-5554 shell am broadcast \
            -n com.other/com.google.firebase.iid.FirebaseInstanceIdReceiver \
            -a com.google.android.c2dm.intent.RECEIVE \
            --es thread_id yard-1 \
            --es category TASK_COMPLETED \
            --es title Done \
            --es task_id 9 \
            --es google.message_id "pushtrail-5-$(date +%s)-$$" \
            --es from pushtrail
        # 2026-11-23T10:00:03.500Z  #6  delivery 200 accepted · user u_ann

        """#

    /// What a real run prints on stdout.
    static let pushed = """
        pushed 1/3 #1 TASK_ACTIONABLE "Rake leaves" · 2026-11-20T08:00:00.000Z · user u_ann · device tokA…0000
          2026-11-20T08:00:01.000Z  #2  delivery 200 accepted · user u_ann
        pushed 2/3 #3 TASK_ACTIONABLE "Don't␣forget" · 2026-11-20T08:00:02.500Z · user u_ann · device tokA…0000
          2026-11-20T09:00:00.000Z  #4  action complete → failed (HTTP 500: Internal Server Error) · user u_ann
        pushed 3/3 #5 TASK_COMPLETED "Done" · 2026-11-23T10:00:02.500Z · user u_ann · device tokA…0000
          2026-11-23T10:00:03.500Z  #6  delivery 200 accepted · user u_ann

        """

    static func store(_ dir: TempDir) throws -> String { try ReplayFixtures.ingest(dir, lines) }

    /// Whether `calls` are the three pushes, in order, each delivering exactly its data.
    static func deliveredAll(_ calls: [ADBStandIn.Call]) -> Bool {
        calls.count == pushes.count
            && zip(calls, pushes).allSatisfy { call, push in
                Broadcast.delivered(
                    call, package: push.package, data: push.data.map { (Array($0.0.utf8), Array($0.1.utf8)) },
                    seq: push.seq, from: push.from)
            }
    }
}

@Suite("replay --platform android: a thread pushed to an emulator through adb")
struct AndroidReplayTests {
    typealias R = ReplayFixtures

    @Test("--dry-run prints the exact sh script: one adb broadcast per notification, sleeps, comments on one line")
    func dryRunScript() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let r = CLI.run(
            store: store,
            [
                "replay", "--thread", Yard.thread, "--platform", "android", "--serial", "emulator-5554",
                "--dry-run",
            ])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
        #expect(r.stdout == Yard.script)
        // The thread is Android only: --platform may be left out, and --serial implies it.
        let implied = CLI.run(
            store: store, ["replay", "--thread", Yard.thread, "--serial", "emulator-5554", "--dry-run"])
        #expect(implied.stdout == Yard.script)
    }

    @Test("each push of the dry run is the broadcast export --format adb writes for that notification")
    func sameAsExport() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let script = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--dry-run"]).stdout
        for id in ["c1000000-0000-4000-8000-000000000001", "c1000000-0000-4000-8000-000000000003"] {
            let export = CLI.run(store: store, ["export", id, "--format", "adb", "-o", "-"])
            #expect(export.status == 0, "\(export)")
            let command = export.stdout.split(separator: "\n").drop { $0.hasPrefix("#") }.joined(separator: "\n")
            #expect(script.contains(command), "\(command)")
        }
    }

    @Test("the --dry-run script, run by sh, broadcasts each data map byte for byte in order and sleeps as planned")
    func dryRunScriptRuns() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let r = CLI.run(
            store: store, ["replay", "--thread", Yard.thread, "--serial", "emulator-5554", "--dry-run"])
        #expect(r.status == 0, "\(r)")
        let standIn = try ADBStandIn(sleep: true)
        let (status, errors) = try standIn.sh(try dir.write("replay.sh", bytes: r.stdoutBytes))
        #expect(status == 0, "\(errors)")
        let calls = try standIn.calls()
        #expect(
            calls.map { Array($0.argumentStrings.prefix(3)) }
                == Array(repeating: ["-s", "emulator-5554", "shell"], count: 3))
        let delivered = Yard.deliveredAll(calls)
        #expect(delivered, "\(calls.map(\.deviceStrings))")
        #expect(try standIn.sleeps() == ["2.5", "10"])
    }

    @Test("a real run pushes each notification in order with adb, the data maps byte for byte, fresh ids")
    func realRun() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let standIn = try ADBStandIn()
        let r = try Binary.run(
            [
                "--store", store, "replay", "--thread", Yard.thread, "--platform", "android", "--serial",
                "emulator-5554", "--speed", "20", "--max-gap", "0.3",
            ],
            environment: ["PATH": standIn.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == Yard.pushed)
        #expect(r.stderr == "pushtrail: pushed 3 notifications to emulator-5554\n")
        let calls = try standIn.calls()
        #expect(
            calls.map { Array($0.argumentStrings.prefix(3)) }
                == Array(repeating: ["-s", "emulator-5554", "shell"], count: 3))
        let delivered = Yard.deliveredAll(calls)
        #expect(delivered, "\(calls.map(\.deviceStrings))")
        #expect(Set(calls.compactMap { $0.extra("google.message_id") }).count == 3)
        if calls.count == 3 {
            #expect(calls[1].startNanoseconds - calls[0].startNanoseconds >= 125_000_000)
            #expect(calls[2].startNanoseconds - calls[1].startNanoseconds >= 300_000_000)
        }
        // Another run sends other ids.
        let again = try Binary.run(
            ["--store", store, "replay", "--thread", Yard.thread, "--max-gap", "0"] + ["--speed", "1000000"],
            environment: ["PATH": standIn.path])
        #expect(again.status == 0, "\(again)")
        #expect(again.stderr == "pushtrail: pushed 3 notifications with adb\n")
        let all = try standIn.calls()
        #expect(all.count == 6)
        #expect(Set(all.compactMap { $0.extra("google.message_id") }).count == 6)
        #expect(all.dropFirst(3).allSatisfy { $0.argumentStrings.first == "shell" })
    }

    @Test("hostile data reaches the device byte for byte in a real run too (no local shell, one device shell)")
    func realRunHostile() throws {
        let dir = try TempDir()
        let line = AndroidExportTests.hostileLine().replacing(#""data":{"#, with: #""data":{"thread_id":"hostile","#)
        let store = try R.ingest(dir, [line])
        let standIn = try ADBStandIn()
        let run = try Binary.run(
            ["--store", store, "replay", "--thread", "hostile", "--serial", "a'b $c"],
            environment: ["PATH": standIn.path])
        #expect(run.status == 0, "\(run)")
        let call = try #require(try standIn.calls().first)
        #expect(Array(call.argumentStrings.prefix(3)) == ["-s", "a'b $c", "shell"])
        let data = [(Array("thread_id".utf8), Array("hostile".utf8))] + AndroidExportTests.hostileBytes
        let delivered = Broadcast.delivered(call, package: "com.o'neil", data: data, seq: 1, from: "proj 'x' $y")
        #expect(delivered, "\(call.deviceStrings)")
    }

    @Test("when adb fails, replay says how many were pushed and the first line of its error, and exits 74")
    func adbFails() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let standIn = try ADBStandIn(failOnCall: 2)
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Yard.thread, "--max-gap", "0", "--speed", "1000000"],
            environment: ["PATH": standIn.path])
        #expect(r.status == 74, "\(r)")
        #expect(r.stdout == Yard.pushed.split(separator: "\n").prefix(2).map { $0 + "\n" }.joined())
        #expect(
            r.stderrLines == [
                "pushtrail: pushed 1 of 3 notifications",
                "pushtrail: adb shell am broadcast failed (exit 255): Security exception: Permission Denial: not "
                    + "allowed to send broadcast (is the emulator running, after adb root?)",
            ])
        #expect(try standIn.calls().count == 2, "nothing is pushed after the failure")
    }

    @Test("without adb on PATH a real run is exit 74 with the hint; --dry-run needs no adb")
    func noADB() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let empty = try TempDir()
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Yard.thread], environment: ["PATH": empty.path])
        #expect(r.status == 74, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr
                == "pushtrail: adb not found: replay --platform android needs adb (Android SDK platform-tools) on "
                + "PATH; use --dry-run to print the commands, or export --format adb for a script\n")
        let dry = try Binary.run(
            ["--store", store, "replay", "--thread", Yard.thread, "--dry-run"], environment: ["PATH": empty.path])
        #expect(dry.status == 0, "\(dry)")
    }

    @Test("--step pushes the first at once and the next on Enter", arguments: [("\n\n", 3), ("", 1)])
    func step(_ input: String, _ pushed: Int) throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let standIn = try ADBStandIn()
        let r = try Binary.run(
            ["--store", store, "replay", "--thread", Yard.thread, "--step"], input: .pipe(Array(input.utf8)),
            environment: ["PATH": standIn.path])
        #expect(r.status == 0, "\(r)")
        #expect(try standIn.calls().count == pushed)
    }

    // MARK: - Platforms

    /// Yard plus an iOS notification of the same thread between the first two.
    static func mixed(_ dir: TempDir) throws -> String {
        try R.ingest(
            dir,
            Yard.lines + [
                R.notification(
                    "c2000000-0000-4000-8000-000000000001", at: "2026-11-20T08:00:02Z", task: 9, thread: Yard.thread,
                    title: "On iOS")
            ])
    }

    @Test("a thread of both platforms needs --platform; each platform pushes its own, showing the others")
    func mixedThread() throws {
        let dir = try TempDir()
        let store = try Self.mixed(dir)
        let none = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--dry-run"])
        #expect(none.status == 2, "\(none)")
        #expect(
            none.stderrFirstLine
                == "pushtrail replay: thread yard-1 has iOS and Android notifications: "
                + "pass --platform ios or --platform android")
        let android = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--platform", "android", "--dry-run"])
        #expect(android.status == 0, "\(android)")
        let lines = android.stdout.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("adb ") }.count == 3)
        #expect(lines.contains { $0.hasPrefix("# 2026-11-20T08:00:02.000Z  #7  notification") }, "\(android.stdout)")
        let ios = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--platform", "ios", "--dry-run"])
        #expect(ios.status == 0, "\(ios)")
        #expect(ios.stdout.split(separator: "\n").filter { $0.hasPrefix("xcrun simctl push ") }.count == 1)
        #expect(!ios.stdout.contains("adb "))
        // The device option implies iOS.
        let device = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--device", "x", "--dry-run"])
        #expect(device.stdout == ios.stdout.replacing("'booted'", with: "'x'"))
        // A real Android run sends only the Android ones.
        let standIn = try ADBStandIn()
        let run = try Binary.run(
            [
                "--store", store, "replay", "--thread", Yard.thread, "--platform", "android", "--max-gap", "0",
                "--speed", "1000000",
            ],
            environment: ["PATH": standIn.path])
        #expect(run.status == 0, "\(run)")
        let calls = try standIn.calls()
        let delivered = Yard.deliveredAll(calls)
        #expect(delivered, "\(calls.map(\.deviceStrings))")
    }

    @Test("a platform the thread has none of is exit 1 naming the one it has")
    func absentPlatform() throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let r = CLI.run(store: store, ["replay", "--thread", Yard.thread, "--platform", "ios", "--dry-run"])
        #expect(r.status == 1, "\(r)")
        #expect(
            r.stderr
                == "pushtrail: thread yard-1 has no iOS notification in \(store): its notifications are Android ones "
                + "(--platform android)\n")
    }

    @Test(
        "one platform's options with the other's are usage errors (exit 2) before anything is pushed",
        arguments: [
            (["--platform", "android", "--device", "x"], "--device is for iOS replays, not with --platform android"),
            (["--platform", "android", "--bundle", "x"], "--bundle is for iOS replays, not with --platform android"),
            (["--platform", "ios", "--serial", "x"], "--serial is for Android replays, not with --platform ios"),
            (["--device", "x", "--package", "p"], "--package is for Android replays, not with --device"),
            (["--platform", "windows"], "--platform is ios or android, not windows"),
            (["--serial", ""], "--serial needs an emulator's serial (adb devices lists them)"),
        ])
    func usage(_ extra: [String], _ message: String) throws {
        let dir = try TempDir()
        let store = try Yard.store(dir)
        let standIn = try ADBStandIn()
        let r = CLI.run(store: store, ["replay", "--thread", Yard.thread] + extra, environment: ["PATH": standIn.path])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrFirstLine == "pushtrail replay: \(message)", "\(r)")
        #expect(try standIn.calls().isEmpty)
    }

    @Test("the package is as in export: --package, the message's, $PUSHTRAIL_PACKAGE, or a usage error")
    func package() throws {
        let dir = try TempDir()
        let store = try R.ingest(
            dir,
            [
                #"{"type":"notification","id":"n-1","at":"2026-11-20T08:00:00Z","user":"u","platform":"android","#
                    + #""payload":{"token":"t","data":{"thread_id":"p-1"}}}"#
            ])
        let none = CLI.run(store: store, ["replay", "--thread", "p-1", "--dry-run"])
        #expect(none.status == 2, "\(none)")
        #expect(none.stderrLines.first?.hasPrefix("pushtrail replay: no package for notification n-1") == true)
        let env = CLI.run(
            store: store, ["replay", "--thread", "p-1", "--dry-run"], environment: ["PUSHTRAIL_PACKAGE": "com.env"])
        #expect(env.stdout.contains("    -n com.env/com.google.firebase.iid.FirebaseInstanceIdReceiver \\\n"))
        let given = CLI.run(
            store: store, ["replay", "--thread", "p-1", "--dry-run", "--package", "com.cli"],
            environment: ["PUSHTRAIL_PACKAGE": "com.env"])
        #expect(given.stdout.contains("    -n com.cli/com.google.firebase.iid.FirebaseInstanceIdReceiver \\\n"))
    }

    @Test("replay --help and bash completion know --platform, --serial and --package")
    func documented() throws {
        let help = CLI.run(["replay", "--help"])
        for option in ["--platform", "--serial", "--package", "--device", "--bundle"] {
            #expect(help.stdout.contains(option), "\(option)")
        }
        let dir = try TempDir()
        let script = try ShellIntegrationTests.script("bash", in: dir)
        #expect(try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "replay", "--se"]) == ["--serial"])
        #expect(
            try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "replay", "--platform", "i"]) == ["ios"])
    }
}
