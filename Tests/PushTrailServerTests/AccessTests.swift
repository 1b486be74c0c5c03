import Foundation
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// Every route against every kind of caller: no token, a wrong one, and each role;
/// browser sessions from `/login`; and no secret in any answer or log line.
@Suite("pushtrail-server: who may do what")
struct AccessTests {
    enum Caller: String, CaseIterable {
        case none, wrong, ingest, read, admin
    }

    /// A route, and the status each caller gets.
    struct Case {
        var method: String
        var path: String
        var body: String?
        var contentType = "application/x-ndjson"
        var expected: [Caller: Int]

        init(method: String, path: String, body: String? = nil, contentType: String? = nil, expected: [Caller: Int]) {
            self.method = method
            self.path = path
            self.body = body
            if let contentType { self.contentType = contentType }
            self.expected = expected
        }
    }

    static func readable(_ ok: Int = 200) -> [Caller: Int] {
        [.none: 401, .wrong: 401, .ingest: 403, .read: ok, .admin: ok]
    }

    @Test(
        "every route × {no token, wrong token, each role}; tokens appear in no answer or log line",
        .enabled(if: ServerFixture.haveCurl))
    func matrix() throws {
        let fixture = try ServerFixture()
        var secrets: [Caller: String] = [.wrong: "pt_" + String(repeating: "Q", count: 43)]
        for role in Role.allCases {
            let caller = Caller(rawValue: role.rawValue)!
            secrets[caller] = try AccessTokens.add(
                name: "t-\(role)", role: role, storePath: fixture.storePath, now: ServerFixture.now)
        }
        let notification = try #require(
            (try JSONSerialization.jsonObject(with: Data(ServerFixture.sampleLines[0].utf8)) as? [String: Any])?["id"]
                as? String)
        var cases = [
            Case(
                method: "GET", path: "/healthz",
                expected: [.none: 200, .wrong: 200, .ingest: 200, .read: 200, .admin: 200]),
            Case(
                method: "GET", path: "/login",
                expected: [.none: 200, .wrong: 200, .ingest: 200, .read: 200, .admin: 200]),
            Case(method: "GET", path: "/", expected: Self.readable()),
            Case(method: "GET", path: "/search?q=u_alice", expected: Self.readable(303)),
            Case(method: "GET", path: "/search?q=gutters", expected: Self.readable()),
            Case(method: "GET", path: "/users/u_alice", expected: Self.readable()),
            Case(method: "GET", path: "/threads/task-1102?at=@50", expected: Self.readable()),
            Case(method: "GET", path: "/tasks/1102", expected: Self.readable()),
            Case(method: "GET", path: "/tasks/999999", expected: Self.readable(404)),
            Case(method: "GET", path: "/events/\(notification)", expected: Self.readable()),
            Case(
                method: "GET", path: "/events/@1?show_tokens=1",
                expected: [.none: 401, .wrong: 401, .ingest: 403, .read: 403, .admin: 200]),
            Case(method: "GET", path: "/audit?user=u_dana", expected: Self.readable()),
            Case(method: "GET", path: "/live", expected: Self.readable()),
            Case(
                method: "GET", path: "/assets/site.css",
                expected: [.none: 200, .wrong: 200, .ingest: 200, .read: 200, .admin: 200]),
            Case(method: "GET", path: "/metrics", expected: Self.readable()),
            Case(method: "GET", path: "/v1/head", expected: Self.readable()),
            Case(method: "GET", path: "/v1/stats", expected: Self.readable()),
            Case(method: "GET", path: "/v1/tasks/1102", expected: Self.readable()),
            Case(method: "GET", path: "/v1/tasks/999999", expected: Self.readable(404)),
            Case(method: "GET", path: "/v1/threads/task-1102?at=@50", expected: Self.readable()),
            Case(method: "GET", path: "/v1/events?limit=3", expected: Self.readable()),
            Case(method: "GET", path: "/v1/events/\(notification)", expected: Self.readable()),
            Case(method: "GET", path: "/v1/events/@1", expected: Self.readable()),
            Case(method: "GET", path: "/v1/events/\(notification)/export", expected: Self.readable()),
            Case(method: "GET", path: "/v1/audit?code=sent_after_unregistered", expected: Self.readable()),
            Case(method: "GET", path: "/v1/nope", expected: Self.readable(404)),
            Case(
                method: "GET", path: "/v1/tasks/1102?show_tokens=1",
                expected: [.none: 401, .wrong: 401, .ingest: 403, .read: 403, .admin: 200]),
            Case(method: "DELETE", path: "/v1/head", expected: Self.readable(405)),
            // What a cluster asks of a shard.
            Case(method: "GET", path: "/v1/unregistered", expected: Self.readable()),
            Case(
                method: "GET", path: "/v1/unregistered?keys=00112233445566778899aabbccddeeff",
                expected: Self.readable()),
            Case(method: "GET", path: "/v1/unregistered?keys=nothex", expected: Self.readable(400)),
            Case(method: "GET", path: "/v1/devices?thread=task-1102", expected: Self.readable()),
            Case(method: "GET", path: "/v1/devices?scope=log&user=u_dana", expected: Self.readable()),
            Case(method: "GET", path: "/v1/keys/users", expected: Self.readable()),
            Case(method: "GET", path: "/v1/keys/nope", expected: Self.readable(404)),
            Case(method: "GET", path: "/v1/verify", expected: Self.readable()),
            Case(method: "GET", path: "/v1/timeline?thread=task-1102", expected: Self.readable()),
            Case(method: "GET", path: "/v1/timeline", expected: Self.readable(400)),
            Case(
                method: "POST", path: "/v1/tasks/1102", body: #"{"unregistered":[]}"#, contentType: "application/json",
                expected: Self.readable()),
            Case(
                method: "POST", path: "/v1/audit?user=u_dana", body: #"{"unregistered":[]}"#,
                contentType: "application/json", expected: Self.readable()),
            Case(
                method: "POST", path: "/v1/timeline?task=1102", body: #"{"unregistered":[]}"#,
                contentType: "application/json", expected: Self.readable()),
            Case(
                method: "POST", path: "/v1/tasks/1102", body: #"{"unregistered":[{"device_key":"zz"}]}"#,
                contentType: "application/json", expected: Self.readable(400)),
            Case(
                method: "POST", path: "/v1/tasks/1102", body: #"{"unregistered":[]}"#, contentType: "text/plain",
                expected: Self.readable(415)),
        ]
        for i in Caller.allCases.indices {
            cases.append(
                Case(
                    method: "POST", path: "/v1/events", body: ServerFixture.newEvent("matrix-\(i)") + "\n",
                    expected: [.none: 401, .wrong: 401, .ingest: 200, .read: 403, .admin: 200]))
        }
        var answers: [String] = []
        for c in cases {
            for caller in Caller.allCases {
                var headers = c.body == nil ? [] : ["Content-Type: " + c.contentType]
                if let secret = secrets[caller] { headers.append("Authorization: Bearer \(secret)") }
                let answer = try fixture.request(
                    c.method, c.path, headers: headers, body: c.body.map { Array($0.utf8) })
                #expect(answer.status == c.expected[caller], "\(c.method) \(c.path) as \(caller): \(answer.text)")
                if answer.status == 401 {
                    #expect(answer.headers.contains("WWW-Authenticate: Bearer"), "\(c.path)")
                }
                answers.append(answer.headers + answer.text)
            }
        }
        // A secret is never repeated: not in an answer, not in the access log.
        for secret in secrets.values {
            #expect(!answers.contains { $0.contains(secret) })
            #expect(!fixture.log.contains { $0.contains(secret) })
        }
        #expect(fixture.log.count >= cases.count * Caller.allCases.count)
        // The token file holds hashes, never a secret, and only its owner may read it.
        let file = try String(contentsOfFile: fixture.storePath + "/tokens", encoding: .utf8)
        for secret in secrets.values { #expect(!file.contains(secret)) }
        let mode = try FileManager.default.attributesOfItem(atPath: fixture.storePath + "/tokens")[.posixPermissions]
        #expect((mode as? Int) == 0o600)
    }

