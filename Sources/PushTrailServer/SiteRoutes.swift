import PushTrailModel
import PushTrailStore
import PushTrailWeb

/// The support site's routes (`Site` draws the pages): each needs the `read` role, and
/// a browser without a session is shown the sign-in form, which then returns to the
/// page it asked for.
extension Routes {
    /// The route for a site path, or nil when `parts` is not one.
    func siteRoute(_ parts: [String]) -> Route? {
        guard parts.count >= 2, parts[0].isEmpty else { return nil }
        // An id may hold `/` (the path arrives decoded): the rest of the path is the id.
        let rest = parts.count >= 3 ? parts[2...].joined(separator: "/") : ""
        switch (parts[1], parts.count) {
        case ("", 2): return page("/") { reader, c in try Site.home(reader, c) }
        case ("search", 2): return page("/search") { reader, c in try Site.search(reader, c) }
        case ("audit", 2): return page("/audit") { reader, c in try Site.audit(reader, c) }
        case ("live", 2): return page("/live") { reader, c in try Site.live(reader, c) }
        case ("users", 3...) where !rest.isEmpty: return page("/users/{id}") { try Site.user(rest, $0, $1) }
        case ("threads", 3...) where !rest.isEmpty: return page("/threads/{id}") { try Site.thread(rest, $0, $1) }
        case ("tasks", 3...) where !rest.isEmpty: return page("/tasks/{id}") { try Site.task(rest, $0, $1) }
        case ("events", 3...) where !rest.isEmpty: return page("/events/{id}") { try Site.event(rest, $0, $1) }
        case ("assets", 3) where parts[2] == "site.css":
            return asset("/assets/site.css", "text/css; charset=utf-8", Site.stylesheet)
        case ("assets", 3) where parts[2] == "live.js":
            return asset("/assets/live.js", "text/javascript; charset=utf-8", Site.script)
        default: return nil
        }
    }

    /// A page drawn from one read transaction.
    private func page(_ template: String, _ draw: @escaping (StoreReader, SiteContext) throws -> SitePage) -> Route {
        Route(template: template, need: .read, html: true) { [self] request, role in
            let context = SiteContext(
                query: request.query, now: clock(), role: role.rawValue, isAdmin: role == .admin,
                version: PushTrailVersion.current)
            let page: SitePage
            do {
                page = try store.read { try draw($0, context) }
            } catch let failure as SiteFailure {
                page = Site.failure(failure, context)
            }
            if let location = page.location {
                return .respond(
                    HTTPResponse(
                        status: 303, contentType: "text/plain; charset=utf-8", body: Array("see \(location)\n".utf8),
                        route: template, headers: [("Location", location)]))
            }
            return .respond(
                HTTPResponse(
                    status: page.status, contentType: "text/html; charset=utf-8", body: Array(page.html.utf8),
                    route: template, headers: Pages.headers))
        }
    }

    /// A file of the site, the same for everyone: no session needed, cached for an hour.
    private func asset(_ template: String, _ type: String, _ text: String) -> Route {
        let body = Array(text.utf8)
        return Route(template: template, need: .nothing) { _, _ in
            .respond(
                HTTPResponse(
                    status: 200, contentType: type, body: body, route: template,
                    headers: [("Cache-Control", "public, max-age=3600"), ("X-Content-Type-Options", "nosniff")]))
        }
    }
}
