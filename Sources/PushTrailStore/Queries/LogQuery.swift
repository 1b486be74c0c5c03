import LMDBKit
import PushTrailModel

/// The filters of `log` and `audit`, all combinable.
public struct LogQuery: Sendable {
    public var user: String?
    public var taskID: Int64?
    public var threadID: String?
    public var type: EventType?
    public var category: String?
    public var notificationType: String?
    public var residence: String?
    public var since: Horizon?
    public var until: Horizon?
    public var grep: String?

    public init() {}

    /// A filter that cannot be read: the one-line message both the command line and the
    /// server give for it.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The filter names, as the command line's options spell them.
    public static let filterNames = [
        "user", "task", "thread", "type", "category", "notification-type", "residence", "since", "until", "grep",
    ]

    /// The query that named filters describe (`value` gives a filter's text, by its name
    /// in `filterNames`); relative times count from `now`. A bad task id, type or time
    /// is `Invalid`, worded as the command line's usage error.
    public static func parse(_ value: (String) -> String?, now: Timestamp) throws(Invalid) -> LogQuery {
        var q = LogQuery()
        q.user = value("user")
        if let t = value("task") {
            guard let n = Int64(t) else { throw Invalid(description: "--task takes an integer task id, not \(t)") }
            q.taskID = n
        }
        q.threadID = value("thread")
        if let t = value("type") {
            guard let type = EventType(name: t) else {
                throw Invalid(description: "--type is notification, action or delivery, not \(t)")
            }
            q.type = type
        }
        q.category = value("category")
        q.notificationType = value("notification-type")
        q.residence = value("residence")
        func time(_ name: String) throws(Invalid) -> Horizon? {
            guard let text = value(name) else { return nil }
            do {
                return try TimeExpression.parse(text, now: now)
            } catch {
                throw Invalid(description: "--\(name): \(error)")
            }
        }
        q.since = try time("since")
        q.until = try time("until")
        q.grep = value("grep")
        return q
    }

    /// Whether the query names what an index can answer directly (otherwise it walks
    /// the whole timeline).
    public var hasIndexedFilter: Bool { threadID != nil || taskID != nil || user != nil }
}

extension StoreReader {
    /// `log`'s selection: the events matching `query` in timeline order (newest first
    /// with `reverse`), or with `limit` only the last N of them, passed to `body` until
    /// it returns false.
    public func log(_ query: LogQuery, limit: Int?, reverse: Bool, _ body: (LoadedEvent) throws -> Bool) throws {
        guard let limit else { return try log(query, reverse: reverse, body) }
        // The last N in timeline order: walk back from the newest.
        var found: [LoadedEvent] = []
        if limit > 0 {
            try log(query, reverse: true) {
                found.append($0)
                return found.count < limit
            }
        }
        for loaded in reverse ? found : found.reversed() where try !body(loaded) { return }
    }

    /// Calls `body` with each event matching `query`, in timeline order (or newest
    /// first with `reverse`), until it returns false.
    ///
    /// The most selective index drives the walk (thread, then task, then user); with
    /// none, the time index is walked from `--since`, so no filter scans the whole log
    /// when an index applies.
    public func log(_ query: LogQuery, reverse: Bool = false, _ body: (LoadedEvent) throws -> Bool) throws {
        var matcher = LogMatcher(query: query, reader: self)
        var decoder = EventDecoder()
        if let thread = query.threadID {
            var members = try threadEvents(thread, horizon: nil)
            if reverse { members.reverse() }
            for loaded in members where try matcher.matches(loaded, drivenBy: .thread) {
                if try !body(loaded) { return }
            }
            return
        }
        if let task = query.taskID {
            let loader = EventLoader(reader: self, horizon: nil)
            var seqs = try self.seqs(.tasks, key: Layout.taskKey(task))
            // The deliveries for the task's notifications belong to it too.
            for loaded in try loader.load(seqs) where loaded.event.type == .notification {
                seqs += try self.seqs(.refs, key: loaded.event.identityKey)
            }
            var events = try loader.load(seqs).inTimelineOrder()
            if reverse { events.reverse() }
            for loaded in events where matcher.inRange(loaded.position) {
                if try matcher.matches(loaded, drivenBy: .task), try !body(loaded) { return }
            }
            return
        }
        if let user = query.user {
            // A user may have thousands of events, and support asks for the last few:
            // order them by their headers, then read and decode only as many as the
            // caller takes.
            var records = try timelineRecords(of: seqs(.users, key: Array(user.utf8)))
            if reverse { records.reverse() }
            for (p, record) in records where matcher.inRange(p) {
                let stored = try storedEvent(seq: p.seq, value: record)
                let loaded = LoadedEvent(stored: stored, event: try stored.decode(using: &decoder))
                if try matcher.matches(loaded, drivenBy: .user), try !body(loaded) { return }
            }
            return
        }
        // The whole timeline, from --since (or back from --until).
        try txn.withCursor(store.indexes[.time]) { cursor in
            let key = Layout.timeKey
            var entry: Entry?
            if reverse {
                if case .time(let t)? = query.until {
                    entry = try key.withUnsafeBytes { k in
                        try Layout.position(Timestamp(microseconds: t.microseconds &+ 1), 0).withUnsafeBytes {
                            try cursor.seek(k, value: $0)
                        }
                    }
                    entry =
                        entry == nil
                        ? (try key.withUnsafeBytes { try cursor.find($0) }.flatMap { _ in try cursor.lastDuplicate() })
                        : try cursor.previousDuplicate()
                } else {
                    entry = try key.withUnsafeBytes { try cursor.find($0) } == nil ? nil : try cursor.lastDuplicate()
                }
            } else if case .time(let t)? = query.since {
                entry = try key.withUnsafeBytes { k in
                    try Layout.position(t, 0).withUnsafeBytes { try cursor.seek(k, value: $0) }
                }
            } else {
                entry = try key.withUnsafeBytes { try cursor.find($0) }
            }
            while let (_, value) = entry {
                let p = Layout.decodePosition(value)
                if !reverse, case .time(let t)? = query.until, p.at > t { return }
                if reverse, case .time(let t)? = query.since, p.at < t { return }
                if matcher.inRange(p), let stored = try event(seq: p.seq) {
                    let loaded = LoadedEvent(stored: stored, event: try stored.decode(using: &decoder))
                    if try matcher.matches(loaded, drivenBy: .time), try !body(loaded) { return }
                }
                entry = reverse ? try cursor.previousDuplicate() : try cursor.nextDuplicate()
            }
        }
    }

