import Foundation
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// The listing, the event stream, the downloads and the metrics.
@Suite("pushtrail-server: listings, streams, downloads, metrics")
struct StreamTests {
    @Test("GET /v1/events equals log --json for filters, limit and order", .enabled(if: ServerFixture.haveCurl))
    func listing() throws {
        let fixture = try ServerFixture()
        let cases: [[(String, String)]] = [
            [], [("order", "desc")], [("limit", "7")], [("limit", "7"), ("order", "desc")], [("limit", "0")],
            [("user", "u_alice")], [("task", "1102")], [("thread", "task-1102"), ("order", "desc")],
            [("type", "action")], [("since", "2026-11-29"), ("until", "2026-11-30")], [("grep", "complete")],
            [("category", "TASK_ACTIONS"), ("limit", "3")],
        ]
        for (query, argv) in cases.map(ServerFixture.question) {
            let answer = try fixture.request("GET", "/v1/events" + query)
            #expect(answer.status == 200)
            #expect(answer.headers.contains("application/x-ndjson"))
            #expect(answer.body == fixture.cli(["log", "--json"] + argv).stdout, "\(query)")
        }
        #expect(try fixture.request("GET", "/v1/events?limit=-1").status == 400)
        #expect(try fixture.request("GET", "/v1/events?order=up").status == 400)
        #expect(try fixture.request("GET", "/v1/events?since=whenever").status == 400)
    }

    @Test("HEAD sends headers and no body, for a stream too, so a pipelined request after it is read right")
    func headOfListing() throws {
        let fixture = try ServerFixture()
        let answer = try fixture.raw(
            "HEAD /v1/events?limit=2 HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/head HTTP/1.1\r\nHost: x\r\n\r\n",
            until: { $0.contains("\"hash\"") })
        let parts = answer.components(separatedBy: "\r\n\r\n")
        try #require(parts.count >= 3, "\(answer)")
        #expect(parts[0].hasPrefix("HTTP/1.1 200"))
        #expect(parts[0].contains("application/x-ndjson"))
        // Straight after the HEAD's headers comes the next answer, not a body.
        #expect(parts[1].hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(parts[2] == String(decoding: fixture.cli(["head", "--json"]).stdout, as: UTF8.self))
        // A whole answer's HEAD names the GET's length, and sends nothing of it.
        let head = try fixture.raw(
            "HEAD /v1/head HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            until: { $0.hasSuffix("ok\n") })
        let length = fixture.cli(["head", "--json"]).stdout.count
        #expect(head.contains("Content-Length: \(length)\r\n"), "\(head)")
        #expect(head.components(separatedBy: "\r\n\r\n").dropFirst().first?.hasPrefix("HTTP/1.1 200") == true)
    }

    @Test("a listing larger than one chunk streams whole", .enabled(if: ServerFixture.haveCurl))
    func longListing() throws {
        let fixture = try ServerFixture()
        let lines = (0..<1500).map { ServerFixture.newEvent("long-\($0)") }
        let post = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/x-ndjson"], body: AppendTests.body(lines))
        #expect(post.json["appended"] as? Int == 1500)
        let answer = try fixture.request("GET", "/v1/events")
        #expect(answer.body == fixture.cli(["log", "--json"]).stdout)
        #expect(answer.body.filter { $0 == 10 }.count == 1500 + ServerFixture.sampleLines.count)
    }

    @Test(
        "/v1/stream sends new events as log --json lines with their seq as id, and resumes after Last-Event-ID",
        .enabled(if: ServerFixture.haveCurl))
    func stream() throws {
        let fixture = try ServerFixture()
        let head = try fixture.store.read { try $0.head().seq }
        // A stream from the head, open (its first comment read) before two events are
        // appended; they must come down it.
        let stream = try fixture.sendRaw("GET /v1/stream?type=notification HTTP/1.1\r\nHost: x\r\n\r\n")
        defer { close(stream) }
        let opening = ServerFixture.receive(stream, until: { $0.contains(": pushtrail events after seq") })
        #expect(opening.contains("after seq \(head)\n"), "\(opening)")
        let lines = [ServerFixture.newEvent("live-1"), ServerFixture.newEvent("live-2")]
        _ = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/x-ndjson"], body: AppendTests.body(lines))
        // Until the second event's whole message (its chunk ends "\n\n\r\n").
        let rest = ServerFixture.receive(stream) {
            $0.contains("id: \(head + 2)\n") && ($0.hasSuffix("\n\n") || $0.hasSuffix("\n\n\r\n"))
        }
        let text = Self.dechunked(opening + rest)
        #expect(text.hasPrefix("retry: 2000\n"), "\(text)")
        let expected = fixture.cli(["log", "--json", "--since", "@\(head)"]).stdout
        let expectedLines = String(decoding: expected, as: UTF8.self).split(separator: "\n")
        #expect(expectedLines.count == 2)
        for (i, line) in expectedLines.enumerated() {
            #expect(text.contains("id: \(head + UInt64(i) + 1)\ndata: \(line)\n\n"), "\(text)")
        }
        // Resuming after the first: the second only, and events from before are not repeated.
        let resumed = try fixture.request(
            "GET", "/v1/stream", headers: ["Last-Event-ID: \(head + 1)"], timeout: 1.5, extra: ["-N"])
        #expect(resumed.text.contains("id: \(head + 2)\n") && !resumed.text.contains("id: \(head + 1)\n"))
        #expect(try fixture.request("GET", "/v1/stream", headers: ["Last-Event-ID: x"]).status == 400)
    }

    /// The body of a raw chunked HTTP answer: its chunks' bytes, without the head.
    static func dechunked(_ answer: String) -> String {
        guard let start = answer.range(of: "\r\n\r\n") else { return "" }
        var rest = Substring(answer[start.upperBound...])
        var body = ""
        while let eol = rest.range(of: "\r\n"), let size = Int(rest[..<eol.lowerBound], radix: 16), size > 0 {
            let chunk = rest[eol.upperBound...].utf8.prefix(size)
            body += String(decoding: chunk, as: UTF8.self)
            rest = Substring(String(decoding: rest[eol.upperBound...].utf8.dropFirst(size + 2), as: UTF8.self))
        }
        return body
    }

    @Test("downloads are export -o -'s bytes, named as export names the file", .enabled(if: ServerFixture.haveCurl))
    func downloads() throws {
        let fixture = try ServerFixture()
        var checked = 0
        for line in ServerFixture.sampleLines {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["type"] as? String == "notification", let id = object["id"] as? String
            else { continue }
            let android = line.contains("\"message\"")
            let formats: [(String, [String])] =
                android
                ? [
                    ("", []),
                    ("?format=adb&package=com.example.app", ["--format", "adb", "--package", "com.example.app"]),
                    ("?format=fcm&token=abc", ["--format", "fcm", "--token", "abc"]),
                ]
                : [("?bundle=com.example.app", ["--bundle", "com.example.app"])]
            for (query, argv) in formats {
                let cli = fixture.cli(["export", id, "-o", "-"] + argv)
                let answer = try fixture.request("GET", "/v1/events/\(id)/export" + query)
                if cli.status != 0 {
                    #expect(
                        answer.status >= 400,
                        "\(id)\(query): the CLI refused (\(cli.stderr)) but the server gave \(answer.status)")
                    continue
                }
                #expect(answer.status == 200, "\(id)\(query): \(answer.text)")
                #expect(answer.body == cli.stdout, "\(id)\(query)")
                #expect(answer.headers.contains("Content-Disposition: attachment; filename=\""), "\(answer.headers)")
                checked += 1
            }
        }
        #expect(checked > 20)
        #expect(try fixture.request("GET", "/v1/events/@1/export?format=zip").status == 400)
    }

