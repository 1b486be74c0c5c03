import PushTrailModel

/// What a timeline is of: the events a thread, a task, a user's recent past or one
/// event are, as `thread`, `task`, `report` and `show` list them.
public enum TimelineSubject: Sendable, Equatable {
    /// The thread's members (`threadEvents`).
    case thread(String)
    /// The task's notifications and actions (`taskEvents`): `task`'s history.
    case task(Int64)
    /// The task's events and its notifications' deliveries (`taskTimelineEvents`): `report --task`.
    case taskWithDeliveries(Int64)
    /// The user's events at or after `since` (`userEvents`).
    case user(String, since: Timestamp?)
    /// One event, by id.
    case event(String)
}

extension StoreReader {
    /// The subject's events as of `horizon`, annotated (see `timeline(_:horizon:stateChanges:)`);
    /// empty when the store holds none.
    public func timeline(of subject: TimelineSubject, horizon: Horizon?, stateChanges: Bool) throws -> [TimelineEntry] {
        let members: [LoadedEvent]
        switch subject {
        case .thread(let id): members = try threadEvents(id, horizon: horizon)
        case .task(let id): members = try taskEvents(id, horizon: horizon)
        case .taskWithDeliveries(let id): members = try taskTimelineEvents(id, horizon: horizon)
        case .user(let user, let since): members = try userEvents(user, since: since, horizon: horizon)
        case .event(let id):
            guard let seq = try seq(forID: id), let stored = try event(seq: seq),
                horizon?.includes(stored.position) ?? true
            else { return [] }
            members = [LoadedEvent(stored: stored, event: try stored.decode())]
        }
        guard !members.isEmpty else { return [] }
        return try timeline(members, horizon: horizon, stateChanges: stateChanges)
    }
}

extension Presentation {
    /// One timeline entry with everything a reader elsewhere needs to draw it: the event
    /// as stored (seq, times, hash, the JSON as ingested), its task's state, the
    /// transition it made and its findings. A cluster's shards answer with these, one a
    /// line, and the cluster draws the merged timeline as one store would.
    public static func timelineEntry(_ entry: TimelineEntry, tokens: (String) -> String) -> JSONValue {
        let stored = entry.loaded.stored
        return .object([
            ("seq", .uint(stored.seq)), ("recorded_at", .string(stored.recordedAt.formatted(fractionDigits: 6))),
            ("hash", .string(SHA256.hex(stored.hash))),
            ("event", .raw(String(decoding: stored.raw, as: UTF8.self))),
            ("task_id", entry.taskID.map { .int($0) } ?? .null),
            ("task_state", .string(entry.taskState?.rawValue)),
            (
                "transition",
                entry.transition.map {
                    .object([
                        ("from", .string($0.from.rawValue)), ("to", .string($0.to.rawValue)),
                        ("invalid", .bool($0.invalid)),
                    ])
                } ?? .null
            ),
            ("member", .bool(entry.member)),
            (
                "findings",
                .array(
                    entry.findings.map {
                        .object([
                            ("code", .string($0.code.rawValue)), ("seq", .uint($0.seq)), ("id", .string($0.id)),
                            ("task_id", $0.taskID.map { .int($0) } ?? .null),
                            ("at_us", .int($0.at.microseconds)), ("message", .string($0.message(tokens: tokens))),
                        ])
                    })
            ),
        ])
    }
}
