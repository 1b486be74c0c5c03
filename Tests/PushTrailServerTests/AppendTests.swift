import Foundation
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// `POST /v1/events`: ingest's rules over HTTP, the summary answer, strictness, the
/// body limit and content type, and appends beside CLI ingests and readers.
@Suite("pushtrail-server: appending")
struct AppendTests {
    static let ndjson = ["Content-Type: application/x-ndjson"]

    static func body(_ lines: [String]) -> [UInt8] { Array(lines.map { $0 + "\n" }.joined().utf8) }

    @Test(
        "a body appends its good lines and reports each bad one; sending it again gives duplicates",
        .enabled(if: ServerFixture.haveCurl))
    func summary() throws {
        let fixture = try ServerFixture(samples: false)
        let lines = ServerFixture.sampleLines
        let body = Self.body(Array(lines[0..<50]) + ["{\"type\":\"nope\"}", "", "not json"] + Array(lines[50..<60]))
        let first = try fixture.request("POST", "/v1/events", headers: Self.ndjson, body: body)
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json["read"] as? Int == 62)
        #expect(first.json["appended"] as? Int == 60)
        #expect(first.json["rejected"] as? Int == 2)
        #expect(first.json["first_seq"] as? Int == 1 && first.json["last_seq"] as? Int == 60)
        let rejects = try #require(first.json["rejects"] as? [[String: Any]])
        #expect(rejects.map { $0["line"] as? Int } == [51, 53])
        let again = try fixture.request("POST", "/v1/events", headers: Self.ndjson, body: body)
        #expect(again.json["appended"] as? Int == 0 && again.json["duplicates"] as? Int == 60, "\(again.text)")
        #expect(again.json["conflicts"] as? Int == 0)
        // A changed event under a stored id: a conflict, listed with its line.
        let changed = lines[0].replacingOccurrences(of: "\"user\":\"", with: "\"user\":\"x")
        let conflict = try fixture.request("POST", "/v1/events", headers: Self.ndjson, body: Self.body([changed]))
        #expect(conflict.status == 200 && conflict.json["conflicts"] as? Int == 1, "\(conflict.text)")
        #expect(fixture.cli(["verify"]).status == 0)
        #expect(fixture.cli(["head", "--json"]).stdout == Array(try fixture.request("GET", "/v1/head").body))
    }

    @Test(
        "the answer's counts and reasons equal ingest --json's and its rejects file for the same lines",
        .enabled(if: ServerFixture.haveCurl))
    func sameAsIngest() throws {
        let http = try ServerFixture(samples: false)
        let cliStore = try ServerFixture(samples: false)
        let corpus = try String(contentsOfFile: ServerFixture.root.path + "/Tests/Corpus/rules.ndjson", encoding: .utf8)
        let path = cliStore.dir + "/input.ndjson"
        try corpus.write(toFile: path, atomically: true, encoding: .utf8)
        let ingest = cliStore.cli(["ingest", "--json", path])
        let answer = try http.request("POST", "/v1/events", headers: Self.ndjson, body: Array(corpus.utf8))
        #expect(answer.status == 200)
        // The summary part is ingest --json's line, then the rejects.
        let summary = String(decoding: ingest.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
        #expect(answer.text.hasPrefix(String(summary.dropLast()) + ",\"rejects\":["), "\(answer.text)\n\(summary)")
        // Each reason as ingest says it on stderr (`FILE:LINE: reason`).
        for reject in answer.json["rejects"] as? [[String: Any]] ?? [] {
            let line = reject["line"] as! Int
            let reason = reject["reason"] as! String
            #expect(ingest.stderr.contains("\(path):\(line): \(reason)"), "line \(line): \(reason)")
        }
    }

    @Test("strict=1 is all or nothing: 422 at the first bad line, nothing stored", .enabled(if: ServerFixture.haveCurl))
    func strict() throws {
        let fixture = try ServerFixture(samples: false)
        let lines = ServerFixture.sampleLines
        let bad = try fixture.request(
            "POST", "/v1/events?strict=1", headers: Self.ndjson,
            body: Self.body(Array(lines[0..<20]) + ["[1,2]"] + lines[20..<30]))
        #expect(bad.status == 422, "\(bad.text)")
        #expect((bad.json["error"] as? String)?.hasPrefix("line 21: ") == true, "\(bad.text)")
        #expect(bad.json["appended"] as? Int == 0)
        #expect(try fixture.store.read { try $0.head().seq } == 0)
        let good = try fixture.request(
            "POST", "/v1/events?strict=1", headers: Self.ndjson, body: Self.body(Array(lines[0..<30])))
        #expect(good.status == 200 && good.json["appended"] as? Int == 30)
        #expect(try fixture.request("POST", "/v1/events?strict=maybe", headers: Self.ndjson, body: [10]).status == 400)
    }

    @Test(
        "415 for another content type, 413 over --max-body (declared or streamed), nothing stored",
        .enabled(if: ServerFixture.haveCurl))
    func limits() throws {
        let fixture = try ServerFixture(maxBody: 20_000, samples: false)
        let lines = ServerFixture.sampleLines
        let json = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/json"], body: Self.body([lines[0]]))
        #expect(json.status == 415)
        let none = try fixture.request("POST", "/v1/events", body: Self.body([lines[0]]))
        #expect(none.status == 415)
        let big = Self.body(Array(lines[0..<100]))
        #expect(big.count > 20_000)
        let declared = try fixture.request("POST", "/v1/events", headers: Self.ndjson, body: big)
        #expect(declared.status == 413, "\(declared.text)")
        let chunked = try fixture.request(
            "POST", "/v1/events", headers: Self.ndjson + ["Transfer-Encoding: chunked"], body: big)
        #expect(chunked.status == 413, "\(chunked.text)")
        #expect(try fixture.store.read { try $0.head().seq } == 0)
        // A line over 64 KiB is refused by itself; the body goes on.
        let long = "{\"type\":\"notification\",\"pad\":\"" + String(repeating: "a", count: 70_000) + "\"}"
        let roomy = try ServerFixture(maxBody: 1 << 20, samples: false)
        let answer = try roomy.request("POST", "/v1/events", headers: Self.ndjson, body: Self.body([long, lines[0]]))
        #expect(answer.status == 200 && answer.json["appended"] as? Int == 1 && answer.json["rejected"] as? Int == 1)
    }

    @Test(
        "concurrent POSTs, CLI ingests and readers on one store whose map grows under them: every event once",
        .enabled(if: ServerFixture.haveCurl))
    func concurrent() throws {
        // A 1 MiB map grows several times during the run, in the server (between its
        // own threads' transactions) and in the CLI processes (adopted by the server).
        let fixture = try ServerFixture(samples: false, mapSize: 1 << 20)
        let cli = try ServerProcessTests.built("pushtrail")
        let posters = 6
        let perBatch = 200
        let errors = NSLock()
        nonisolated(unsafe) var failures: [String] = []
        DispatchQueue.concurrentPerform(iterations: posters + 2) { worker in
            do {
                if worker < posters {
                    for batch in 0..<3 {
                        let lines = (0..<perBatch).map { ServerFixture.newEvent("c-\(worker)-\(batch)-\($0)") }
                        let answer = try fixture.request(
                            "POST", "/v1/events", headers: Self.ndjson, body: Self.body(lines))
                        if answer.json["appended"] as? Int != perBatch {
                            errors.withLock { failures.append("worker \(worker): \(answer.status) \(answer.text)") }
                        }
                    }
                } else if worker == posters {
                    let path = fixture.dir + "/cli.ndjson"
                    let lines = (0..<500).map { ServerFixture.newEvent("cli-\($0)") }
                    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
                    let ingest = Process()
                    ingest.executableURL = URL(fileURLWithPath: cli)
                    ingest.arguments = ["--store", fixture.storePath, "ingest", path]
                    ingest.environment = ["PUSHTRAIL_MAP_SIZE": "1048576"]
                    ingest.standardError = FileHandle.nullDevice
                    try ingest.run()
                    ingest.waitUntilExit()
                    if ingest.terminationStatus != 0 {
                        errors.withLock { failures.append("cli: exit \(ingest.terminationStatus)") }
                    }
                } else {
                    for _ in 0..<40 {
                        let head = try fixture.request("GET", "/v1/head")
                        let listing = try fixture.request("GET", "/v1/events?limit=50")
                        if head.status != 200 || listing.status != 200 {
                            errors.withLock { failures.append("reads: \(head.status) \(listing.status)") }
                        }
                    }
                }
            } catch {
                errors.withLock { failures.append("\(error)") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(fixture.store.fileBytes > 1 << 20, "the map should have grown")
        #expect(try fixture.store.read { try $0.head().seq } == UInt64(posters * 3 * perBatch + 500))
        #expect(fixture.cli(["verify"]).status == 0)
    }
}
