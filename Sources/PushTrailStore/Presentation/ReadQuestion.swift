import PushTrailModel

/// A question a cluster asks each shard, answered with what `--json` (or the server's
/// route) gives for it on that shard alone: by a local shard in process, by a remote
/// one through `pushtrail serve`.
public enum ReadQuestion: Sendable {
    case head
    case verify
    case stats
    /// The shard's book of dead devices (`UnregistrationBook`): every device's, or only
    /// those of `keys` (device keys, `Layout.deviceKey`).
    case unregistered(keys: [[UInt8]]?)
    /// The device keys of the notifications whose findings `scope` reports: the devices
    /// whose deaths elsewhere can matter to the answer.
    case devices(DeviceScope)
    /// Digests of the keys of `users`, `threads` or `tasks`, to count them once across shards.
    case keys(KeyKind)
    case task(Int64, Horizon?)
    /// `log --json`'s lines.
    case log(LogQuery, limit: Int?, reverse: Bool)
    case audit(LogQuery, codes: [FindingCode])
    /// `show --json` for an event id.
    case show(String)
    /// The subject's timeline entries, one `Presentation.timelineEntry` a line.
    case timeline(TimelineSubject, Horizon?, stateChanges: Bool)

    /// What a question with findings reports on: a timeline's members, or the events
    /// a `log` query selects.
    public enum DeviceScope: Sendable {
        case timeline(TimelineSubject, Horizon?)
        case log(LogQuery)
    }

    public enum KeyKind: String, Sendable {
        case users, threads, tasks
        public var index: Layout.Index {
            switch self {
            case .users: .users
            case .threads: .threads
            case .tasks: .tasks
            }
        }
    }

    /// Whether a store answers it from a few keys (a head, a task, an event, named
    /// devices' declarations), in about the time a thread takes to start.
    public var isLookup: Bool {
        switch self {
        case .head, .task, .show: true
        case .unregistered(let keys): keys != nil
        default: false
        }
    }

    /// Whether a shard may hold nothing for it (a task, an event), rather than always
    /// answer.
    public var canBeMissing: Bool {
        switch self {
        case .task, .show: true
        default: false
        }
    }

    /// Whether the answer holds findings, and so takes the cluster's book of dead devices.
    public var takesBook: Bool {
        switch self {
        case .task, .audit, .timeline: true
        default: false
        }
    }
}

/// A shard's answer: the JSON (or NDJSON) bytes, or that it holds nothing of the kind
/// (with the shard's one-line reason).
public enum ReadAnswer: Sendable {
    case found([UInt8])
    case missing(String)

    public var bytes: [UInt8]? {
        if case .found(let b) = self { return b }
        return nil
    }
}

extension ReadQuestion {
    /// The question answered from `store`, exactly as the server's route answers it;
    /// findings consult `book`, the cluster's dead devices, when given, or `lookup`.
    public func answer(
        from store: Store, book: UnregistrationBook?, showTokens: Bool, lookup: UnregistrationLookup? = nil
    ) throws -> ReadAnswer {
        let tokens = ReadQuestion.tokens(shown: showTokens)
        func read<R>(_ body: (StoreReader) throws -> R) throws -> R {
            try store.read { plain in
                var reader = plain
                if takesBook {
                    reader.unregistrations = book
                    reader.unregistrationLookup = lookup
                }
                return try body(reader)
            }
        }
        let value: JSONValue?
        switch self {
        case .head:
            value = Presentation.head(try read { try $0.head() })
        case .verify:
            value = Presentation.verify(try store.verify())
        case .stats:
            value = Presentation.stats(try read { try $0.statistics() }, storeBytes: Int64(store.fileBytes))
        case .unregistered(let keys):
            value = Presentation.unregistrations(try read { try $0.unregistrationBook(keys: keys) })
        case .devices(let scope):
            value = Presentation.keyDigests(try read { try $0.notifiedDevices(scope) })
        case .keys(let kind):
            value = Presentation.keyDigests(try read { try $0.keyDigests(kind.index) })
        case .task(let id, let horizon):
            value = try read { r -> JSONValue? in
                guard let report = try r.taskReport(id, horizon: horizon) else { return nil }
                return Presentation.task(
                    report, asOf: Presentation.asOf(horizon, head: try r.head().seq), tokens: tokens)
            }
            if value == nil { return .missing("no events for task \(id)") }
        case .log(let query, let limit, let reverse):
            var out: [UInt8] = []
            try read { r in
                try r.log(query, limit: limit, reverse: reverse) { loaded -> Bool in
                    Presentation.logLine(loaded.stored).write(into: &out)
                    out.append(0x0A)
                    return true
                }
            }
            return .found(out)
        case .audit(let query, let codes):
            let findings = try read { try $0.audit(query, codes: Set(codes)) }
            value = Presentation.audit(findings, tokens: tokens)
        case .show(let id):
            let stored = try read { r -> StoredEvent? in try r.seq(forID: id).flatMap { try r.event(seq: $0) } }
            guard let stored else { return .missing("no event \(id)") }
            value = Presentation.show(stored)
        case .timeline(let subject, let horizon, let stateChanges):
            var out: [UInt8] = []
            for entry in try read({ try $0.timeline(of: subject, horizon: horizon, stateChanges: stateChanges) }) {
                Presentation.timelineEntry(entry, tokens: tokens).write(into: &out)
                out.append(0x0A)
            }
            return .found(out)
        }
        return .found(value!.serializedBytes())
    }

    /// How device tokens in findings are shown: in full, or masked.
    public static func tokens(shown: Bool) -> @Sendable (String) -> String {
        if shown { return { $0 } }
        return { TokenMask.mask($0) }
    }

}
