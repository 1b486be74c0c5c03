import Foundation
import Testing

/// One rule of the input format broken by one line, and the reason stderr must give.
struct BrokenRule: Sendable, CustomTestStringConvertible {
    let name: String
    let line: [UInt8]
    /// Text the `pushtrail: FILE:2: reason` line must contain.
    let reason: String

    init(_ name: String, _ line: String, _ reason: String) {
        self.init(name, Array(line.utf8), reason)
    }

    init(_ name: String, _ line: [UInt8], _ reason: String) {
        self.name = name
        self.line = line
        self.reason = reason
    }

    var testDescription: String { name }

    /// A delivery whose `user` value is `u` followed by `bytes` (raw, not escaped).
    static func deliveryWithUserBytes(_ bytes: [UInt8]) -> [UInt8] {
        Array("{\"type\":\"delivery\",\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u".utf8) + bytes
            + Array("\",\"notification_id\":\"n-1\",\"status\":200}".utf8)
    }

    /// A line of exactly `size` bytes (a delivery with a padding field).
    static func delivery(ofSize size: Int) -> String {
        let bare = Line.delivery("sized", extra: ",\"pad\":\"\"")
        return Line.delivery(
            "sized", extra: ",\"pad\":\"" + String(repeating: "x", count: size - bare.utf8.count) + "\"")
    }

