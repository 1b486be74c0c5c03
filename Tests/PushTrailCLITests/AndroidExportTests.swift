import Foundation
import PushTrailStore
import Testing

/// The seven Android samples, each imported alone with a fixed user, time, id and
/// project, and the files export must write for them (Tests/Fixtures/android-export,
/// written by hand).
enum AndroidSamples {
    static let tasks: [(name: String, task: Int)] = [
        ("task_assigned", 2006), ("task_cancelled", 2004), ("task_completed", 2005), ("task_due_soon", 2002),
        ("task_generic_free_user", 2007), ("task_in_progress", 2003), ("task_overdue", 2001),
    ]
    static var names: [String] { tasks.map(\.name) }
    static let project = "honeydue-prod"
    static let package = "com.tt.honeydue"
    static let token = "fSaMpLe0TeSt0DeViCe:APA91bSampleTokenOfATestDevice_NotARealPhone_0123456789abcdefghijklmnop"

    static func task(_ name: String) -> Int { tasks.first { $0.name == name }!.task }
    static func id(_ name: String) -> String { "a0000000-0000-4000-8000-00000000\(task(name))" }
    static func file(_ name: String) -> String { Samples.directory + "/android/\(name).json" }

    /// The sample's message, parsed.
    static func message(_ name: String) throws -> JSON {
        try #require(try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file(name)))))["message"])
    }

    /// A store holding only the sample, as seq 1.
    static func store(_ dir: TempDir, _ name: String, project: String? = AndroidSamples.project) throws -> String {
        let r = CLI.run(
            store: dir.store,
            [
                "import", "--platform", "android", "--user", "u_support", "--at", "2026-11-20T08:00:00Z", "--id",
                id(name),
            ]
                + (project.map { ["--project", $0] } ?? []) + [file(name)])
        guard r.status == 0 else { throw HarnessError("import failed: \(r)") }
        return dir.store
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/android-export").path

    /// The hand-written file `name.ext` (`fcm.json`, `adb.sh`).
    static func expected(_ name: String, _ ext: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: fixtures + "/\(name).\(ext)") else {
            throw HarnessError("no fixture \(name).\(ext)")
        }
        return Array(data)
    }
}

@Suite("export of Android notifications: the FCM send body and the adb script")
struct AndroidExportTests {
    typealias S = AndroidSamples
    typealias R = ReplayFixtures

    @Test(
        "--format fcm (the default for Android) writes each sample exactly as the hand-written file", arguments: S.names
    )
    func fcmSamples(_ name: String) throws {
        let dir = try TempDir()
        let store = try S.store(dir, name)
        let expected = try S.expected(name, "fcm.json")
        let byDefault = CLI.run(store: store, ["export", S.id(name), "-o", "-"])
        #expect(byDefault.status == 0, "\(byDefault)")
        #expect(byDefault.stderr.isEmpty, "\(byDefault)")
        #expect(byDefault.stdoutBytes == expected, "\(byDefault.stdout)")
        let explicit = CLI.run(
            store: store, ["export", "--thread", "task-\(S.task(name))", "--format", "fcm", "-o", "-"])
        #expect(explicit.stdoutBytes == expected)
        // The body is the sample's message but for its token.
        let written = try #require(try JSON.parse(expected)["message"])
        #expect(written.keys == (try S.message(name)).keys)
        #expect(written["data"]?.description == (try S.message(name))["data"]?.description)
        #expect(written["token"]?.string == "REPLACE_WITH_TEST_DEVICE_TOKEN")
    }