    @Test(
        "/metrics counts appends and requests by route and status, with a latency histogram",
        .enabled(if: ServerFixture.haveCurl))
    func metrics() throws {
        let fixture = try ServerFixture()
        _ = try fixture.request("GET", "/v1/tasks/1102")
        _ = try fixture.request("GET", "/v1/tasks/999999")
        _ = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/x-ndjson"],
            body: AppendTests.body([ServerFixture.newEvent("m-1"), ServerFixture.newEvent("m-2")]))
        // A request is counted once it has completed, just after its answer went out.
        var text = ""
        for _ in 0..<50 {
            text = try fixture.request("GET", "/metrics").text
            if text.contains("pushtrail_http_request_duration_seconds_count{route=\"/v1/events\"} 1\n") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(text.contains("pushtrail_events_appended_total 2\n"))
        #expect(text.contains("pushtrail_http_requests_total{route=\"/v1/tasks/{id}\",status=\"200\"} 1\n"))
        #expect(text.contains("pushtrail_http_requests_total{route=\"/v1/tasks/{id}\",status=\"404\"} 1\n"))
        #expect(text.contains("pushtrail_http_request_duration_seconds_count{route=\"/v1/events\"} 1\n"))
        #expect(text.contains("pushtrail_store_events \(ServerFixture.sampleLines.count + 2)\n"))
        #expect(text.contains("# TYPE pushtrail_http_request_duration_seconds histogram"))
    }
}
