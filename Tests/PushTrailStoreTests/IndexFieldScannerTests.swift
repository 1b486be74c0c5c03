import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// `verify` reads index fields with `IndexFieldScanner` instead of `EventDecoder`:
/// for every event ingest accepts, both must give exactly the same index entries.
@Suite("IndexFieldScanner: the same index entries as the full decoder")
struct IndexFieldScannerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// An entry as (digest slot, key, value).
    struct Entry: Hashable, CustomStringConvertible {
        var slot: Int
        var key: [UInt8]
        var value: [UInt8]
        static func lexi(_ a: Entry, _ b: Entry) -> Bool {
            a.key == b.key ? a.value.lexicographicallyPrecedes(b.value) : a.key.lexicographicallyPrecedes(b.key)
        }
        var description: String {
            "\(IndexDigest.names[slot]) \(String(decoding: key, as: UTF8.self)) \(value)"
        }
    }

    struct Outcome: Equatable {
        var type: EventType
        var at: Timestamp
        var entries: [Entry]
        var unregistration: [String?]?
    }

    /// What verify's full-decoder path files the event under: the `ids` entry, and
    /// `Layout.indexEntries` with no stored notifications (the `unregistered` entry
    /// is looked up afterwards, so it is compared as (notification id, device)).
    static func byDecoder(_ line: [UInt8], seq: UInt64) -> Outcome? {
        var decoder = EventDecoder()
        guard let event = try? decoder.decodeForFiling(line) else { return nil }
        var entries = [Entry(slot: IndexDigest.ids, key: event.identityKey, value: Layout.bigEndian(seq))]
        var unregistration: [String?]?
        for (index, key) in Layout.indexEntries(of: event, seq: seq, notificationDevice: { _ in nil }) {
            if index == .unregistered { continue }
            entries.append(
                Entry(slot: IndexDigest.slot(index), key: key, value: Layout.indexValue(index, event.at, seq)))
        }
        if event.declaresTokenDead, let ref = event.referencedNotificationID {
            unregistration = [ref, event.device]
            // And the lookup as `Layout.indexEntries` does it, both ways.
            let own = Layout.indexEntries(of: event, seq: seq, notificationDevice: { _ in nil }).filter {
                $0.0 == .unregistered
            }
            precondition(own.map(\.1) == (event.device.map { [Layout.deviceKey($0)] } ?? []))
            let stored = Layout.indexEntries(of: event, seq: seq, notificationDevice: { $0 == ref ? "dev" : nil })
                .filter { $0.0 == .unregistered }
            precondition(stored.map(\.1) == [Layout.deviceKey("dev")])
        }
        return Outcome(
            type: event.type, at: event.at, entries: entries.sorted(by: Entry.lexiSlot), unregistration: unregistration)
    }

    static func byScanner(_ line: [UInt8], seq: UInt64, _ scanner: inout IndexFieldScanner) -> Outcome? {
        line.withUnsafeBytes { raw -> Outcome? in
            guard scanner.scan(raw) else { return nil }
            var entries: [Entry] = []
            scanner.forEachEntry(seq: seq) { slot, key, value in
                entries.append(Entry(slot: slot, key: Array(key), value: Array(value)))
            }
            var unregistration: [String?]?
            if scanner.isUnregistration {
                let u = scanner.deferredUnregistration()
                unregistration = [u.notificationID, u.device]
            }
            return Outcome(
                type: scanner.type, at: scanner.at, entries: entries.sorted(by: Entry.lexiSlot),
                unregistration: unregistration)
        }
    }

    /// Whether `line` is an Android notification: its fields are in the FCM message's
    /// data map, which the scanner leaves to the decoder (it declines the event, and
    /// verify decodes it in full).
    static func isAndroidNotification(_ line: [UInt8]) -> Bool {
        var decoder = EventDecoder()
        return (try? decoder.decode(line))?.notification?.platform == .android
    }

    /// Checks every line: an event the decoder accepts reads the same through the
    /// scanner, or, for an Android notification only, the scanner declines it; any
    /// other line must not crash it. Returns how many were events.
    @discardableResult
    static func check(_ lines: [[UInt8]], _ source: String) -> Int {
        var scanner = IndexFieldScanner()
        var events = 0
        var failures = 0
        for (n, line) in lines.enumerated() {
            let seq = UInt64(n + 1)
            let want = byDecoder(line, seq: seq)
            let got = byScanner(line, seq: seq, &scanner)
            guard let want else { continue }
            events += 1
            if got == nil && isAndroidNotification(line) { continue }
            if got != want {
                failures += 1
                if failures <= 5 {
                    Issue.record(
                        """
                        \(source) line \(n + 1): scanner \(got.map { "\($0)" } ?? "failed"), decoder \(want): \
                        \(String(decoding: line, as: UTF8.self))
                        """
                    )
                }
            }
        }
        #expect(failures == 0, "\(source): \(failures) of \(events) events differ")
        return events
    }

    static func lines(_ path: String) throws -> [[UInt8]] {
        let data = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
        return Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map {
            $0.last == UInt8(ascii: "\r") ? Array($0.dropLast()) : Array($0)
        }
    }

    // MARK: - Rewriting events into equivalent JSON

    /// The same JSON value written differently: members in reverse order, strings (keys
    /// and values) with every ASCII letter and digit as a `\u` escape and the rest as
    /// short escapes where JSON has them, whitespace between tokens.
    static func rewrite(
        _ json: JSONView, _ index: Int, reverse: Bool, escape: Bool, spaces: Bool, into out: inout [UInt8]
    ) {
        let gap: [UInt8] = spaces ? Array(" \t\r\n ".utf8) : []
        switch json.kind(index) {
        case .object:
            out.append(UInt8(ascii: "{"))
            var members = json.members(index)
            if reverse { members.reverse() }
            for (k, (key, value)) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                out += gap
                rewrite(json, key, reverse: reverse, escape: escape, spaces: spaces, into: &out)
                out += gap
                out.append(UInt8(ascii: ":"))
                out += gap
                rewrite(json, value, reverse: reverse, escape: escape, spaces: spaces, into: &out)
                out += gap
            }
            out.append(UInt8(ascii: "}"))
        case .array:
            out.append(UInt8(ascii: "["))
            for (k, element) in json.elements(index).enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                out += gap
                rewrite(json, element, reverse: reverse, escape: escape, spaces: spaces, into: &out)
                out += gap
            }
            out.append(UInt8(ascii: "]"))
        case .string where escape:
            out.append(UInt8(ascii: "\""))
            for c in json.stringBytes(index) {
                switch c {
                case UInt8(ascii: "\""): out += Array("\\\"".utf8)
                case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
                case UInt8(ascii: "/"): out += Array("\\/".utf8)
                case 0x0A: out += Array("\\n".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0..<0x20, UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let hex = String(c, radix: 16, uppercase: c % 2 == 0)
                    out += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                default: out.append(c)
                }
            }
            out.append(UInt8(ascii: "\""))
        default:
            out += Array(json.rawText(index))
        }
    }

    static func variants(_ line: [UInt8]) -> [[UInt8]] {
        var tape = JSONTape()
        guard (try? line.withUnsafeBytes { try tape.parse($0) }) != nil else { return [] }
        return line.withUnsafeBytes { bytes in
            tape.nodes.withUnsafeBufferPointer { nodes in
                let json = JSONView(nodes: nodes, bytes: bytes)
                return [(true, false, false), (false, true, false), (true, true, true), (false, false, true)].map {
                    var out: [UInt8] = []
                    rewrite(json, json.root, reverse: $0.0, escape: $0.1, spaces: $0.2, into: &out)
                    return out
                }
            }
        }
    }

    // MARK: - Tests

    @Test("the accepted corpus, Samples/events.ndjson and every other corpus file (rejected lines must not crash it)")
    func corpora() throws {
        let accepted = try IndexFieldScannerTests.lines(
            IndexFieldScannerTests.root.appendingPathComponent("Tests/Corpus/accepted.ndjson").path)
        #expect(IndexFieldScannerTests.check(accepted, "accepted.ndjson") == accepted.count)
        let samples = try IndexFieldScannerTests.lines(
            IndexFieldScannerTests.root.appendingPathComponent("Samples/events.ndjson").path)
        #expect(IndexFieldScannerTests.check(samples, "Samples/events.ndjson") > 100)
        let corpus = IndexFieldScannerTests.root.appendingPathComponent("Tests/Corpus").path
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted() where name.hasSuffix(".ndjson")
        {
            IndexFieldScannerTests.check(try IndexFieldScannerTests.lines(corpus + "/" + name), name)
        }
        // The same events written differently.
        for (name, lines) in [("accepted.ndjson", accepted), ("Samples/events.ndjson", samples)] {
            let rewritten = lines.flatMap(IndexFieldScannerTests.variants)
            #expect(IndexFieldScannerTests.check(rewritten, "\(name) rewritten") == rewritten.count)
        }
    }

    @Test("hand-written events: escapes in keys and values, unusual orders, tricky nested values, uppercase ids, 410s")
    func handWritten() throws {
        let lines = [
            #"{"payload":{"task_id":-42,"aps":{"thread-id":"t\"1\\","alert":{"title":"}{][\"","body":"x"}}},"#
                + #""user":"\u00e9l\u00E8ve","at":"2026-11-29T10:00:00.123456789Z","#
                + #""id":"ABCDEF01-0000-4000-8000-00000000000A","type":"notification"}"#,
            #"{"\u0074ype":"action","\u0069d":"a\\b","a\u0074":"2026-11-29T10:00:00+02:00","user":"\ud83d\ude00 x","#
                + #""task_\u0069d":9223372036854775807,"action":"open","outcome":"ok","notification_id":"ABC\u0044ef","#
                + #""thread\u005fid":"th","payload":{"task_id":"nope","aps":3},"changes":{"a":[{"}":"]"}],"b":null}}"#,
            #"{ "type" : "delivery" , "id" : "d1" , "at" : "2026-02-28t23:59:60z" , "user" : "u" ,"#
                + #" "notification_id" : "N-1" , "status" : 410 , "device" : "d\/ev" }"#,
            #"{"type":"delivery","id":"d2","at":"2024-02-29T00:00:00Z","user":"u","notification_id":"n","status":410}"#,
            #"{"type":"delivery","id":"d3","at":"2024-02-29T00:00:00.5-00:30","user":"u","notification_id":"n","#
                + #""status":200,"reason":"x","device":"q"}"#,
            #"{"type":"notification","id":"n2","at":"2026-11-29T10:00:00Z","user":"u","payload":{"aps":{}},"#
                + #""task_id":"root is ignored","thread_id":7,"notification_id":[],"status":"x"}"#,
            #"{"type":"notification","id":"n3","at":"2026-11-29T10:00:00Z","user":"u","#
                + #""payload":{"aps":{"thread-id":"\u0000\n\t"},"task_id":0},"device":"\u20ac"}"#,
            #"{"type":"action","id":"a2","at":"2026-11-29T10:00:00Z","user":"u","task_id":-0,"action":"complete","#
                + #""outcome":"rejected","http_status":409,"error":"e"}"#,
            "{\"type\":\"action\",\"id\":\"a3\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"ü\",\"task_id\":1,"
                + "\"action\":\"edit\",\"outcome\":\"ok\",\"thread_id\":\"日本\"}\r",
        ].map { Array($0.utf8) }
        var decoder = EventDecoder()
        for line in lines {
            #expect(throws: Never.self, "\(String(decoding: line, as: UTF8.self))") {
                _ = try decoder.decodeForFiling(line)
            }
        }
        #expect(IndexFieldScannerTests.check(lines, "hand-written") == lines.count)
        let rewritten = lines.flatMap(IndexFieldScannerTests.variants)
        #expect(IndexFieldScannerTests.check(rewritten, "hand-written rewritten") == rewritten.count)
    }

    @Test(
        "hasUppercase, 8 bytes at a time, matches a bytewise check: every byte value at every position of 1 to 24 bytes"
    )
    func uppercaseCheck() {
        for length in 1...24 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    let expected = value >= 0x41 && value <= 0x5A
                    let got = bytes.withUnsafeBytes { IndexFieldScanner.hasUppercase($0) }
                    if got != expected {
                        Issue.record("byte 0x\(String(value, radix: 16)) at \(position) of \(length): \(got)")
                        return
                    }
                }
            }
        }
        #expect(![UInt8]().withUnsafeBytes { IndexFieldScanner.hasUppercase($0) })
    }

    @Test("what ingest would refuse is handed to the decoder, not read")
    func refusals() {
        var scanner = IndexFieldScanner()
        for text in [
            #"{"type":"action","type":"action","id":"a","at":"2026-11-29T10:00:00Z","user":"u","task_id":1}"#,
            #"{"type":"notification","id":"n","at":"2026-11-29T10:00:00Z","user":"u","payload":{"aps":{},"#
                + #""task_id":1.5}}"#,
            #"{"type":"notification","id":"n","at":"2026-11-29T10:00:00Z","user":"u","payload":{"aps":[]}}"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n","status":99}"#,
            #"{"type":"delivery","id":"d","at":"2026-02-30T10:00:00Z","user":"u","notification_id":"n","status":200}"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"","notification_id":"n","status":200}"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"\u12","notification_id":"n","#
                + #""status":200}"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n","status":200"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n","status":200}x"#,
            #"{"type":"delivery","id":"d","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n","#
                + #""payload":{"aps":{"x":"}"#,
        ] {
            let ok = Array(text.utf8).withUnsafeBytes { scanner.scan($0) }
            #expect(!ok, "\(text)")
        }
    }

    @Test("a generated 60,000-event stream with anomalies, as written and rewritten, and verify of its store")
    func generated() throws {
        try withTemporaryDirectory { dir in
            let input = dir + "/events.ndjson"
            try AgreementFixtures.generate(
                ["--events", "60000", "--seed", "11", "--anomalies", "0.02", "-o", input], in: dir)
            let lines = try IndexFieldScannerTests.lines(input)
            #expect(lines.count == 60000)
            #expect(IndexFieldScannerTests.check(lines, "generated") == lines.count)
            let rewritten = lines.prefix(5000).flatMap(IndexFieldScannerTests.variants)
            #expect(IndexFieldScannerTests.check(rewritten, "generated rewritten") == rewritten.count)

            // The whole store verifies: many values per index key (pages of them), 410s.
            var options = StoreOptions()
            options.noSync = true
            let store = try Store(path: dir + "/store", create: true, options: options)
            let ingest = Ingest(
                store: store, sources: [.file(input)], options: IngestOptions(), clock: { AgreementFixtures.recordedAt }
            )
            let summary = try ingest.run()
            #expect(summary.appended == 60000)
            let report = try store.verify()
            #expect(report.ok, "\(report)")
            #expect(report.events == 60000)
        }
    }
}

extension IndexFieldScannerTests.Entry {
    static func lexiSlot(_ a: Self, _ b: Self) -> Bool {
        a.slot != b.slot ? a.slot < b.slot : lexi(a, b)
    }
}
