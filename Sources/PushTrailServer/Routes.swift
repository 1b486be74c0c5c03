import PushTrailModel
import PushTrailStore
import PushTrailWeb

/// The server's routes: who may call each, and what it answers. Every JSON answer is
/// the object the CLI's `--json` prints for the same question (`Presentation`), so the
/// two cannot drift apart.
public final class Routes: @unchecked Sendable {
    let store: Store
    let clock: @Sendable () -> Timestamp
    let access: Access
    let metrics = Metrics()
    let feed: EventFeed
    /// Appends finishing together commit together.
    let group: GroupCommit
    /// Appends that may receive and decode their bodies at once (`concurrentAppends`).
    let appendSlots = Slots(Routes.concurrentAppends)
    /// Each body being decoded holds its events in memory until its commit, so the
    /// server's memory grows with the bodies in flight: a third waits for a slot, its
    /// client held back by TCP, instead. Two keep one body decoding while another
    /// commits, which is as fast as four (docs/PERFORMANCE.md).
    static let concurrentAppends = 2
    /// Decoded events the server keeps for later questions (`StoreOptions.keptEvents`):
    /// about 30 MB of them, the events of a few thousand threads.
    static let keptEvents = 16_384
    /// The largest request body accepted, in bytes.
    let maxBody: Int

    public init(store: Store, clock: @escaping @Sendable () -> Timestamp, maxBody: Int = 64 << 20) {
        self.store = store
        self.clock = clock
        self.maxBody = maxBody
        access = Access(storePath: store.path)
        feed = EventFeed(store: store)
        group = GroupCommit(store: store)
    }

    /// Whether the store defines any access token.
    public var hasTokens: Bool { access.hasTokens }

    /// Counts a finished request for `/metrics`.
    public func record(_ request: CompletedRequest) { metrics.record(request) }

    /// Ends every event stream, so that a stopping server need not wait for them.
    public func endStreams() { feed.stop() }

