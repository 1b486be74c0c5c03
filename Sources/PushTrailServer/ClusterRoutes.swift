import PushTrailModel
import PushTrailStore

/// The routes a cluster asks of a shard (docs/SERVE.md, "Serving a cluster"): the
/// questions with findings also take a POST whose JSON body is the cluster's book of
/// dead devices, so the shard's `sent_after_unregistered` is the one a single store of
/// every shard's events would give.
extension Routes {
    /// The largest book of dead devices taken: about 115,000 devices.
    static let maxBookBytes = 16 << 20

    /// A read route that takes GET, or POST with the cluster's book; `answer` builds the
    /// response from the request and the book (nil for a GET).
    func bookRoute(
        _ template: String, _ answer: @escaping (HTTPRequest, UnregistrationBook?) throws -> HTTPResponse
    ) -> Route {
        Route(template: template, need: .read, methods: ["GET", "HEAD", "POST"], postNeed: .read) {
            [self] request, _ in
            guard request.method == "POST" else { return .respond(try answer(request, nil)) }
            guard Routes.mediaType(request) == "application/json" else {
                throw Failure(415, "send the cluster's book of dead devices as Content-Type: application/json")
            }
            // A book is parsed whole, at about 16 bytes of memory per byte: its own
            // limit, whatever --max-body allows an append.
            let limit = min(maxBody, Routes.maxBookBytes)
            if let declared = request.header("content-length").flatMap(Int.init), declared > limit {
                throw Failure(
                    413, "the book of dead devices is \(declared) bytes, over this server's limit of \(limit)")
            }
            return .receive(
                BookUpload(template: template, limit: limit) { book in try answer(request, book) }, route: template)
        }
    }

    /// The answer to a cluster's `question`: 200 with its JSON (or NDJSON), 404 with the
    /// shard's reason when it holds nothing of the kind.
    func answer(_ question: ReadQuestion, _ request: HTTPRequest, book: UnregistrationBook?, route: String) throws
        -> HTTPResponse
    {
        switch try question.answer(from: store, book: book, showTokens: Routes.showsTokens(request)) {
        case .found(var bytes):
            if case .timeline = question {
                return HTTPResponse(status: 200, contentType: "application/x-ndjson", body: bytes, route: route)
            }
            bytes.append(0x0A)
            return HTTPResponse(status: 200, contentType: "application/json", body: bytes, route: route)
        case .missing(let reason):
            throw Failure(404, reason)
        }
    }

    /// `/v1/timeline`'s subject: `thread`, `task` (with `deliveries=1`, its
    /// notifications' deliveries too), `user` (with `since`) or `event`.
    func timelineSubject(_ request: HTTPRequest) throws -> TimelineSubject {
        let q = request.query
        switch (q["thread"], q["task"], q["user"], q["event"]) {
        case (let thread?, nil, nil, nil): return .thread(thread)
        case (nil, let task?, nil, nil):
            guard let id = Int64(task) else {
                throw Failure(400, "a task id is an integer, not \(MessageText.shown(task))")
            }
            return q["deliveries"] == "1" ? .taskWithDeliveries(id) : .task(id)
        case (nil, nil, let user?, nil):
            var since: Timestamp?
            if let text = q["since"] {
                guard case .time(let t) = try? TimeExpression.parse(text, now: clock()) else {
                    throw Failure(400, "since takes a time, not \(MessageText.shown(text))")
                }
                since = t
            }
            return .user(user, since: since)
        case (nil, nil, nil, let event?): return .event(event)
        default: throw Failure(400, "name one subject: thread, task, user or event")
        }
    }
}

/// A cluster's book of dead devices, read whole, then the read it goes with.
final class BookUpload: HTTPUpload {
    let template: String
    let limit: Int
    let answer: (UnregistrationBook) throws -> HTTPResponse
    var body: [UInt8] = []

    init(template: String, limit: Int, answer: @escaping (UnregistrationBook) throws -> HTTPResponse) {
        self.template = template
        self.limit = limit
        self.answer = answer
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse? {
        body.append(contentsOf: bytes)
        return body.count > limit
            ? Routes.error(
                413, "the book of dead devices is over this server's limit of \(limit) bytes", route: template)
            : nil
    }

    func finish() -> HTTPResponse {
        guard let book = UnregistrationBook(json: body) else {
            return Routes.error(
                400, "the body is not a book of dead devices ({\"unregistered\": [{\"device_key\", …}]})",
                route: template)
        }
        do {
            return try answer(book)
        } catch let failure as Routes.Failure {
            return Routes.error(failure.status, failure.message, route: template)
        } catch {
            return Routes.error(503, "the store cannot be read: \(error)", route: template)
        }
    }
}
