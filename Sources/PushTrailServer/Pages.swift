import PushTrailStore

/// The few HTML pages the server itself draws: signing in and out, and the index of
/// what it serves. No script, no asset from elsewhere, and a policy that allows none.
enum Pages {
    /// Every HTML answer's headers: nothing may load from elsewhere, run, or frame the page.
    static let headers: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'; form-action 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
    ]

    static func page(_ status: UInt32, title: String, body: String, route: String, extra: [(String, String)] = [])
        -> HTTPResponse
    {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · pushtrail</title>
            <style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
            label,input,button{font:inherit}input{width:100%;padding:.4rem;box-sizing:border-box}
            button{margin-top:.8rem;padding:.4rem 1rem}code{font-size:.9em}</style>
            </head><body>
            \(body)
            </body></html>

            """
        return HTTPResponse(
            status: status, contentType: "text/html; charset=utf-8", body: Array(html.utf8), route: route,
            headers: headers + extra)
    }

    static let refused = "<p role=\"alert\"><strong>That token is not valid here.</strong> Check it and try again.</p>"

    static func login(failed: Bool) -> HTTPResponse {
        page(
            failed ? 401 : 200, title: "Sign in",
            body: """
                <main><h1>Sign in to pushtrail</h1>
                \(failed ? Pages.refused : "")
                <form method="post" action="/login">
                <label for="token">Access token</label>
                <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
                <button type="submit">Sign in</button>
                </form>
                <p>Ask an administrator for a token (<code>pushtrail token add NAME --role read</code>).</p></main>
                """, route: "/login")
    }

    static func signedOut(secure: Bool) -> HTTPResponse {
        let cookie = "\(Access.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (secure ? "; Secure" : "")
        return page(
            200, title: "Signed out",
            body: "<main><h1>Signed out</h1><p><a href=\"/login\">Sign in again</a></p></main>",
            route: "/logout", extra: [("Set-Cookie", cookie)])
    }

    static func index(role: Role) -> HTTPResponse {
        let routes = [
            ("/v1/head", "the chain head"), ("/v1/stats", "what the store holds"),
            ("/v1/events?limit=20&order=desc", "the latest events (NDJSON)"), ("/v1/audit", "the audit's findings"),
            ("/metrics", "Prometheus metrics"),
        ]
        let items = routes.map { "<li><a href=\"\($0.0)\"><code>\($0.0)</code></a>: \($0.1)</li>" }.joined()
        return page(
            200, title: "pushtrail",
            body: """
                <main><h1>pushtrail</h1><p>Signed in with the <strong>\(role)</strong> role. The JSON API:</p>
                <ul>\(items)</ul>
                <form method="post" action="/logout"><button type="submit">Sign out</button></form></main>
                """, route: "/")
    }
}
