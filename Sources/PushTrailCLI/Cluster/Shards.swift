import PushTrailModel
import PushTrailStore
import PushTrailWeb

/// One HTTP exchange with a shard's `pushtrail serve`.
public struct RemoteRequest: Sendable {
    public var url: String
    public var method: String
    /// Sent as given; `Authorization` carries the shard's read token.
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Seconds for the whole exchange, and for the connection alone.
    public var timeout: Double
    public var connectTimeout: Double
    /// A CA bundle that signs the shard's certificate (a self-signed deployment).
    public var caFile: String?
    /// The longest answer taken: a longer one is a failure, not a memory blow-up.
    public var maxBodyBytes: Int
}

/// A shard server's answer: any status, with its body.
public struct RemoteReply: Sendable {
    public var status: Int
    public var body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// Why an exchange got no answer, in one line that holds no header value.
public struct RemoteFailure: Error, Sendable {
    public var reason: String

    public init(reason: String) { self.reason = reason }
}

/// What performs the exchanges with remote shards: an HTTP client library, which the
/// static `pushtrail` does not link (see `pushtrail-cluster`).
public protocol RemoteTransport: Sendable {
    /// Performs `requests` concurrently; the results are in the same order.
    func perform(_ requests: [RemoteRequest]) -> [Result<RemoteReply, RemoteFailure>]
}

/// A shard that could not answer: its name and why.
struct ShardFailure: Error, Sendable {
    var shard: String
    var reason: String
}

extension ReadQuestion {
    /// The request that asks a shard's server this question: the route, its parameters
    /// (times exact to the microsecond) and, for a question with findings, the cluster's
    /// book as the body of a POST.
    func request(base: String, book: UnregistrationBook?, showTokens: Bool) -> (
        method: String, url: String, body: [UInt8]?
    ) {
        var segments: [String]
        var query: [(String, String?)] = []
        switch self {
        case .head: segments = ["v1", "head"]
        case .verify: segments = ["v1", "verify"]
        case .stats: segments = ["v1", "stats"]
        case .unregistered(let keys):
            segments = ["v1", "unregistered"]
            query.append(("keys", keys.map { $0.map { SHA256.hex($0) }.joined(separator: ",") }))
        case .devices(let scope):
            segments = ["v1", "devices"]
            switch scope {
            case .timeline(let subject, let horizon):
                query = ReadQuestion.parameters(subject)
                query.append(("at", horizon.map(ReadQuestion.parameter)))
            case .log(let q):
                query = [("scope", "log")] + ReadQuestion.parameters(q)
            }
        case .keys(let kind): segments = ["v1", "keys", kind.rawValue]
        case .task(let id, let horizon):
            segments = ["v1", "tasks", String(id)]
            query.append(("at", horizon.map(ReadQuestion.parameter)))
        case .log(let q, let limit, let reverse):
            segments = ["v1", "events"]
            query = ReadQuestion.parameters(q)
            query.append(("limit", limit.map(String.init)))
            query.append(("order", reverse ? "desc" : nil))
        case .audit(let q, let codes):
            segments = ["v1", "audit"]
            query = ReadQuestion.parameters(q)
            query.append(("code", codes.isEmpty ? nil : codes.map(\.rawValue).joined(separator: ",")))
        case .show(let id): segments = ["v1", "events", id]
        case .timeline(let subject, let horizon, let stateChanges):
            segments = ["v1", "timeline"]
            query = ReadQuestion.parameters(subject)
            query.append(("at", horizon.map(ReadQuestion.parameter)))
            query.append(("state_changes", stateChanges ? "1" : nil))
        }
        if showTokens { query.append(("show_tokens", "1")) }
        let url = base + HTML.url(segments, query)
        guard takesBook, let book else { return ("GET", url, nil) }
        return ("POST", url, Presentation.unregistrations(book).serializedBytes())
    }

    /// A horizon as a route's time parameter. Only times cross shards: a seq names an
    /// event of one store (the commands refuse `@SEQ` over a cluster).
    static func parameter(_ horizon: Horizon) -> String {
        switch horizon {
        case .time(let t), .pinned(let t, _): t.formatted(fractionDigits: 6)
        case .sequence(let n): "@\(n)"
        }
    }

    /// A timeline's subject as `/v1/timeline`'s parameters.
    static func parameters(_ subject: TimelineSubject) -> [(String, String?)] {
        switch subject {
        case .thread(let id): [("thread", id)]
        case .task(let id): [("task", String(id))]
        case .taskWithDeliveries(let id): [("task", String(id)), ("deliveries", "1")]
        case .user(let user, let since): [("user", user), ("since", since.map { $0.formatted(fractionDigits: 6) })]
        case .event(let id): [("event", id)]
        }
    }

    /// The `log` filters as a route's parameters.
    static func parameters(_ q: LogQuery) -> [(String, String?)] {
        [
            ("user", q.user), ("task", q.taskID.map(String.init)), ("thread", q.threadID),
            ("type", q.type?.description), ("category", q.category), ("notification_type", q.notificationType),
            ("residence", q.residence), ("since", q.since.map(parameter)), ("until", q.until.map(parameter)),
            ("grep", q.grep),
        ]
    }
}
