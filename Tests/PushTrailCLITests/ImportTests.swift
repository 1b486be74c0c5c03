import Foundation
import Testing

@Suite("import: .apns files as notifications")
struct ImportTests {
    static let bundleKey = "Simulator Target Bundle"

    /// Imports `files` and returns the `--json` lines, one per file.
    func importJSON(_ store: String, _ files: [String], _ extra: [String] = []) throws -> (Outcome, [JSON]) {
        let r = CLI.run(store: store, ["import", "--json", "--user", "u_support"] + extra + files)
        return (r, try JSON.lines(r.stdout))
    }

    @Test(
        "the 7 sample .apns files become notifications: topic from the bundle key, payload without it, keys in order"
    )
    func samples() throws {
        let dir = try TempDir()
        let files = try Samples.apnsFiles()
        #expect(files.count == 7)
        let (r, lines) = try importJSON(dir.store, files)
        #expect(r.status == 0, "\(r)")
        #expect(lines.count == files.count)

        for (file, line) in zip(files, lines) {
            #expect(line["file"]?.string == file)
            #expect(line["outcome"]?.string == "appended")
            let id = try #require(line["id"]?.string)
            let apns = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            let shown = try #require(try CLI.show(dir.store, id), "\(file) as \(id)")
            #expect(shown["seq"] == line["seq"])
            let event = try #require(shown["event"])
            #expect(event["type"]?.string == "notification")
            #expect(event["id"]?.string == id)
            #expect(event["user"]?.string == "u_support")
            #expect(event["topic"] == apns[ImportTests.bundleKey], "\(file)")
            let payload = try #require(event["payload"])
            #expect(payload[ImportTests.bundleKey] == nil)
            #expect(
                payload.keys == apns.keys.filter { $0 != ImportTests.bundleKey }, "\(file): keys in the original order")
            for key in payload.keys {
                #expect(payload[key] == apns[key], "\(file): \(key)")
                // Nested objects keep their order too.
                #expect(payload[key]?.keys == apns[key]?.keys)
            }
            #expect(payload["aps"]?["alert"]?.keys == apns["aps"]?["alert"]?.keys)
        }
        #expect(try CLI.stats(dir.store)["by_type"]?["notification"]?.int == 7)
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)
    }

    @Test("importing the same files again is a duplicate, not new events")
    func reimportIsDuplicate() throws {
        let dir = try TempDir()
        let files = try Samples.apnsFiles()
        let (first, firstLines) = try importJSON(dir.store, files)
        #expect(first.status == 0)
        let (again, againLines) = try importJSON(dir.store, files)
        #expect(again.status == 0, "\(again)")
        #expect(againLines.map { $0["outcome"]?.string } == Array(repeating: "duplicate", count: files.count))
        #expect(againLines.map { $0["id"] } == firstLines.map { $0["id"] })
        #expect(againLines.map { $0["seq"] } == firstLines.map { $0["seq"] })
        #expect(try CLI.stats(dir.store)["events"]?.int == files.count)

        let text = CLI.run(store: dir.store, ["import", "--user", "u_support", files[0]])
        #expect(text.status == 0)
        #expect(text.stdout.contains("duplicate"))
    }

    @Test("at defaults to the file's modification time; --at sets it; another time is another event")
    func atTime() throws {
        let dir = try TempDir()
        let source = try #require(try Samples.apnsFiles().first)
        let copy = dir.file("copy.apns")
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        let mtime = Date(timeIntervalSince1970: 1_795_167_000)  // 2026-11-20T09:30:00Z
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: copy)

        let (r1, l1) = try importJSON(dir.store, [copy])
        #expect(r1.status == 0, "\(r1)")
        let id1 = try #require(l1.first?["id"]?.string)
        let e1 = try #require(try CLI.show(dir.store, id1)?["event"])
        let at1 = try #require(e1["at"]?.string)
        #expect(try UTC.microseconds(at1) == 1_795_167_000_000_000)

        let (r2, l2) = try importJSON(dir.store, [copy], ["--at", "2026-11-21T08:00:00Z"])
        #expect(r2.status == 0)
        #expect(l2.first?["outcome"]?.string == "appended")
        #expect(l2.first?["id"] != l1.first?["id"])
        let id2 = try #require(l2.first?["id"]?.string)
        let e2 = try #require(try CLI.show(dir.store, id2)?["event"])
        let at2 = try #require(e2["at"]?.string)
        #expect(try UTC.microseconds(at2) == UTC.microseconds("2026-11-21T08:00:00Z"))
    }

    @Test("import --at takes relative times and dates, also a value starting with '-'")
    func atExpressions() throws {
        let dir = try TempDir()
        let file = try #require(try Samples.apnsFiles().first)
        let now = CLI.now.microseconds
        let cases: [([String], Int64)] = [
            (["--at", "-2h"], now - 7_200_000_000),
            (["--at=-90s"], now - 90_000_000),
            (["--at", "2026-11-29"], try UTC.microseconds("2026-11-29T00:00:00Z")),
            (["--at", "2026-11-29T12:00:00+02:00"], try UTC.microseconds("2026-11-29T10:00:00Z")),
        ]
        for (option, expected) in cases {
            let (r, lines) = try importJSON(dir.store, [file], option)
            #expect(r.status == 0, "\(option): \(r)")
            let id = try #require(lines.first?["id"]?.string)
            let at = try #require(try CLI.show(dir.store, id)?["event"]?["at"]?.string)
            #expect(try UTC.microseconds(at) == expected, "\(option) gave \(at)")
        }
        let bad = CLI.run(store: dir.store, ["import", "--user", "u", "--at", "last tuesday", file])
        #expect(bad.status == 2, "\(bad)")
    }

    @Test("--topic wins over the bundle key, and --id names the event")
    func topicAndID() throws {
        let dir = try TempDir()
        let file = try #require(try Samples.apnsFiles().first)
        let id = "0a1b2c3d-0000-4000-8000-123456789abc"
        let (r, lines) = try importJSON(dir.store, [file], ["--topic", "com.example.other", "--id", id])
        #expect(r.status == 0, "\(r)")
        #expect(lines.first?["id"]?.string == id)
        let event = try #require(try CLI.show(dir.store, id)?["event"])
        #expect(event["topic"]?.string == "com.example.other")
        #expect(event["payload"]?[ImportTests.bundleKey] == nil)
    }

    @Test("--id with two files is a usage error (exit 2) and stores nothing")
    func idWithTwoFiles() throws {
        let dir = try TempDir()
        let files = try Samples.apnsFiles()
        let r = CLI.run(
            store: dir.store,
            ["import", "--user", "u", "--id", "0a1b2c3d-0000-4000-8000-123456789abc", files[0], files[1]])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("--id"))
        #expect(r.stderr.contains("--help"))
        #expect(!exists(dir.store))
    }

    @Test("import without --user, or without a file, is a usage error")
    func usage() throws {
        let dir = try TempDir()
        let file = try #require(try Samples.apnsFiles().first)
        let noUser = CLI.run(store: dir.store, ["import", file])
        #expect(noUser.status == 2)
        #expect(noUser.stderr.contains("--user"))
        let noFile = CLI.run(store: dir.store, ["import", "--user", "u"])
        #expect(noFile.status == 2)
    }

    @Test("a .apns file with a trailing comma is exit 65 naming the file; the good files are still imported")
    func trailingComma() throws {
        let dir = try TempDir()
        let bad = try dir.write("broken.apns", bytes: Array("{\n  \"aps\": {\"alert\": \"hi\"},\n}\n".utf8))
        let good = try #require(try Samples.apnsFiles().first)
        let r = CLI.run(store: dir.store, ["import", "--user", "u", bad, good])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderrLines.count == 1)
        #expect(r.stderr.hasPrefix("pushtrail: \(bad): "), "\(r)")
        #expect(try CLI.stats(dir.store)["events"]?.int == 1)
    }

    @Test("a .apns file that is not an object, or has no aps, is exit 65")
    func notAPayload() throws {
        let dir = try TempDir()
        let array = try dir.write("array.apns", bytes: Array("[1,2]".utf8))
        let noAps = try dir.write("noaps.apns", bytes: Array("{\"Simulator Target Bundle\":\"b\",\"task_id\":1}".utf8))
        for file in [array, noAps] {
            let r = CLI.run(store: dir.store, ["import", "--user", "u", file])
            #expect(r.status == 65, "\(r)")
            #expect(r.stderr.contains(file))
        }
    }

    @Test("a missing .apns file is exit 74")
    func missingFile() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["import", "--user", "u", dir.file("nope.apns")])
        #expect(r.status == 74)
        #expect(r.stderr.contains("nope.apns"))
    }
}
