import PushTrailModel
import PushTrailStore

/// The read API: each route answers with the object the CLI's `--json` prints for the
/// same question (`Presentation`), so the two cannot drift apart.
public struct Routes: Sendable {
    let store: Store
    let clock: @Sendable () -> Timestamp

    public init(store: Store, clock: @escaping @Sendable () -> Timestamp) {
        self.store = store
        self.clock = clock
    }

    /// A route that could not answer: its status and one-line reason.
    struct Failure: Error {
        var status: UInt32
        var message: String
    }

    public func answer(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let (route, handler) = resolve(parts)
        guard request.method == "GET" || request.method == "HEAD" else {
            return Routes.error(405, "\(request.method) is not allowed here; this server answers GET", route: route)
        }
        do {
            return HTTPResponse(
                status: 200, contentType: handler.contentType,
                body: try handler.body(request), route: route)
        } catch let failure as Failure {
            return Routes.error(failure.status, failure.message, route: route)
        } catch {
            // The store could not be read: a condition of the host, not of the request.
            return Routes.error(503, "the store cannot be read: \(error)", route: route)
        }
    }

    struct Handler {
        var contentType = "application/json"
        var body: (HTTPRequest) throws -> [UInt8]
    }

    /// The route template for `parts` (the path split at `/`) and its handler.
    func resolve(_ parts: [String]) -> (String, Handler) {
        switch parts.count {
        case 2 where parts[1] == "healthz":
            return ("/healthz", Handler(contentType: "text/plain; charset=utf-8") { _ in Array("ok\n".utf8) })
        case 3 where parts[1] == "v1" && parts[2] == "head":
            return ("/v1/head", Handler { _ in try json(store.read { Presentation.head(try $0.head()) }) })
        case 3 where parts[1] == "v1" && parts[2] == "audit":
            return ("/v1/audit", Handler { try audit($0) })
        case 3 where parts[1] == "v1" && parts[2] == "stats":
            return (
                "/v1/stats",
                Handler { _ in
                    try json(
                        Presentation.stats(try store.read { try $0.statistics() }, storeBytes: Int64(store.fileBytes)))
                }
            )
        case 4 where parts[1] == "v1" && parts[2] == "tasks" && !parts[3].isEmpty:
            return ("/v1/tasks/{id}", Handler { try task(parts[3], $0) })
        case 4 where parts[1] == "v1" && parts[2] == "threads" && !parts[3].isEmpty:
            return ("/v1/threads/{id}", Handler { try thread(parts[3], $0) })
        case 4 where parts[1] == "v1" && parts[2] == "events" && !parts[3].isEmpty:
            return ("/v1/events/{id}", Handler { _ in try event(parts[3]) })
        default:
            return ("(unknown)", Handler { _ in throw Failure(status: 404, message: "no such route") })
        }
    }

    func task(_ id: String, _ request: HTTPRequest) throws -> [UInt8] {
        guard let taskID = Int64(id) else {
            throw Failure(status: 400, message: "a task id is an integer, not \(MessageText.shown(id))")
        }
        let horizon = try at(request)
        return try report(horizon, missing: "no events for task \(taskID)") { reader in
            try reader.taskReport(taskID, horizon: horizon).map {
                Presentation.task(
                    $0, asOf: Presentation.asOf(horizon, head: try reader.head().seq), tokens: Routes.mask)
            }
        }
    }

    func thread(_ id: String, _ request: HTTPRequest) throws -> [UInt8] {
        let horizon = try at(request)
        return try report(horizon, missing: "no thread \(MessageText.shown(id))") { reader in
            try reader.threadReport(id, horizon: horizon).map {
                Presentation.thread(
                    $0, asOf: Presentation.asOf(horizon, head: try reader.head().seq), tokens: Routes.mask)
            }
        }
    }

    /// `audit --json` for the `log` filters (named as the command line's options, with
    /// `_` for `-`) and `code` (comma-separated): 200 whether or not there are findings.
    func audit(_ request: HTTPRequest) throws -> [UInt8] {
        let query = try filters(request)
        var codes = Set<FindingCode>()
        for c in (request.query["code"] ?? "").split(separator: ",") {
            guard let code = FindingCode(rawValue: String(c)) else {
                let known = FindingCode.allCases.map(\.rawValue).joined(separator: ", ")
                throw Failure(
                    status: 400, message: "unknown --code \(MessageText.shown(String(c))); codes are \(known)")
            }
            codes.insert(code)
        }
        let findings = try store.read { try $0.audit(query, codes: codes) }
        return json(Presentation.audit(findings, tokens: Routes.mask))
    }

    /// The `log` filters of a request.
    func filters(_ request: HTTPRequest) throws -> LogQuery {
        do throws(LogQuery.Invalid) {
            return try LogQuery.parse({ request.query[String($0.map { $0 == "-" ? "_" : $0 })] }, now: clock())
        } catch {
            throw Failure(status: 400, message: error.description)
        }
    }

    /// `show --json`: an event by id (a notification's in any case) or `@SEQ`.
    func event(_ target: String) throws -> [UInt8] {
        let found: StoredEvent? = try store.read { reader in
            if target.hasPrefix("@"), let seq = UInt64(target.dropFirst()) { return try reader.event(seq: seq) }
            return try reader.seq(forID: target).flatMap { try reader.event(seq: $0) }
        }
        guard let found else { throw Failure(status: 404, message: "no event \(MessageText.shown(target))") }
        return json(Presentation.show(found))
    }

    /// A report's JSON, or 404 saying what is missing (as the CLI says it).
    func report(
        _ horizon: Horizon?, missing: String, _ build: (StoreReader) throws -> JSONValue?
    ) throws -> [UInt8] {
        guard let value = try store.read(build) else {
            throw Failure(status: 404, message: missing + (horizon == nil ? "" : " at or before at"))
        }
        return json(value)
    }

    /// `at`, in every form the CLI's `--at` takes.
    func at(_ request: HTTPRequest) throws -> Horizon? {
        guard let text = request.query["at"] else { return nil }
        do {
            return try TimeExpression.parse(text, now: clock())
        } catch {
            throw Failure(status: 400, message: "at: \(error)")
        }
    }

    /// Device tokens in messages are masked (only an admin will see them whole).
    static func mask(_ token: String) -> String { TokenMask.mask(token) }

    /// The JSON text and a line break, as the CLI prints it.
    func json(_ value: JSONValue) -> [UInt8] { Array((value.serialized() + "\n").utf8) }

    static func error(_ status: UInt32, _ message: String, route: String) -> HTTPResponse {
        let body = JSONValue.object([("error", .string(message))]).serialized() + "\n"
        return HTTPResponse(status: status, contentType: "application/json", body: Array(body.utf8), route: route)
    }
}