    static let all: [BrokenRule] = [
        BrokenRule("invalid JSON", "{\"type\":\"delivery\",\"id\":\"bad\"", "invalid JSON"),
        BrokenRule("an array, not an object", "[\"delivery\",\"bad\"]", "not an object"),
        BrokenRule("a string, not an object", "\"delivery\"", "not an object"),
        BrokenRule("invalid UTF-8 (0xFF)", deliveryWithUserBytes([0xFF]), "invalid UTF-8"),
        BrokenRule("invalid UTF-8 (overlong 0xC0 0xAF)", deliveryWithUserBytes([0xC0, 0xAF]), "invalid UTF-8"),
        BrokenRule(
            "invalid UTF-8 (encoded surrogate 0xED 0xA0 0x80)", deliveryWithUserBytes([0xED, 0xA0, 0x80]),
            "invalid UTF-8"),
        BrokenRule(
            "a lone high surrogate",
            Line.delivery("bad", user: "u").replacingOccurrences(of: "\"u\"", with: "\"u\\uD800\""),
            "lone high surrogate"),
        BrokenRule(
            "a lone low surrogate",
            Line.delivery("bad", user: "u").replacingOccurrences(of: "\"u\"", with: "\"u\\uDC00x\""),
            "lone low surrogate"),
        BrokenRule(
            "type missing",
            "{\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u\",\"notification_id\":\"n\",\"status\":200}",
            "missing \"type\""),
        BrokenRule(
            "type unknown", Line.delivery("bad").replacingOccurrences(of: "\"delivery\"", with: "\"ping\""),
            "\"type\" is \"ping\"; expected notification, action or delivery"),
        BrokenRule(
            "type not a string", Line.delivery("bad").replacingOccurrences(of: "\"delivery\"", with: "3"),
            "\"type\" must be a string"),
        BrokenRule(
            "id missing", Line.delivery("bad").replacingOccurrences(of: "\"id\":\"bad\",", with: ""), "missing \"id\""),
        BrokenRule("id empty", Line.delivery(""), "\"id\" must be 1–128 bytes, not 0"),
        BrokenRule(
            "id of 129 bytes", Line.delivery(String(repeating: "i", count: 129)),
            "\"id\" must be 1–128 bytes, not 129"),
        BrokenRule(
            "id of 130 bytes in 65 two-byte characters", Line.delivery(String(repeating: "é", count: 65)),
            "\"id\" must be 1–128 bytes, not 130"),
        BrokenRule("at not a time", Line.delivery("bad", at: "yesterday"), "\"at\" is \"yesterday\""),
        BrokenRule(
            "at without a zone", Line.delivery("bad", at: "2026-11-29T10:00:00"), "\"at\" is \"2026-11-29T10:00:00\""),
        BrokenRule(
            "at on February 30", Line.delivery("bad", at: "2026-02-30T10:00:00Z"),
            "\"at\" is \"2026-02-30T10:00:00Z\""),
        BrokenRule("user empty", Line.delivery("bad", user: ""), "\"user\" must be 1–256 bytes, not 0"),
        BrokenRule(
            "user of 257 bytes", Line.delivery("bad", user: String(repeating: "u", count: 257)),
            "\"user\" must be 1–256 bytes, not 257"),
        BrokenRule(
            "notification payload missing",
            "{\"type\":\"notification\",\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u\"}",
            "notification has no \"payload\""),
        BrokenRule(
            "notification payload not an object",
            "{\"type\":\"notification\",\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u\",\"payload\":[1]}",
            "\"payload\" must be an object"),
        BrokenRule(
            "notification payload without aps",
            "{\"type\":\"notification\",\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u\","
                + "\"payload\":{\"task_id\":1}}",
            "\"payload\" has no \"aps\" object"),
        BrokenRule(
            "notification aps not an object",
            "{\"type\":\"notification\",\"id\":\"bad\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u\","
                + "\"payload\":{\"aps\":\"x\"}}",
            "\"payload.aps\" must be an object"),
        BrokenRule(
            "thread-id of 256 bytes", Line.notification("bad", thread: String(repeating: "t", count: 256)),
            "\"payload.aps.thread-id\" must be 1–255 bytes, not 256"),
        BrokenRule(
            "thread-id empty", Line.notification("bad", thread: ""),
            "\"payload.aps.thread-id\" must be 1–255 bytes, not 0"),
        BrokenRule(
            "action task_id missing", Line.action("bad").replacingOccurrences(of: "\"task_id\":1101,", with: ""),
            "action has no \"task_id\""),
        BrokenRule(
            "action task_id a string", Line.action("bad").replacingOccurrences(of: "1101", with: "\"1101\""),
            "\"task_id\" must be an integer"),
        BrokenRule(
            "action task_id a fraction", Line.action("bad").replacingOccurrences(of: "1101", with: "1101.5"),
            "\"task_id\" must be an integer"),
        BrokenRule("action unknown", Line.action("bad", action: "snooze"), "\"action\" is \"snooze\""),
        BrokenRule(
            "outcome unknown", Line.action("bad", outcome: "maybe"),
            "\"outcome\" is \"maybe\"; expected ok, rejected or failed"),
        BrokenRule(
            "delivery without notification_id",
            Line.delivery("bad").replacingOccurrences(of: ",\"notification_id\":\"n-1\"", with: ""),
            "delivery has no \"notification_id\""),
        BrokenRule("delivery status 600", Line.delivery("bad", status: 600), "from 100 to 599, not 600"),
        BrokenRule("delivery status 99", Line.delivery("bad", status: 99), "from 100 to 599, not 99"),
        BrokenRule(
            "delivery status missing", Line.delivery("bad").replacingOccurrences(of: ",\"status\":200", with: ""),
            "delivery has no \"status\""),
        BrokenRule("a line of 64 KiB + 1 bytes", delivery(ofSize: 65_537), "over the limit of 65536 (64 KiB)"),
        BrokenRule(
            "a line starting with a BOM", [0xEF, 0xBB, 0xBF] + Array(Line.delivery("bad").utf8), "byte-order mark"),
    ]
}

@Suite("Bad input, end to end through the executable")
struct BadInputTests {
    @Test(
        "a line breaking an input format rule is rejected with FILE:2 and its reason; good lines around it are stored",
        arguments: BrokenRule.all)
    func rejectsTheLineAndKeepsTheRest(_ rule: BrokenRule) throws {
        let dir = try TempDir()
        let first = Line.delivery("good-before")
        let last = Line.delivery("good-after", user: "u_other")
        let input = try dir.write(
            "input.ndjson", bytes: Array((first + "\n").utf8) + rule.line + Array(("\n" + last + "\n").utf8))

        let ingest = try Binary.run(["--store", dir.store, "ingest", input])
        #expect(ingest.status == 65, "\(ingest)")
        let lines = ingest.stderrLines
        #expect(lines.count == 1, "exactly one rejection line expected: \(ingest)")
        let message = try #require(lines.first.map(String.init))
        #expect(message.hasPrefix("pushtrail: \(input):2: "), "\(message)")
        #expect(message.contains(rule.reason), "reason should contain \(rule.reason): \(message)")

        let stats = try Binary.run(["--store", dir.store, "stats", "--json"])
        #expect(stats.status == 0, "\(stats)")
        let json = try stats.json()
        #expect(json["events"]?.int == 2)
        #expect(json["by_type"]?["delivery"]?.int == 2)
        #expect(try CLI.show(dir.store, "good-before")?["event"] == JSON.parse(first))
        #expect(try CLI.show(dir.store, "good-after")?["event"] == JSON.parse(last))
        #expect(try CLI.show(dir.store, "bad") == nil)
    }

