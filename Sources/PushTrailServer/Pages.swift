import PushTrailStore
import PushTrailWeb

/// The HTML the server draws itself: signing in and out, and the headers of every page
/// (the support site's pages are `PushTrailWeb`'s). Nothing loads from elsewhere.
enum Pages {
    /// Every HTML answer's headers: nothing may load from elsewhere, frame the page or
    /// run inline; only this server's stylesheet and script (`/assets/`) load. Pages
    /// show personal data, so no cache keeps them.
    static let headers: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
    ]

    static func page(_ status: UInt32, title: String, body: String, route: String, extra: [(String, String)] = [])
        -> HTTPResponse
    {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · pushtrail</title>
            <link rel="stylesheet" href="/assets/site.css">
            </head><body class="narrow">
            \(body)
            </body></html>

            """
        return HTTPResponse(
            status: status, contentType: "text/html; charset=utf-8", body: Array(html.utf8), route: route,
            headers: headers + extra)
    }

    static let refused = "<p role=\"alert\"><strong>That token is not valid here.</strong> Check it and try again.</p>"

    /// The sign-in form; `next` is the local page to return to once signed in.
    static func login(failed: Bool, next: String = "/", status: UInt32? = nil, extra: [(String, String)] = [])
        -> HTTPResponse
    {
        page(
            status ?? (failed ? 401 : 200), title: "Sign in",
            body: """
                <main><h1>Sign in to pushtrail</h1>
                \(failed ? Pages.refused : "")
                <form method="post" action="/login" class="signin">
                <input type="hidden" name="next" value="\(HTML.escape(LoginUpload.localPath(next) ?? "/"))">
                <label for="token">Access token</label>
                <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
                <button type="submit">Sign in</button>
                </form>
                <p>Ask an administrator for a token (<code>pushtrail token add NAME --role read</code>).</p></main>
                """, route: "/login", extra: extra)
    }

    static func signedOut(secure: Bool) -> HTTPResponse {
        let cookie = "\(Access.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (secure ? "; Secure" : "")
        return page(
            200, title: "Signed out",
            body: "<main><h1>Signed out</h1><p><a href=\"/login\">Sign in again</a></p></main>",
            route: "/logout", extra: [("Set-Cookie", cookie)])
    }
}