    /// Calls `body` with each event stored after `seq` (up to `last`), in seq (append)
    /// order: what `log -f` prints as other processes append.
    public func appended(
        after seq: UInt64, through last: UInt64 = .max, matching query: LogQuery,
        _ body: (LoadedEvent) throws -> Void
    ) throws {
        var matcher = LogMatcher(query: query, reader: self)
        var threadMembers: Set<UInt64>?
        if let thread = query.threadID { threadMembers = Set(try threadEvents(thread, horizon: nil).map(\.seq)) }
        var decoder = EventDecoder()
        try forEachEvent(from: seq + 1) { stored in
            if stored.seq > last { return false }
            let loaded = LoadedEvent(stored: stored, event: try stored.decode(using: &decoder))
            if let members = threadMembers, !members.contains(stored.seq) { return true }
            if matcher.inRange(loaded.position),
                try matcher.matches(loaded, drivenBy: query.threadID != nil ? .thread : .time)
            {
                try body(loaded)
            }
            return true
        }
    }
}

/// Checks the filters an index did not already answer.
struct LogMatcher {
    enum Driver { case thread, task, user, time }

    let query: LogQuery
    let reader: StoreReader
    private var notificationTasks: [String: Int64?] = [:]
    private var taskResidences: [Int64: String?] = [:]
    private let grep: TextSearch?

    init(query: LogQuery, reader: StoreReader) {
        self.query = query
        self.reader = reader
        grep = query.grep.map(TextSearch.init)
    }

    func inRange(_ p: Position) -> Bool {
        if let since = query.since {
            switch since {
            case .time(let t): if p.at < t { return false }
            case .sequence(let n): if p.seq <= n { return false }
            case .pinned(let t, let n): if p.at < t || p.seq <= n { return false }
            }
        }
        if let until = query.until, !until.includes(p) { return false }
        return true
    }

    mutating func matches(_ loaded: LoadedEvent, drivenBy driver: Driver) throws -> Bool {
        let e = loaded.event
        if !inRange(loaded.position) { return false }
        if let type = query.type, e.type != type { return false }
        if driver != .user, let user = query.user, e.user != user { return false }
        if driver != .task, let task = query.taskID, try taskOf(e) != task { return false }
        if let c = query.category, e.notification?.category != c { return false }
        if let nt = query.notificationType, e.notification?.notificationType != nt { return false }
        if let r = query.residence {
            if let n = e.notification {
                if n.residenceID?.description != r { return false }
            } else {
                guard let task = try taskOf(e), try residence(of: task) == r else { return false }
            }
        }
        if let grep, !grep.matches(loaded.stored.raw) { return false }
        return true
    }

    /// The task an event is about; a delivery's is its notification's.
    mutating func taskOf(_ e: Event) throws -> Int64? {
        if let t = e.taskID { return t }
        guard let ref = e.referencedNotificationID else { return nil }
        if let cached = notificationTasks[ref] { return cached }
        var task: Int64?
        if let seq = try reader.seq(forID: ref), let stored = try reader.event(seq: seq) {
            task = try stored.decode().taskID
        }
        notificationTasks[ref] = task
        return task
    }

    /// The residence of a task, from its latest notification that names one.
    mutating func residence(of task: Int64) throws -> String? {
        if let cached = taskResidences[task] { return cached }
        var found: String?
        for loaded in try reader.taskEvents(task, horizon: nil).reversed() {
            if let r = loaded.event.notification?.residenceID {
                found = r.description
                break
            }
        }
        taskResidences[task] = found
        return found
    }
}