    @Test("--format adb writes each sample exactly as the hand-written script", arguments: S.names)
    func adbSamples(_ name: String) throws {
        let dir = try TempDir()
        let store = try S.store(dir, name)
        let r = CLI.run(store: store, ["export", S.id(name), "--format", "adb", "-o", "-"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
        #expect(r.stdout == String(decoding: try S.expected(name, "adb.sh"), as: UTF8.self))
    }

    @Test(
        "each sample's adb script, run by sh, delivers exactly its data map to the stand-in adb, a new id each run",
        arguments: S.names)
    func adbScriptsRun(_ name: String) throws {
        let dir = try TempDir()
        let store = try S.store(dir, name)
        let script = try dir.write(
            "s.adb.sh", bytes: CLI.run(store: store, ["export", S.id(name), "--format", "adb", "-o", "-"]).stdoutBytes)
        let standIn = try ADBStandIn()
        for _ in 0..<2 {
            let (status, errors) = try standIn.sh(script)
            #expect(status == 0, "\(errors)")
        }
        let calls = try standIn.calls()
        #expect(calls.count == 2)
        let data = try #require(Broadcast.dataMap(try S.message(name)))
        #expect(data.count == 13)
        for call in calls {
            #expect(call.argumentStrings.first == "shell", "\(call.argumentStrings)")
            let delivered = Broadcast.delivered(call, package: S.package, data: data, seq: 1, from: S.project)
            #expect(delivered, "\(call.deviceStrings)")
        }
        #expect(calls[0].extra("google.message_id") != calls[1].extra("google.message_id"))
    }

    @Test("without -o, the default names are <thread>-<seq>.fcm.json and .adb.sh in the current directory")
    func defaultNames() throws {
        let dir = try TempDir()
        let store = try S.store(dir, "task_assigned")
        let cwd = dir.file("cwd")
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: false)
        let fcm = try Binary.run(["--store", store, "export", "--thread", "task-2006"], directory: cwd)
        #expect(fcm.status == 0, "\(fcm)")
        #expect(
            fcm.stderr == "pushtrail: wrote task-2006-1.fcm.json (notification \(S.id("task_assigned")), seq 1)\n")
        let adb = try Binary.run(["--store", store, "export", "--task", "2006", "--format", "adb"], directory: cwd)
        #expect(adb.status == 0, "\(adb)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cwd).sorted()
                == ["task-2006-1.adb.sh", "task-2006-1.fcm.json"])
        #expect(
            FileManager.default.contents(atPath: cwd + "/task-2006-1.fcm.json").map(Array.init)
                == (try S.expected("task_assigned", "fcm.json")))
        #expect(
            FileManager.default.contents(atPath: cwd + "/task-2006-1.adb.sh").map(Array.init)
                == (try S.expected("task_assigned", "adb.sh")))
        #expect(mode(of: cwd + "/task-2006-1.adb.sh") == 0o600)
    }

    // MARK: - The recipient

    static let tokenLines: [String] = [
        // A token in the message, a key after it, spacing inside values kept.
        #"{"type":"notification","id":"n-token","at":"2026-11-20T08:00:00Z","user":"u","platform":"android","#
            + #""payload":{"token":"real:APA91bRealTokenOfAPerson","data":{"thread_id":"t","title":"Hi  there"},"#
            + #""fcm_options":{"analytics_label":"x"}}}"#,
        #"{"type":"notification","id":"n-topic","at":"2026-11-20T08:00:01Z","user":"u","platform":"android","#
            + #""payload":{"data":{"thread_id":"t"},"topic":"residence-12"}}"#,
        #"{"type":"notification","id":"n-condition","at":"2026-11-20T08:00:02Z","user":"u","platform":"android","#
            + #""payload":{"condition":"'a' in topics","data":{"thread_id":"t"}}}"#,
        // No target in the message: the token is the envelope's device.
        #"{"type":"notification","id":"n-none","at":"2026-11-20T08:00:03Z","user":"u","platform":"android","#
            + #""device":"envelope:APA91bTokenInTheEnvelope","payload":{"data":{"thread_id":"t"}}}"#,
    ]

    @Test(
        "the token is replaced by a placeholder, by --token T, or kept with --show-tokens; every other byte as sent",
        arguments: [
            (
                "n-token", [],
                #"{"token":"REPLACE_WITH_TEST_DEVICE_TOKEN","data":{"thread_id":"t","title":"Hi  there"},"#
                    + #""fcm_options":{"analytics_label":"x"}}"#
            ),
            (
                "n-token", ["--token", "test:APA91bMine"],
                #"{"token":"test:APA91bMine","data":{"thread_id":"t","#
                    + #""title":"Hi  there"},"fcm_options":{"analytics_label":"x"}}"#
            ),
            (
                "n-token", ["--show-tokens"],
                #"{"token":"real:APA91bRealTokenOfAPerson","data":{"thread_id":"t","#
                    + #""title":"Hi  there"},"fcm_options":{"analytics_label":"x"}}"#
            ),
            ("n-none", [], #"{"token":"REPLACE_WITH_TEST_DEVICE_TOKEN","data":{"thread_id":"t"}}"#),
            ("n-none", ["--show-tokens"], #"{"token":"envelope:APA91bTokenInTheEnvelope","data":{"thread_id":"t"}}"#),
            ("n-none", ["--token", "test:1"], #"{"token":"test:1","data":{"thread_id":"t"}}"#),
            ("n-topic", ["--token", "test:1"], #"{"data":{"thread_id":"t"},"token":"test:1"}"#),
            ("n-condition", ["--token", "test:1"], #"{"token":"test:1","data":{"thread_id":"t"}}"#),
        ] as [(String, [String], String)])
    func recipient(_ id: String, _ extra: [String], _ message: String) throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Self.tokenLines)
        let r = CLI.run(store: store, ["export", id, "-o", "-"] + extra)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == #"{"message":"# + message + "}\n")
        #expect(r.stderr.isEmpty, "\(r)")
    }

    @Test("a message to a topic or condition is written as sent, with one warning that it reaches every subscriber")
    func topicWarning() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, Self.tokenLines)
        let topic = CLI.run(store: store, ["export", "n-topic", "-o", dir.file("topic.fcm.json")])
        #expect(topic.status == 0, "\(topic)")
        #expect(
            try dir.read("topic.fcm.json")
                == Array(#"{"message":{"data":{"thread_id":"t"},"topic":"residence-12"}}"#.utf8) + [10])
        #expect(
            topic.stderrFirstLine
                == "pushtrail: warning: notification n-topic went to topic \"residence-12\": sending the file "
                + "reaches every subscriber; pass --token T to send it to one test device")
        #expect(topic.stderrLines.count == 2, "the warning, then 'wrote': \(topic)")
        let condition = CLI.run(store: store, ["export", "n-condition", "-o", "-", "--show-tokens"])
        #expect(condition.stdout == #"{"message":{"condition":"'a' in topics","data":{"thread_id":"t"}}}"# + "\n")
        #expect(
            condition.stderr
                == "pushtrail: warning: notification n-condition went to the condition \"'a' in topics\": sending "
                + "the file reaches every device it matches; pass --token T to send it to one test device\n")
    }

    // MARK: - The package

    @Test("the package is --package, else restricted_package_name, else $PUSHTRAIL_PACKAGE, else a usage error")
    func packageOrder() throws {
        let dir = try TempDir()
        let named = try S.store(dir, "task_assigned")
        let bare = try TempDir()
        let unnamed = try R.ingest(
            bare,
            [
                #"{"type":"notification","id":"n-1","at":"2026-11-20T08:00:00Z","user":"u","platform":"android","#
                    + #""payload":{"token":"t","data":{"thread_id":"x"},"android":{"priority":"HIGH"}}}"#
            ])
        func package(_ store: String, _ id: String, _ extra: [String], _ env: [String: String]) -> String? {
            let r = CLI.run(store: store, ["export", id, "--format", "adb", "-o", "-"] + extra, environment: env)
            guard r.status == 0 else { return nil }
            return r.stdout.split(separator: "\n").first { $0.hasPrefix("    -n ") }.map {
                String($0.dropFirst(7).prefix { $0 != "/" })
            }
        }
        let env = ["PUSHTRAIL_PACKAGE": "com.env"]
        #expect(package(named, S.id("task_assigned"), ["--package", "com.cli"], env) == "com.cli")
        #expect(package(named, S.id("task_assigned"), [], env) == "com.tt.honeydue")
        #expect(package(unnamed, "n-1", [], env) == "com.env")
        #expect(package(unnamed, "n-1", ["--package", "com.cli"], [:]) == "com.cli")
        let none = CLI.run(store: unnamed, ["export", "n-1", "--format", "adb", "-o", bare.file("x.adb.sh")])
        #expect(none.status == 2, "\(none)")
        #expect(
            none.stderrFirstLine
                == "pushtrail export: no package for notification n-1 (its message has no "
                + "android.restricted_package_name): pass --package P or set PUSHTRAIL_PACKAGE")
        #expect(!exists(bare.file("x.adb.sh")))
        // The fcm body needs no package.
        #expect(CLI.run(store: unnamed, ["export", "n-1", "-o", "-"]).status == 0)
    }

    @Test("--serial adds -s SERIAL; the event's project is the sender, else pushtrail")
    func serialAndSender() throws {
        let dir = try TempDir()
        let store = try S.store(dir, "task_assigned", project: nil)
        let r = CLI.run(
            store: store, ["export", S.id("task_assigned"), "--format", "adb", "--serial", "emulator 5554", "-o", "-"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.contains("adb -s 'emulator 5554' shell am broadcast \\"))
        #expect(lines.last == "    --es from pushtrail")
        let standIn = try ADBStandIn()
        let (status, errors) = try standIn.sh(try dir.write("s.sh", bytes: r.stdoutBytes))
        #expect(status == 0, "\(errors)")
        let call = try #require(try standIn.calls().first)
        #expect(Array(call.argumentStrings.prefix(3)) == ["-s", "emulator 5554", "shell"])
        #expect(call.extra("from") == "pushtrail")
    }

    // MARK: - Hostile data

    /// Data values no shell may change: quotes, expansions, separators, line breaks,
    /// backslashes, non-ASCII, a quote with a combining accent.
    static let hostileData: [(String, String)] = [
        ("title", #"It's "done" — ✓ 🚀"#), ("dollar", "$HOME ${PATH} $(id) `id` $$ $1"),
        ("separators", "a; rm -rf ~ && b | c & d > /tmp/x < y"), ("lines", "one\ntwo\r\nthree\n"),
        ("backslashes", #"C:\tmp\new \\ \" \' end\"#), ("glob", "* ? [a-z] ~ !"), ("empty", ""),
        ("-n", "--es"), ("accent", "'\u{301}é'"), ("spaces", "  lead and trail  "), ("key with space", "v"),
        ("quote'key", "v\"v"), ("tab", "\t"), ("unicode", "日本語 Ünïcödé"),
    ]

    /// An Android notification whose data map is `hostileData`, with a package and a
    /// project that need quoting too.
    static func hostileLine(id: String = "n-hostile", at: String = "2026-11-20T08:00:00Z") -> String {
        let data = hostileData.map { "\(R.q($0.0)):\(R.q($0.1))" }.joined(separator: ",")
        return #"{"type":"notification","id":"\#(id)","at":"\#(at)","user":"u","platform":"android","#
            + #""project":"proj 'x' $y","payload":{"token":"t","data":{"# + data + "},"
            + #""android":{"restricted_package_name":"com.o'neil"}}}"#
    }

    static var hostileBytes: [(key: [UInt8], value: [UInt8])] {
        hostileData.map { (Array($0.0.utf8), Array($0.1.utf8)) }
    }

    @Test("hostile data values, package and sender reach the device byte for byte through both shells")
    func hostileScript() throws {
        let dir = try TempDir()
        let store = try R.ingest(dir, [Self.hostileLine()])
        let r = CLI.run(store: store, ["export", "n-hostile", "--format", "adb", "-o", "-", "--serial", "a'b $c"])
        #expect(r.status == 0, "\(r)")
        let standIn = try ADBStandIn()
        let (status, errors) = try standIn.sh(try dir.write("s.sh", bytes: r.stdoutBytes))
        #expect(status == 0, "\(errors)")
        let calls = try standIn.calls()
        #expect(calls.count == 1)
        let call = try #require(calls.first)
        #expect(Array(call.argumentStrings.prefix(3)) == ["-s", "a'b $c", "shell"])
        let delivered = Broadcast.delivered(
            call, package: "com.o'neil", data: Self.hostileBytes, seq: 1, from: "proj 'x' $y")
        #expect(delivered, "\(call.deviceStrings)")
    }

    @Test("ShellQuote keeps plain words, and quotes the rest so one or two shells give them back")
    func shellQuote() throws {
        #expect(ShellQuote.word("task-2006") == "task-2006")
        #expect(ShellQuote.word("a,b:c/d@e+f=g_h.i") == "a,b:c/d@e+f=g_h.i")
        #expect(ShellQuote.word("") == "''")
        #expect(ShellQuote.word("it's") == #"'it'\''s'"#)
        #expect(ShellQuote.twice("it's") == #""'it'\\''s'""#)
        #expect(ShellQuote.twice(#"a"$`\b"#) == #""'a\"\$\`\\b'""#)
        #expect(ShellQuote.twice("plain") == "plain")
    }

    // MARK: - Platform and format

    static let iosLine = R.notification(
        "b0000000-0000-4000-8000-000000000001", at: "2026-11-20T09:00:00Z", task: 2006, thread: "task-2006")

    @Test(
        "a format of the other platform is a usage error (exit 2, one line and the --help pointer) naming the platform",
        arguments: [
            (
                ["a0000000-0000-4000-8000-000000002006", "--format", "apns"],
                "is an Android notification: --format apns"
            ),
            (["b0000000-0000-4000-8000-000000000001", "--format", "fcm"], "is an iOS notification: --format fcm"),
            (["b0000000-0000-4000-8000-000000000001", "--format", "adb"], "is an iOS notification: --format adb"),
            (["--thread", "task-2006", "--format", "adb"], "is an iOS notification: --format adb"),
            (["--thread", "task-2006", "--format", "adb", "--platform", "ios"], "--format adb writes Android"),
            (
                ["a0000000-0000-4000-8000-000000002006", "--format", "adb", "--token", "t"],
                "--token goes with --format fcm, not --format adb"
            ),
            (["a0000000-0000-4000-8000-000000002006", "--platform", "android"], "--platform goes with --thread"),
            (["--thread", "task-2006", "--platform", "linux"], "--platform is ios or android"),
            (["--thread", "task-2006", "--format", "json"], "--format is apns, fcm or adb"),
            (["--thread", "task-2006", "--token", ""], "--token needs a value, not an empty one"),
            (["--thread", "task-2006", "--format", "adb", "--serial", ""], "--serial needs a value"),
        ])
    func mismatch(_ argv: [String], _ message: String) throws {
        let dir = try TempDir()
        _ = try S.store(dir, "task_assigned")
        let store = try R.ingest(dir, [Self.iosLine])
        let out = dir.file("out")
        let r = CLI.run(store: store, ["export"] + argv + ["-o", out])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderrLines.count == 2, "\(r)")
        #expect(r.stderrLines.first?.hasPrefix("pushtrail export: ") == true)
        #expect(r.stderrLines.first?.contains(message) == true, "\(r)")
        #expect(r.stderrLines.last == "Run 'pushtrail export --help' for usage.")
        #expect(!exists(out))
    }

    @Test(
        "another format's option, without --format, is unused: a warning, and the file is written",
        arguments: [
            (["a0000000-0000-4000-8000-000000002006", "--bundle", "com.x"], "--bundle is for --format apns", "fcm"),
            (["a0000000-0000-4000-8000-000000002006", "--serial", "s"], "--serial is for --format adb", "fcm"),
            (["b0000000-0000-4000-8000-000000000001", "--token", "t"], "--token is for --format fcm", "apns"),
            (["b0000000-0000-4000-8000-000000000001", "--package", "p"], "--package is for --format adb", "apns"),
        ])
    func unusedOption(_ argv: [String], _ option: String, _ format: String) throws {
        let dir = try TempDir()
        _ = try S.store(dir, "task_assigned")
        let store = try R.ingest(dir, [Self.iosLine])
        let r = CLI.run(store: store, ["export"] + argv + ["-o", "-"])
        #expect(r.status == 0, "\(r)")
        let platform = format == "apns" ? "iOS" : "Android"
        #expect(
            r.stderr
                == "pushtrail: warning: \(option), unused: notification \(argv[0]) is an \(platform) notification, "
                + "written as \(format)\n")
        #expect(r.stdout.hasPrefix(format == "apns" ? #"{"Simulator Target Bundle":"# : #"{"message":"#))
    }

    @Test("--platform picks the thread's latest notification of that platform; the default format follows it")
    func platformPicks() throws {
        let dir = try TempDir()
        _ = try S.store(dir, "task_assigned")
        let store = try R.ingest(dir, [Self.iosLine])
        let latest = CLI.run(store: store, ["export", "--thread", "task-2006", "-o", "-", "--bundle", "com.b"])
        #expect(latest.stdout.hasPrefix(#"{"Simulator Target Bundle":"com.b","#), "\(latest)")
        let android = CLI.run(store: store, ["export", "--thread", "task-2006", "--platform", "android", "-o", "-"])
        #expect(android.stdoutBytes == (try S.expected("task_assigned", "fcm.json")), "\(android)")
        let adb = CLI.run(
            store: store, ["export", "--task", "2006", "--platform", "android", "--format", "adb", "-o", "-"])
        #expect(adb.stdoutBytes == (try S.expected("task_assigned", "adb.sh")), "\(adb)")
        let ios = CLI.run(store: store, ["export", "--task", "2006", "--platform", "ios", "-o", "-", "--bundle", "b"])
        #expect(ios.stdout.hasPrefix(#"{"Simulator Target Bundle":"b","aps""#), "\(ios)")
        // As of before the iOS one, --platform ios finds none: exit 1.
        let early = CLI.run(
            store: store, ["export", "--thread", "task-2006", "--platform", "ios", "--at", "@1", "-o", "-"])
        #expect(early.status == 1, "\(early)")
        #expect(
            early.stderr == "pushtrail: no iOS notification for thread task-2006 at or before --at in \(store)\n")
    }

    @Test("--all --dir writes each notification in its platform's format, numbered in timeline order")
    func allMixed() throws {
        let dir = try TempDir()
        _ = try S.store(dir, "task_assigned")
        let store = try R.ingest(dir, [Self.iosLine])
        let out = dir.file("all")
        let r = CLI.run(store: store, ["export", "--thread", "task-2006", "--all", "--dir", out, "--bundle", "com.b"])
        #expect(r.status == 0, "\(r)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == ["01-task-2006-1.fcm.json", "02-task-2006-2.apns"])
        #expect(
            FileManager.default.contents(atPath: out + "/01-task-2006-1.fcm.json").map(Array.init)
                == (try S.expected("task_assigned", "fcm.json")))
        let scripts = dir.file("scripts")
        let adb = CLI.run(
            store: store,
            [
                "export", "--thread", "task-2006", "--platform", "android", "--all", "--dir", scripts,
                "--format", "adb",
            ])
        #expect(adb.status == 0, "\(adb)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scripts) == ["01-task-2006-1.adb.sh"])
        // --format adb over both platforms is refused, naming the iOS one.
        let both = CLI.run(
            store: store, ["export", "--thread", "task-2006", "--all", "--dir", dir.file("none"), "--format", "adb"])
        #expect(both.status == 2, "\(both)")
        #expect(both.stderrLines.first?.contains("b0000000-0000-4000-8000-000000000001 is an iOS notification") == true)
        #expect(!exists(dir.file("none")))
    }

    @Test(
        "Android default names keep hostile thread ids inside the directory",
        arguments: ReplayCommandTests.hostileThreads)
    func hostileNames(_ thread: String) throws {
        for (name, tail) in [
            (SafeFileName.fcm(stem: thread, seq: 42, prefix: "07-"), "-42.fcm.json"),
            (SafeFileName.adb(stem: thread, seq: 42), "-42.adb.sh"),
        ] {
            #expect(name.utf8.count <= 255 && name.hasSuffix(tail) && !name.hasPrefix("."), "\(name)")
            #expect(!name.contains("/") && name != ".." && !name.unicodeScalars.contains { !$0.isASCII })
        }
        let dir = try TempDir()
        let line =
            #"{"type":"notification","id":"n-1","at":"2026-11-20T08:00:00Z","user":"u","platform":"android","#
            + #""payload":{"token":"t","data":{"thread_id":\#(R.q(thread))}}}"#
        let store = try R.ingest(dir, [line])
        let out = dir.file("out")
        let r = CLI.run(
            store: store, ["export", "--thread", thread, "--all", "--dir", out, "--format", "adb", "--package", "p"])
        #expect(r.status == 0, "\(r)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(names.count == 1 && names[0].hasPrefix("01-") && names[0].hasSuffix("-1.adb.sh"), "\(names)")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == ["store", "events.ndjson", "out"])
    }

    @Test("the adb script warns when it cannot match what FCM delivered: a notification block, a value not a string")
    func adbWarnings() throws {
        let dir = try TempDir()
        let store = try R.ingest(
            dir,
            [
                #"{"type":"notification","id":"n-1","at":"2026-11-20T08:00:00Z","user":"u","platform":"android","#
                    + #""payload":{"token":"t","notification":{"title":"Hi"},"data":{"task_id":7,"title":"x"}}}"#
            ])
        let r = CLI.run(store: store, ["export", "n-1", "--format", "adb", "--package", "p", "-o", "-"])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.stderrLines == [
                "pushtrail: warning: notification n-1 has payload.notification, which the system shows without "
                    + "buttons while the app is in the background; the broadcast sends only the data map",
                "pushtrail: warning: notification n-1 has payload.data.task_id, which is not a string (FCM refuses "
                    + "such a send): the broadcast passes its JSON text",
            ])
        #expect(r.stdout.contains("    --es task_id 7 \\\n"))
    }

    @Test("export --help, the man page and bash completion know the Android options and formats")
    func documented() throws {
        let help = CLI.run(["export", "--help"])
        for option in ["--format", "--platform", "--token", "--package", "--serial"] {
            #expect(help.stdout.contains(option), "\(option)")
        }
        #expect(CLI.run(["manpage"]).stdout.contains("\\-\\-format FORMAT"))
        let dir = try TempDir()
        let script = try ShellIntegrationTests.script("bash", in: dir)
        #expect(
            try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "export", "--format", ""]).sorted()
                == ["adb", "apns", "fcm"])
        #expect(
            try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "export", "--platform", ""]).sorted()
                == ["android", "ios"])
        #expect(
            try ShellIntegrationTests.bashCompletes(script, ["pushtrail", "import", "--platform", "a"]) == ["android"])
    }
}