    @Test("lines at the edge of each limit are accepted")
    func boundariesAreAccepted() throws {
        let dir = try TempDir()
        let lines = [
            Line.delivery(String(repeating: "i", count: 128)),
            Line.delivery(String(repeating: "é", count: 64)),
            // 128 bytes once unescaped, 768 as written.
            Line.delivery("x").replacingOccurrences(
                of: "\"x\"", with: "\"" + String(repeating: "\\u0063", count: 128) + "\""),
            Line.delivery("user-256", user: String(repeating: "u", count: 256)),
            Line.notification("thread-255", thread: String(repeating: "t", count: 255)),
            Line.delivery("status-100", status: 100),
            Line.delivery("status-599", status: 599),
            Line.delivery("offset", at: "2026-11-17T10:00:00.123456789+02:00"),
            Line.delivery("lowercase-t-z", at: "2026-11-29t10:00:00z"),
            Line.action("negative-task", task: -7),
            BrokenRule.delivery(ofSize: 65_536),
        ]
        let input = try dir.write("edges.ndjson", lines: lines)
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty)
        #expect(try r.json()["appended"]?.int == lines.count)
    }

    @Test("an event time with an offset and sub-microsecond digits is shown in UTC, truncated")
    func offsetTimesAreNormalised() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "at.ndjson", lines: [Line.delivery("offset", at: "2026-11-17T10:00:00.1239999+02:00")])
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        let show = CLI.run(store: dir.store, ["show", "offset"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("2026-11-17T08:00:00.123Z"), "\(show)")
    }

    @Test("a 17 MiB line is rejected without crashing, and the lines after it are stored")
    func hugeLine() throws {
        let dir = try TempDir()
        let huge = "{\"type\":\"delivery\",\"pad\":\"" + String(repeating: "y", count: 17 << 20) + "\"}"
        let input = try dir.write("huge.ndjson", lines: [Line.delivery("before"), huge, Line.delivery("after")])
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 65)
        #expect(r.stderr.contains("\(input):2: "), "\(r.stderr.prefix(300))")
        #expect(r.stderr.contains("64 KiB"))
        let summary = try r.json()
        #expect(summary["rejected"]?.int == 1)
        #expect(summary["appended"]?.int == 2)
        #expect(try CLI.show(dir.store, "after") != nil)
    }

    @Test("blank lines are skipped but still counted in FILE:LINE, and each file numbers its own lines")
    func lineNumbers() throws {
        let dir = try TempDir()
        let a = try dir.write("a.ndjson", lines: [Line.delivery("a1"), "", "   \t", "nonsense", Line.delivery("a2")])
        let b = try dir.write("b.ndjson", lines: ["[]", Line.delivery("b2")])
        let r = CLI.run(store: dir.store, ["ingest", "--json", a, b])
        #expect(r.status == 65)
        #expect(r.stderrLines.count == 2)
        #expect(r.stderrLines.first?.hasPrefix("pushtrail: \(a):4: invalid JSON") == true, "\(r)")
        #expect(r.stderrLines.last?.hasPrefix("pushtrail: \(b):1: ") == true, "\(r)")
        let summary = try r.json()
        #expect(summary["read"]?.int == 5)
        #expect(summary["appended"]?.int == 3)
        #expect(summary["rejected"]?.int == 2)
    }

    @Test("a last line without a line break is read")
    func lastLineWithoutNewline() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "tail.ndjson", bytes: Array((Line.delivery("one") + "\n" + Line.delivery("two")).utf8))
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 0)
        #expect(try r.json()["appended"]?.int == 2)
        #expect(try CLI.show(dir.store, "two") != nil)
    }
}
