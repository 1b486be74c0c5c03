import Foundation
import PushTrailCLI
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// The read routes against the real libmicrohttpd on a loopback port, spoken to with
/// curl: every answer must be byte for byte what the CLI's `--json` prints for the same
/// question, and errors must be the documented statuses with a JSON reason.
@Suite("pushtrail-server: the read routes answer with the CLI's JSON")
final class ReadRoutesTests {
    let fixture: ServerFixture
    var store: Store { fixture.store }
    var server: HTTPServer { fixture.server }

    init() throws { fixture = try ServerFixture() }

    struct CLIFailure: Error, CustomStringConvertible { let description: String }

    /// Runs the CLI in-process on the served store.
    func cli(_ argv: [String]) -> (status: Int32, stdout: [UInt8], stderr: String) { fixture.cli(argv) }

    /// `curl` of `path` on the server: status and body.
    func get(_ path: String, method: String = "GET") throws -> (status: Int, body: [UInt8]) {
        let answer = try fixture.request(method, path, timeout: 10)
        return (answer.status, answer.body)
    }

    /// Sends `request` as written on a new connection; the start of the answer.
    func raw(_ request: String) throws -> String { try fixture.raw(request) }

    static var haveCurl: Bool { ServerFixture.haveCurl }

    @Test(
        "every task and thread of the sample, and a spread of at values, equal task/thread --json",
        .enabled(if: haveCurl))
    func equivalence() throws {
        let stats = cli(["stats", "--json"])
        #expect(stats.status == 0)
        var tasks: Set<Int64> = []
        var threads: Set<String> = []
        try store.read { reader in
            try reader.log(LogQuery()) { loaded in
                if let t = loaded.event.taskID { tasks.insert(t) }
                if let th = loaded.event.threadID { threads.insert(th) }
                return true
            }
        }
        #expect(tasks.count >= 19 && threads.count >= 19)
        let ats: [String?] = [nil, "@61", "@200", "2026-11-10", "2026-11-20T08:00:00.500Z", "-30d", "now", "@1"]
        var compared = 0
        for at in ats {
            let (query, atArgs) = ServerFixture.question(at.map { [("at", $0)] } ?? [])
            for task in tasks.sorted() {
                let cli = cli(["task", String(task), "--json"] + atArgs)
                let http = try get("/v1/tasks/\(task)\(query)")
                if cli.status == 0 {
                    #expect(http.status == 200, "task \(task) at \(at ?? "-")")
                    #expect(http.body == cli.stdout, "task \(task) at \(at ?? "-")")
                    compared += 1
                } else {
                    #expect(cli.status == 1 && http.status == 404, "task \(task) at \(at ?? "-"): \(http.status)")
                }
            }
            for thread in threads.sorted() {
                let path = thread.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? thread
                let cli = cli(["thread", thread, "--json"] + atArgs)
                let http = try get("/v1/threads/\(path)\(query)")
                if cli.status == 0 {
                    #expect(http.status == 200 && http.body == cli.stdout, "thread \(thread) at \(at ?? "-")")
                    compared += 1
                } else {
                    #expect(cli.status == 1 && http.status == 404, "thread \(thread) at \(at ?? "-")")
                }
            }
        }
        #expect(compared > 150)
        // Every event by seq, and by id (a notification's also upper-cased).
        var events = 0
        try store.read { reader in
            for seq in 1...(try reader.head().seq) {
                guard let stored = try reader.event(seq: seq) else { continue }
                let id = try stored.decode().id
                let cli = cli(["show", "@\(seq)", "--json"])
                #expect(try get("/v1/events/@\(seq)").body == cli.stdout, "@\(seq)")
                let path = id.uppercased().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
                if stored.type == .notification { #expect(try get("/v1/events/\(path)").body == cli.stdout, "\(id)") }
                events += 1
            }
        }
        #expect(events == 224)
        #expect(try get("/v1/events/no-such-id").status == 404)
        #expect(try get("/v1/events/@999999").status == 404)
        // The audit, whole and filtered, as audit --json prints it (the CLI exits 1 with findings).
        let audits: [[(String, String)]] = [
            [], [("task", "1102")], [("thread", "task-1301")], [("user", "u_hana")], [("type", "delivery")],
            [("category", "TASK_ACTIONABLE")], [("notification_type", "task_overdue")],
            [("since", "2026-11-20"), ("until", "@210")], [("code", "too_many_actions,delivery_failed")],
            [("grep", "GUTTERS")], [("user", "nobody")],
        ]
        for parameters in audits {
            let (query, argv) = ServerFixture.question(parameters)
            let cli = cli(["audit", "--json"] + argv)
            #expect(cli.status == 0 || cli.status == 1)
            let http = try get("/v1/audit" + query)
            #expect(http.status == 200 && http.body == cli.stdout, "audit \(query)")
        }
        for (route, argv) in [("/v1/head", ["head", "--json"]), ("/v1/stats", ["stats", "--json"])] {
            let http = try get(route)
            #expect(http.status == 200)
            #expect(http.body == cli(argv).stdout, "\(route)")
        }
    }

    @Test(
        "errors: 404 and 400 with a JSON reason, 405 for other methods; /healthz; one log line each",
        .enabled(if: haveCurl))
    func errors() throws {
        func reason(_ body: [UInt8]) -> String {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return "" }
            return object["error"] as? String ?? ""
        }
        let health = try get("/healthz")
        #expect(health.status == 200 && health.body == Array("ok\n".utf8))
        let missing = try get("/v1/tasks/999999")
        #expect(missing.status == 404 && reason(missing.body) == "no events for task 999999")
        let early = try get("/v1/tasks/1102?at=@1")
        #expect(early.status == 404 && reason(early.body) == "no events for task 1102 at or before at")
        let bad = try get("/v1/tasks/abc")
        #expect(bad.status == 400 && reason(bad.body) == "a task id is an integer, not abc")
        let badAt = try get("/v1/threads/task-1102?at=yesterday")
        #expect(badAt.status == 400 && reason(badAt.body).hasPrefix("at: \"yesterday\" is not a time"))
        #expect(try get("/v1/threads/..%2F..%2Fetc").status == 404)
        #expect(try get("/nope").status == 404)
        let badCode = try get("/v1/audit?code=nope")
        #expect(badCode.status == 400 && reason(badCode.body).hasPrefix("unknown --code nope; codes are "))
        let badTask = try get("/v1/audit?task=x")
        #expect(badTask.status == 400 && reason(badTask.body) == "--task takes an integer task id, not x")
        #expect(try get("/v1/head", method: "DELETE").status == 405)
        #expect(try get("/v1/head", method: "POST").status == 405)
        // Both a length and chunked encoding: refused, whatever the route.
        #expect(
            try raw(
                "POST /v1/head HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            ).hasPrefix("HTTP/1.1 400"))
        // Garbage and an oversized header are the library's to refuse; the server goes on.
        _ = try raw("GARBAGE\r\n\r\n")
        #expect(
            try raw("GET /v1/head HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 400_000) + "\r\n\r\n")
                .hasPrefix("HTTP/1.1 431"))
        #expect(try get("/healthz").status == 200)
        // One access-log line per request, with the route template, never the path or query.
        let log = fixture.log
        #expect(log.count == 13, "\(log)")
        #expect(log.contains { $0.hasPrefix("GET /v1/tasks/{id} 404 ") })
        #expect(!log.contains { $0.contains("1102") || $0.contains("yesterday") || $0.contains("etc") }, "\(log)")
    }
}
