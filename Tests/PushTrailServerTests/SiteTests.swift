import Foundation
import PushTrailModel
import PushTrailStore
import PushTrailWeb
import Testing

@testable import PushTrailServer

/// The support site's pages through the real server on loopback (no token defined, so
/// the caller is an admin): where search lands, what the as-of control shows, that a
/// pinned page never changes, masking, statuses, and the sign-in form's return path.
/// Scripts/ui-test.sh walks the same pages in a real browser.
@Suite("pushtrail-server: the support site")
struct SiteTests {
    @Test("URLs made from store values: only unreserved bytes stay as they are")
    func urls() {
        #expect(HTML.percentEncoded("Az09-._~") == "Az09-._~")
        #expect(HTML.percentEncoded("a/b?c#d\"<> é") == "a%2Fb%3Fc%23d%22%3C%3E%20%C3%A9")
        #expect(HTML.url(["events", "x/../y"], [("at", "@5"), ("through", nil)]) == "/events/x%2F..%2Fy?at=%405")
        #expect(HTML.url([""]) == "/")
        #expect(HTML.url(["users", ".."]) == "/users/%2E%2E" && HTML.url(["threads", "."]) == "/threads/%2E")
    }

    @Test("the sign-in form returns only to a path of this server")
    func localPaths() {
        for good in ["/", "/users/u_alice?at=%405", "/threads/task-1102"] {
            #expect(LoginUpload.localPath(good) == good)
        }
        for bad in ["", "//evil.example/", "/\\evil.example", "https://evil.example/", "users", "/a\r\nSet-Cookie: x"] {
            #expect(LoginUpload.localPath(bad) == nil, "\(bad)")
        }
    }

    @Test("search lands on the one thing a term names", .enabled(if: ServerFixture.haveCurl))
    func search() throws {
        let fixture = try ServerFixture()
        for (term, place) in [
            ("1102", "/tasks/1102"), ("u_alice", "/users/u_alice"), ("act_0013", "/events/act_0013"),
            ("task-1109", "/threads/task-1109"), ("@5", "/events/%405"), ("", "/"),
        ] {
            let answer = try fixture.request("GET", "/search?q=" + ServerFixture.encoded(term))
            #expect(answer.status == 303 && answer.headers.contains("Location: \(place)\r\n"), "\(term)")
        }
        let words = try fixture.request("GET", "/search?q=gutters")
        #expect(words.status == 200 && words.text.contains("Clean gutters"))
        let nothing = try fixture.request("GET", "/search?q=nowhere-at-all")
        #expect(nothing.status == 200 && nothing.text.contains("No user, task, thread or event is named that"))
    }

    @Test("a task's page as of a time, the steps around it, and its statuses", .enabled(if: ServerFixture.haveCurl))
    func asOf() throws {
        let fixture = try ServerFixture()
        let then = try fixture.request("GET", "/tasks/1102?at=2026-11-08T23:59:00Z")
        #expect(then.status == 200)
        #expect(then.text.contains("<dt>State</dt><dd><span class=\"state active\">active</span>"))
        #expect(then.text.contains("<dt>Completions</dt><dd>0</dd>"))
        #expect(!then.text.contains("Overdue: Clean gutters"))
        #expect(then.text.contains("Next event (@"))
        let now = try fixture.request("GET", "/tasks/1102")
        #expect(now.text.contains("<span class=\"state completed\">completed</span>"))
        #expect(now.text.contains("No later event"))

        // At @60, no event after seq 60 is drawn.
        let early = try fixture.request("GET", "/threads/task-1102?at=@60")
        let seqs = early.text.components(separatedBy: "<span class=\"seq\">#").dropFirst().compactMap {
            Int($0.prefix { $0.isNumber })
        }
        #expect(!seqs.isEmpty && seqs.allSatisfy { $0 <= 60 })

        #expect(try fixture.request("GET", "/tasks/abc").status == 400)
        #expect(try fixture.request("GET", "/tasks/999999").status == 404)
        let missing = try fixture.request("GET", "/users/nobody")
        #expect(missing.status == 404 && missing.headers.contains("Content-Type: text/html"))
        #expect(try fixture.request("GET", "/threads/task-1102?at=yesterday-ish").status == 400)
    }

    @Test("a pinned page stays the same when events arrive later", .enabled(if: ServerFixture.haveCurl))
    func pinned() throws {
        let fixture = try ServerFixture()
        let pinned = "/threads/task-1102?at=2026-11-09T12:00:00Z&through=%40224"
        let before = try fixture.request("GET", pinned)
        #expect(before.status == 200 && before.text.contains("as the store knew it at @224"))
        let late = """
            {"type":"action","id":"act-late","at":"2026-11-08T20:00:00Z","user":"u_alice","task_id":1102,\
            "action":"open","outcome":"ok","thread_id":"task-1102"}

            """
        let post = try fixture.request(
            "POST", "/v1/events", headers: ["Content-Type: application/x-ndjson"], body: Array(late.utf8))
        #expect(post.status == 200)
        let after = try fixture.request("GET", pinned)
        #expect(after.body == before.body)
        let unpinned = try fixture.request("GET", "/threads/task-1102?at=2026-11-09T12:00:00Z")
        #expect(unpinned.text.contains("act-late"))
    }

    @Test(
        "device tokens are masked unless an admin asks; pages get a strict policy", .enabled(if: ServerFixture.haveCurl)
    )
    func masking() throws {
        let fixture = try ServerFixture()
        let token = "d6c69c92bde0762d7472b4955224f00350039fe72ddf3a028045c635a4c724f6"
        let id = "0e90b559-d2ee-44e0-8ebf-2bf9e2b2a50d"
        let masked = try fixture.request("GET", "/events/\(id)")
        #expect(masked.status == 200 && !masked.text.contains(token) && masked.text.contains("d6c6…24f6"))
        let shown = try fixture.request("GET", "/events/\(id)?show_tokens=1")
        #expect(shown.text.contains(token))
        let policy = try #require(
            masked.headers.split(separator: "\r\n").first { $0.hasPrefix("Content-Security-Policy:") })
        #expect(policy.contains("default-src 'none'") && !policy.contains("unsafe-inline"))
        #expect(masked.headers.contains("Cache-Control: no-store"))
        let css = try fixture.request("GET", "/assets/site.css")
        #expect(css.status == 200 && css.headers.contains("Content-Type: text/css"))
    }

    @Test("signing in returns to the page asked for, never to another site", .enabled(if: ServerFixture.haveCurl))
    func signIn() throws {
        let fixture = try ServerFixture()
        let secret = try AccessTokens.add(
            name: "support", role: .read, storePath: fixture.storePath, now: ServerFixture.now)
        let page = try fixture.request("GET", "/users/u_alice?at=%4050")
        #expect(page.status == 401 && page.text.contains("name=\"next\" value=\"/users/u_alice?at=%4050\""))
        let form = ["Content-Type: application/x-www-form-urlencoded"]
        let refused = try fixture.request(
            "POST", "/login", headers: form, body: Array("token=pt_wrong&next=%2Fusers%2Fu_alice".utf8))
        #expect(refused.status == 401 && refused.text.contains("name=\"next\" value=\"/users/u_alice\""))
        for (next, location) in [("%2Fusers%2Fu_alice", "/users/u_alice"), ("%2F%2Fevil.example%2F", "/")] {
            let login = try fixture.request(
                "POST", "/login", headers: form, body: Array("token=\(secret)&next=\(next)".utf8))
            #expect(login.status == 303 && login.headers.contains("Location: \(location)\r\n"), "\(next)")
        }
    }
}