    /// A route that could not answer: its status and one-line reason.
    struct Failure: Error {
        var status: UInt32
        var message: String
        init(_ status: UInt32, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    /// What a route needs of its caller.
    enum Need { case nothing, read, append }

    /// A route: its template, who may call it, the methods it takes and what it does.
    struct Route {
        var template: String
        var need: Need
        var methods: [String] = ["GET", "HEAD"]
        /// What a POST needs, when the route also takes one.
        var postNeed: Need? = nil
        /// A page of the site: refusals are pages too, and one without a session is
        /// the sign-in form.
        var html = false
        var run: (HTTPRequest, Role) throws -> HTTPExchange
    }

    public func answer(_ request: HTTPRequest) -> HTTPExchange {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let route = resolve(parts)
        let need = request.method == "POST" ? route.postNeed ?? route.need : route.need
        var role = Role.admin
        if need != .nothing {
            switch access.verdict(for: request, now: clock()) {
            case .allowed(let r): role = r
            case .unauthenticated where route.html:
                return .respond(
                    Pages.login(
                        failed: false, next: Routes.pathAndQuery(request), status: 401,
                        extra: [("WWW-Authenticate", "Bearer realm=\"pushtrail\"")]))
            case .unauthenticated:
                return .respond(
                    Routes.error(
                        401, "this needs an access token: send Authorization: Bearer TOKEN (pushtrail token add)",
                        route: route.template, headers: [("WWW-Authenticate", "Bearer realm=\"pushtrail\"")]))
            case .remoteWithoutTokens:
                return .respond(
                    Routes.error(
                        403, "this server has no access tokens and answers only clients on its own host",
                        route: route.template))
            case .unreadable(let why):
                return .respond(Routes.error(503, "access tokens cannot be read: \(why)", route: route.template))
            }
        }
        if need == .read && !role.mayRead || need == .append && !role.mayAppend {
            if route.html {
                return .respond(
                    Pages.page(
                        403, title: "Not allowed",
                        body: "<main><h1>Not allowed</h1><p role=\"alert\">A token with the \(role) role may not read "
                            + "the store.</p><form method=\"post\" action=\"/logout\"><button type=\"submit\">Sign "
                            + "out</button></form></main>",
                        route: route.template))
            }
            return .respond(
                Routes.error(
                    403, "a token with the \(role) role may not \(need == .read ? "read" : "append")",
                    route: route.template))
        }
        guard route.methods.contains(request.method) else {
            return .respond(
                Routes.error(
                    405, "\(MessageText.shown(request.method)) is not allowed here; use \(route.methods[0])",
                    route: route.template, headers: [("Allow", route.methods.joined(separator: ", "))]))
        }
        if Routes.showsTokens(request) && role != .admin {
            return .respond(Routes.error(403, "only an admin token may see device tokens", route: route.template))
        }
        do {
            return try route.run(request, role)
        } catch let failure as Failure {
            return .respond(Routes.error(failure.status, failure.message, route: route.template))
        } catch {
            // The store could not be read: a condition of the host, not of the request.
            return .respond(Routes.error(503, "the store cannot be read: \(error)", route: route.template))
        }
    }

    /// The route for `parts` (the path split at `/`).
    func resolve(_ parts: [String]) -> Route {
        if let page = siteRoute(parts) { return page }
        func json(_ template: String, _ body: @escaping (HTTPRequest) throws -> JSONValue) -> Route {
            Route(template: template, need: .read) { request, _ in
                .respond(Routes.json(try body(request), route: template))
            }
        }
        let v1 = parts.count >= 3 && parts[0].isEmpty && parts[1] == "v1"
        switch parts.count {
        case 2 where parts[1] == "healthz":
            return Route(template: "/healthz", need: .nothing) { _, _ in
                .respond(
                    HTTPResponse(
                        status: 200, contentType: "text/plain; charset=utf-8", body: Array("ok\n".utf8),
                        route: "/healthz"))
            }
        case 2 where parts[1] == "metrics":
            return Route(template: "/metrics", need: .read) { [self] _, _ in
                let events = try store.read { try $0.head().seq }
                let text = metrics.text(storeBytes: store.fileBytes, storeEvents: events)
                return .respond(
                    HTTPResponse(
                        status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8),
                        route: "/metrics"))
            }
        case 2 where parts[1] == "login":
            return Route(template: "/login", need: .nothing, methods: ["GET", "HEAD", "POST"]) { [self] request, _ in
                request.method == "POST"
                    ? .receive(LoginUpload(routes: self, request: request), route: "/login")
                    : .respond(Pages.login(failed: false))
            }
        case 2 where parts[1] == "logout":
            return Route(template: "/logout", need: .nothing, methods: ["POST"]) { [self] request, _ in
                access.closeSession(of: request)
                return .respond(Pages.signedOut(secure: request.isTLS))
            }
        case 3 where v1 && parts[2] == "head":
            return json("/v1/head") { [self] _ in try store.read { Presentation.head(try $0.head()) } }
        case 3 where v1 && parts[2] == "stats":
            return json("/v1/stats") { [self] _ in
                Presentation.stats(try store.read { try $0.statistics() }, storeBytes: Int64(store.fileBytes))
            }
        case 3 where v1 && parts[2] == "audit":
            return bookRoute("/v1/audit") { [self] request, book in
                Routes.json(try audit(request, book: book), route: "/v1/audit")
            }
        case 3 where v1 && parts[2] == "timeline":
            return bookRoute("/v1/timeline") { [self] request, book in
                let question = ReadQuestion.timeline(
                    try timelineSubject(request), try at(request), stateChanges: request.query["state_changes"] == "1")
                return try answer(question, request, book: book, route: "/v1/timeline")
            }
        case 3 where v1 && parts[2] == "unregistered":
            return Route(template: "/v1/unregistered", need: .read) { [self] request, _ in
                var keys: [[UInt8]]?
                if let text = request.query["keys"] {
                    keys = try text.split(separator: ",").map {
                        guard let key = SHA256.bytes(hex: String($0)), key.count == 16 else {
                            throw Failure(400, "keys are device keys: 32 hex digits each, comma-separated")
                        }
                        return key
                    }
                }
                return .respond(try answer(.unregistered(keys: keys), request, book: nil, route: "/v1/unregistered"))
            }
        case 3 where v1 && parts[2] == "devices":
            return Route(template: "/v1/devices", need: .read) { [self] request, _ in
                let scope: ReadQuestion.DeviceScope =
                    request.query["scope"] == "log"
                    ? .log(try filters(request)) : .timeline(try timelineSubject(request), try at(request))
                return .respond(try answer(.devices(scope), request, book: nil, route: "/v1/devices"))
            }
        case 3 where v1 && parts[2] == "verify":
            return Route(template: "/v1/verify", need: .read) { [self] request, _ in
                .respond(try answer(.verify, request, book: nil, route: "/v1/verify"))
            }
        case 4 where v1 && parts[2] == "keys":
            return Route(template: "/v1/keys/{kind}", need: .read) { [self] request, _ in
                guard let kind = ReadQuestion.KeyKind(rawValue: parts[3]) else {
                    throw Failure(404, "keys are users, threads or tasks, not \(MessageText.shown(parts[3]))")
                }
                return .respond(try answer(.keys(kind), request, book: nil, route: "/v1/keys/{kind}"))
            }
        case 3 where v1 && parts[2] == "events":
            return Route(template: "/v1/events", need: .read, methods: ["GET", "HEAD", "POST"], postNeed: .append) {
                [self] request, _ in
                request.method == "POST" ? try append(request) : .respond(try listing(request))
            }
        case 3 where v1 && parts[2] == "stream":
            return Route(template: "/v1/stream", need: .read) { [self] request, _ in .respond(try stream(request)) }
        case 4 where v1 && parts[2] == "tasks" && !parts[3].isEmpty:
            return bookRoute("/v1/tasks/{id}") { [self] request, book in
                Routes.json(try task(parts[3], request, book: book), route: "/v1/tasks/{id}")
            }
        case 4 where v1 && parts[2] == "threads" && !parts[3].isEmpty:
            return json("/v1/threads/{id}") { [self] in try thread(parts[3], $0) }
        case 4 where v1 && parts[2] == "events" && !parts[3].isEmpty:
            return json("/v1/events/{id}") { [self] _ in try event(parts[3]) }
        case 5 where v1 && parts[2] == "events" && !parts[3].isEmpty && parts[4] == "export":
            return Route(template: "/v1/events/{id}/export", need: .read) { [self] request, role in
                .respond(try export(parts[3], request, role: role))
            }
        default:
            return Route(template: "(unknown)", need: .read, methods: ["GET", "HEAD", "POST"]) { _, _ in
                throw Failure(404, "no such route")
            }
        }
    }