    @Test(
        "/login sets an HttpOnly SameSite=Strict cookie that carries the token's role until it is revoked",
        .enabled(if: ServerFixture.haveCurl))
    func sessions() throws {
        let fixture = try ServerFixture()
        let secret = try AccessTokens.add(
            name: "support", role: .read, storePath: fixture.storePath, now: ServerFixture.now)
        let other = try AccessTokens.add(
            name: "backend", role: .ingest, storePath: fixture.storePath, now: ServerFixture.now)
        let form = ["Content-Type: application/x-www-form-urlencoded"]
        let wrong = try fixture.request("POST", "/login", headers: form, body: Array("token=pt_nope".utf8))
        #expect(wrong.status == 401 && !wrong.headers.contains("Set-Cookie"))
        let encoded = secret.replacingOccurrences(of: "-", with: "%2D")
        let login = try fixture.request("POST", "/login", headers: form, body: Array("token=\(encoded)".utf8))
        #expect(login.status == 303, "\(login.text)")
        let cookieLine = try #require(login.headers.split(separator: "\r\n").first { $0.hasPrefix("Set-Cookie:") })
        #expect(cookieLine.contains("HttpOnly") && cookieLine.contains("SameSite=Strict"))
        #expect(!cookieLine.contains("Secure"), "no Secure flag over plain HTTP")
        #expect(!cookieLine.contains(secret))
        let value = try #require(cookieLine.split(separator: " ").dropFirst().first).dropLast()
        let cookie = ["Cookie: other=1; \(value)"]
        #expect(try fixture.request("GET", "/v1/head", headers: cookie).status == 200)
        #expect(try fixture.request("GET", "/", headers: cookie).text.contains("read role"))
        let post = try fixture.request(
            "POST", "/v1/events", headers: cookie + ["Content-Type: application/x-ndjson"],
            body: Array((ServerFixture.newEvent("via-cookie") + "\n").utf8))
        #expect(post.status == 403)
        #expect(try fixture.request("GET", "/v1/head", headers: ["Cookie: pushtrail_session=deadbeef"]).status == 401)
        // Revoking the token ends its sessions.
        #expect(try AccessTokens.revoke(name: "support", storePath: fixture.storePath))
        #expect(try fixture.request("GET", "/v1/head", headers: cookie).status == 401)
        // Once tokens are required they stay required: revoking the last one opens nothing.
        #expect(try AccessTokens.revoke(name: "backend", storePath: fixture.storePath))
        #expect(try fixture.request("GET", "/v1/head").status == 401)
        #expect(try fixture.request("GET", "/v1/head", headers: ["Authorization: Bearer \(other)"]).status == 401)
        #expect(!fixture.log.contains { $0.contains(secret) || $0.contains(String(value)) })
    }

    @Test("with no token defined, loopback clients may do everything", .enabled(if: ServerFixture.haveCurl))
    func open() throws {
        let fixture = try ServerFixture()
        #expect(try fixture.request("GET", "/v1/head").status == 200)
        #expect(try fixture.request("GET", "/v1/tasks/1102?show_tokens=1").status == 200)
        let post = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/x-ndjson"],
            body: Array((ServerFixture.newEvent("open-1") + "\n").utf8))
        #expect(post.status == 200 && post.json["appended"] as? Int == 1, "\(post.text)")
        // A request a proxy forwarded is not a local client's.
        #expect(try fixture.request("GET", "/v1/head", headers: ["X-Forwarded-For: 203.0.113.9"]).status == 403)
        #expect(try fixture.request("GET", "/v1/head", headers: ["Forwarded: for=203.0.113.9"]).status == 403)
    }
}
