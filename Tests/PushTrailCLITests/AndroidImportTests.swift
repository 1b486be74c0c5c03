import Foundation
import Testing

@Suite("import --platform android: FCM message files as Android notifications")
struct AndroidImportTests {
    static let at = "2026-11-20T08:00:00Z"

    /// Imports `files` as Android notifications and returns the `--json` lines.
    func importJSON(_ store: String, _ files: [String], _ extra: [String] = []) throws -> (Outcome, [JSON]) {
        let r = CLI.run(
            store: store, ["import", "--json", "--platform", "android", "--user", "u_support"] + extra + files)
        return (r, try JSON.lines(r.stdout))
    }

    /// The stored lines of a store, as `log --raw` gives them back.
    func rawLines(_ store: String) throws -> [String] {
        let r = CLI.run(store: store, ["log", "--raw"])
        guard r.status == 0 else { throw HarnessError("log --raw failed: \(r)") }
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// `text` without the whitespace outside strings: what import keeps of a message.
    static func compact(_ text: [UInt8]) -> String {
        var out: [UInt8] = []
        var inString = false
        var escaped = false
        for c in text {
            if inString {
                out.append(c)
                if escaped {
                    escaped = false
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                } else if c == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if c == UInt8(ascii: "\"") {
                inString = true
                out.append(c)
            } else if ![0x20, 0x0A, 0x0D, 0x09].contains(c) {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test("the 7 sample FCM files become Android notifications whose payload is the message, keys and values as sent")
    func samples() throws {
        let dir = try TempDir()
        let files = try Samples.androidFiles()
        #expect(
            files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
                == (try Samples.apnsFiles()).map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent })
        let (r, lines) = try importJSON(dir.store, files, ["--at", Self.at])
        #expect(r.status == 0, "\(r)")
        #expect(lines.map { $0["outcome"]?.string } == Array(repeating: "appended", count: 7))
        let raws = try rawLines(dir.store)
        #expect(raws.count == 7)
        for (file, (line, raw)) in zip(files, zip(lines, raws)) {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            let message = try #require(try JSON.parse(bytes)["message"], "\(file)")
            let event = try JSON.parse(raw)
            #expect(event.keys == ["type", "id", "at", "user", "platform", "payload"], "\(file)")
            #expect(event["id"] == line["id"])
            #expect(event["platform"]?.string == "android")
            #expect(event["payload"]?.description == message.description, "\(file): keys in order, values equal")
            // The payload is the message's own text, whitespace between tokens removed.
            let text = Self.compact(bytes)
            let messageText = String(text.dropFirst("{\"message\":".count).dropLast())
            #expect(raw.hasSuffix(",\"payload\":" + messageText + "}"), "\(file)")
            // Every data value is a string, as FCM carries them.
            for (key, value) in try #require(
                message["data"].map { d -> [(String, JSON)] in
                    if case .object(let m) = d { return m.map { ($0.key, $0.value) } }
                    return []
                })
            {
                #expect(value.string != nil, "\(file): data.\(key)")
            }
        }
        let thread = try CLI.run(store: dir.store, ["thread", "task-2003", "--json"]).json()
        let n = try #require(thread["events"]?[0])
        #expect(n["platform"]?.string == "android")
        #expect(n["category"]?.string == "TASK_IN_PROGRESS")
        #expect(n["buttons"]?.description == #"["edit","complete","cancel"]"#)
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)
    }

    @Test(
        "each sample alone in a fresh store gives the findings of its iOS twin, no more",
        arguments: [
            ("task_assigned", []), ("task_cancelled", ["category_state_mismatch"]),
            ("task_completed", ["category_state_mismatch"]), ("task_due_soon", []), ("task_generic_free_user", []),
            ("task_in_progress", ["category_state_mismatch"]), ("task_overdue", []),
        ] as [(String, [String])])
    func sampleFindings(_ name: String, _ codes: [String]) throws {
        func findings(_ file: String, _ platform: [String]) throws -> [String] {
            let dir = try TempDir()
            let r = CLI.run(store: dir.store, ["import", "--user", "u1", "--at", Self.at] + platform + [file])
            #expect(r.status == 0, "\(r)")
            let audit = CLI.run(store: dir.store, ["audit", "--json"])
            #expect(audit.status == (codes.isEmpty ? 0 : 1), "\(audit)")
            guard case .array(let list)? = try audit.json()["findings"] else { return ["?"] }
            return list.map { $0["code"]?.string ?? "?" }
        }
        let android = try findings(Samples.directory + "/android/\(name).json", ["--platform", "android"])
        #expect(android == codes)
        #expect(try findings(Samples.directory + "/\(name).apns", []) == android)
    }

    @Test("the event is type, id, at, user, platform, project, then the payload exactly as in the file")
    func eventShape() throws {
        let dir = try TempDir()
        let message = #"{"token":"tok:1","data":{"task_id":"7","title":"Caf\u00e9 \"x\"","n":"1.50"}}"#
        let file = try dir.write("m.json", bytes: Array("{ \"message\" :\n  \(message)\n}\n".utf8))
        let id = "0a1b2c3d-0000-4000-8000-123456789abc"
        let r = CLI.run(
            store: dir.store,
            [
                "import", "--platform", "android", "--user", "u_ann", "--at", "2026-11-20T08:00:00.5Z", "--id", id,
                "--project", "honeydue-prod", file,
            ])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "\(file): notification \(id) stored as seq 1\n")
        #expect(
            try rawLines(dir.store) == [
                #"{"type":"notification","id":"0a1b2c3d-0000-4000-8000-123456789abc","#
                    + #""at":"2026-11-20T08:00:00.500Z","user":"u_ann","platform":"android","#
                    + #""project":"honeydue-prod","payload":"# + message + "}"
            ])
    }

    @Test("a send body and the bare message give the same payload; validate_only beside message is accepted")
    func wrapperAndBare() throws {
        let dir = try TempDir()
        let message = try String(contentsOfFile: try Samples.androidFiles()[0], encoding: .utf8)
        let body = try JSON.parse(message)["message"]!.description
        let wrapped = try dir.write("wrapped.json", bytes: Array(message.utf8))
        let bare = try dir.write("bare.json", bytes: Array(body.utf8))
        let validate = try dir.write(
            "validate.json", bytes: Array(#"{"validate_only":false,"message":"#.utf8) + Array(body.utf8) + [125])
        let (r, lines) = try importJSON(dir.store, [wrapped, bare, validate], ["--at", Self.at])
        #expect(r.status == 0, "\(r)")
        #expect(lines.map { $0["outcome"]?.string } == ["appended", "appended", "appended"])
        let payloads = try rawLines(dir.store).map { try JSON.parse($0)["payload"]?.description }
        #expect(payloads == [body, body, body])
        // The files differ, so their derived ids do.
        #expect(Set(lines.map { $0["id"]?.string }).count == 3)
    }

    @Test("importing the same files again is a duplicate; another --at is another event")
    func reimport() throws {
        let dir = try TempDir()
        let files = try Samples.androidFiles()
        let (first, firstLines) = try importJSON(dir.store, files, ["--at", Self.at])
        #expect(first.status == 0, "\(first)")
        let (again, againLines) = try importJSON(dir.store, files, ["--at", Self.at])
        #expect(again.status == 0, "\(again)")
        #expect(againLines.map { $0["outcome"]?.string } == Array(repeating: "duplicate", count: files.count))
        #expect(againLines.map { $0["id"] } == firstLines.map { $0["id"] })
        #expect(againLines.map { $0["seq"] } == firstLines.map { $0["seq"] })
        let text = CLI.run(store: dir.store, ["import", "--platform", "android", "--user", "u_support", files[0]])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("stored as seq 8"), "without --at the file's time counts: \(text)")
        #expect(try CLI.stats(dir.store)["events"]?.int == files.count + 1)
    }

    @Test("at defaults to the file's modification time")
    func modificationTime() throws {
        let dir = try TempDir()
        let copy = dir.file("copy.json")
        try FileManager.default.copyItem(atPath: try Samples.androidFiles()[0], toPath: copy)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_795_167_000)], ofItemAtPath: copy)
        let (r, lines) = try importJSON(dir.store, [copy])
        #expect(r.status == 0, "\(r)")
        let id = try #require(lines.first?["id"]?.string)
        #expect(try CLI.show(dir.store, id)?["event"]?["at"]?.string == "2026-11-20T09:30:00.000Z")
    }

    @Test(
        "a bad file is one line naming it and the reason, exit 65; the good files are still imported",
        arguments: [
            ("[1,2]", "an FCM message file must hold a JSON object, not an array"),
            (#"{"message":[1]}"#, #""message" must be an object, not an array"#),
            (#"{"message":{"data":{}},"token":"t"}"#, #"a send body holds "message" and "validate_only" only"#),
            (#"{"foo":1}"#, "not an FCM message"),
            (#"{"message":{"data":{"task_id":"7a"}}}"#, #""payload.data.task_id" must be a string of decimal digits"#),
            (#"{"message":{"data":{"is_premium":"yes"}}}"#, #""payload.data.is_premium" must be "true" or "false""#),
            (#"{"message":{"data":[]}}"#, #""payload.data" must be an object, not an array"#),
            (#"{"message":{"data":{}},}"#, ""),
            (
                #"{"Simulator Target Bundle":"b","aps":{"alert":"hi"}}"#,
                "this is an APNs payload (it has \"aps\"), not an FCM message: import it without --platform android"
            ),
        ])
    func badFile(_ content: String, _ reason: String) throws {
        let dir = try TempDir()
        let bad = try dir.write("bad.json", bytes: Array(content.utf8))
        let good = try Samples.androidFiles()[0]
        let r = CLI.run(store: dir.store, ["import", "--platform", "android", "--user", "u", bad, good])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderrLines.count == 1, "\(r)")
        #expect(r.stderr.hasPrefix("pushtrail: \(bad): \(reason)"), "\(r)")
        #expect(try CLI.stats(dir.store)["events"]?.int == 1)
    }

    @Test("an FCM message file imported as an .apns file says to pass --platform android (exit 65)")
    func messageWithoutPlatform() throws {
        let dir = try TempDir()
        let file = try Samples.androidFiles()[0]
        let r = CLI.run(store: dir.store, ["import", "--user", "u", file])
        #expect(r.status == 65, "\(r)")
        #expect(
            r.stderr
                == "pushtrail: \(file): this is an FCM message, not an APNs payload: "
                + "import it with --platform android\n"
        )
    }

    @Test(
        "--topic is iOS-only, --project Android-only, --platform ios or android: usage errors (exit 2), nothing stored",
        arguments: [
            (["--platform", "android", "--topic", "com.x"], "--topic"), (["--project", "p"], "--project"),
            (["--platform", "ios", "--project", "p"], "--project"), (["--platform", "windows"], "--platform"),
        ])
    func usage(_ extra: [String], _ option: String) throws {
        let dir = try TempDir()
        let file = try Samples.androidFiles()[0]
        let r = CLI.run(store: dir.store, ["import", "--user", "u"] + extra + [file])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderrLines.first?.contains(option) == true, "\(r)")
        #expect(!exists(dir.store))
        let none = CLI.run(store: dir.store, ["import", "--platform", "android", "--user", "u"])
        #expect(none.stderrFirstLine == "pushtrail import: name at least one FCM message file", "\(none)")
    }

    @Test("a missing file is exit 74")
    func missing() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["import", "--platform", "android", "--user", "u", dir.file("nope.json")])
        #expect(r.status == 74, "\(r)")
        #expect(r.stderr.contains("nope.json"))
    }
}