    // MARK: - Reading

    func task(_ id: String, _ request: HTTPRequest, book: UnregistrationBook? = nil) throws -> JSONValue {
        guard let taskID = Int64(id) else {
            throw Failure(400, "a task id is an integer, not \(MessageText.shown(id))")
        }
        let horizon = try at(request)
        let tokens = mask(request)
        return try report(horizon, missing: "no events for task \(taskID)", book: book) { reader in
            try reader.taskReport(taskID, horizon: horizon).map {
                Presentation.task($0, asOf: Presentation.asOf(horizon, head: try reader.head().seq), tokens: tokens)
            }
        }
    }

    func thread(_ id: String, _ request: HTTPRequest) throws -> JSONValue {
        let horizon = try at(request)
        let tokens = mask(request)
        return try report(horizon, missing: "no thread \(MessageText.shown(id))") { reader in
            try reader.threadReport(id, horizon: horizon).map {
                Presentation.thread($0, asOf: Presentation.asOf(horizon, head: try reader.head().seq), tokens: tokens)
            }
        }
    }

    /// `audit --json` for the `log` filters (named as the command line's options, with
    /// `_` for `-`) and `code` (comma-separated): 200 whether or not there are findings.
    func audit(_ request: HTTPRequest, book: UnregistrationBook? = nil) throws -> JSONValue {
        let query = try filters(request)
        var codes = Set<FindingCode>()
        for c in (request.query["code"] ?? "").split(separator: ",") {
            guard let code = FindingCode(rawValue: String(c)) else {
                let known = FindingCode.allCases.map(\.rawValue).joined(separator: ", ")
                throw Failure(400, "unknown --code \(MessageText.shown(String(c))); codes are \(known)")
            }
            codes.insert(code)
        }
        let findings = try store.read { plain in
            var reader = plain
            reader.unregistrations = book
            return try reader.audit(query, codes: codes)
        }
        return Presentation.audit(findings, tokens: mask(request))
    }

    /// The `log` filters of a request.
    func filters(_ request: HTTPRequest) throws -> LogQuery {
        do throws(LogQuery.Invalid) {
            return try LogQuery.parse({ request.query[String($0.map { $0 == "-" ? "_" : $0 })] }, now: clock())
        } catch {
            throw Failure(400, error.description)
        }
    }

    /// `show --json`: an event by id (a notification's in any case) or `@SEQ`.
    func event(_ target: String) throws -> JSONValue {
        Presentation.show(try stored(target))
    }

    /// The event `target` names (an id, or `@SEQ`), or 404.
    func stored(_ target: String) throws -> StoredEvent {
        let found: StoredEvent? = try store.read { reader in
            if target.hasPrefix("@"), let seq = UInt64(target.dropFirst()) { return try reader.event(seq: seq) }
            return try reader.seq(forID: target).flatMap { try reader.event(seq: $0) }
        }
        guard let found else { throw Failure(404, "no event \(MessageText.shown(target))") }
        return found
    }

    /// A report's JSON, or 404 saying what is missing (as the CLI says it).
    func report(
        _ horizon: Horizon?, missing: String, book: UnregistrationBook? = nil,
        _ build: (StoreReader) throws -> JSONValue?
    ) throws -> JSONValue {
        let value = try store.read { plain in
            var reader = plain
            reader.unregistrations = book
            return try build(reader)
        }
        guard let value else {
            throw Failure(404, missing + (horizon == nil ? "" : " at or before at"))
        }
        return value
    }

    /// `at`, in every form the CLI's `--at` takes.
    func at(_ request: HTTPRequest) throws -> Horizon? {
        guard let text = request.query["at"] else { return nil }
        do {
            return try TimeExpression.parse(text, now: clock())
        } catch {
            throw Failure(400, "at: \(error)")
        }
    }

    /// How device tokens are shown: masked, unless an admin asks (`show_tokens=1`).
    func mask(_ request: HTTPRequest) -> @Sendable (String) -> String {
        ReadQuestion.tokens(shown: Routes.showsTokens(request))
    }

    /// The request's path and query, encoded again: where the sign-in form returns to.
    static func pathAndQuery(_ request: HTTPRequest) -> String {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        return HTML.url(segments, request.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// Whether the request asks for device tokens unmasked (`show_tokens=1`).
    static func showsTokens(_ request: HTTPRequest) -> Bool {
        request.query["show_tokens"] == "1" || request.query["show_tokens"] == "true"
    }

    // MARK: - Answers

    /// The JSON text and a line break, as the CLI prints it.
    static func json(_ value: JSONValue, route: String) -> HTTPResponse {
        var body = value.serializedBytes()
        body.append(0x0A)
        return HTTPResponse(status: 200, contentType: "application/json", body: body, route: route)
    }

    static func error(
        _ status: UInt32, _ message: String, route: String, headers: [(String, String)] = []
    ) -> HTTPResponse {
        let body = JSONValue.object([("error", .string(message))]).serialized() + "\n"
        return HTTPResponse(
            status: status, contentType: "application/json", body: Array(body.utf8), route: route, headers: headers)
    }
}
