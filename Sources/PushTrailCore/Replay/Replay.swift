/// A stored event with its decoded form.
public struct LoadedEvent: Sendable {
    public var stored: StoredEvent
    public var event: Event
    public var seq: UInt64 { stored.seq }
    public var position: Position { stored.position }

    public init(stored: StoredEvent, event: Event) {
        self.stored = stored
        self.event = event
    }
}

/// One step of a task's history (SPEC §5 `task --json`).
public struct HistoryEntry: Sendable {
    public var loaded: LoadedEvent
    public var from: TaskState
    public var to: TaskState
    public var findings: [Finding]
}

/// A task rebuilt from its events as of a horizon.
public struct TaskReport: Sendable {
    public var taskID: Int64
    public var snapshot: TaskSnapshot
    public var history: [HistoryEntry]
}

/// One event of a timeline (a thread, a task, a user's events) with the state of its
/// task after it.
public struct TimelineEntry: Sendable {
    public var loaded: LoadedEvent
    public var taskID: Int64?
    public var taskState: TaskState?
    public var transition: Transition?
    public var findings: [Finding]
    /// False for an event outside the selection that is listed only because it moved
    /// its task's state (see `timeline(_:stateChanges:)`).
    public var member = true
}

/// A thread's timeline as of a horizon.
public struct ThreadReport: Sendable {
    public var threadID: String
    public var entries: [TimelineEntry]
}

extension StoreReader {
    /// Loads and decodes the events at `positions` visible from `horizon`.
    public func load(_ positions: [Position], horizon: Horizon?) throws -> [LoadedEvent] {
        var out: [LoadedEvent] = []
        out.reserveCapacity(positions.count)
        for p in positions where horizon?.includes(p) ?? true {
            guard let stored = try event(seq: p.seq) else {
                throw StoreError.damaged(seq: p.seq, detail: "an index names it but it is not stored")
            }
            out.append(LoadedEvent(stored: stored, event: try stored.decode()))
        }
        return out
    }

    /// Loads the events `seqs`, visible from `horizon`, in timeline order.
    public func load(seqs: [UInt64], horizon: Horizon?) throws -> [LoadedEvent] {
        var out: [LoadedEvent] = []
        out.reserveCapacity(seqs.count)
        for seq in seqs {
            guard let stored = try event(seq: seq) else {
                throw StoreError.damaged(seq: seq, detail: "an index names it but it is not stored")
            }
            guard horizon?.includes(stored.position) ?? true else { continue }
            out.append(LoadedEvent(stored: stored, event: try stored.decode()))
        }
        return out.sorted { $0.position < $1.position }
    }

    /// The notifications and actions of a task, in timeline order.
    public func taskEvents(_ taskID: Int64, horizon: Horizon?) throws -> [LoadedEvent] {
        try load(seqs: seqs(.tasks, key: Layout.taskKey(taskID)), horizon: horizon)
    }

    /// The members of thread `threadID` (SPEC §4): its notifications, the actions that
    /// name it, and the actions and deliveries that refer to its notifications.
    public func threadEvents(_ threadID: String, horizon: Horizon?) throws -> [LoadedEvent] {
        let direct = try seqs(.threads, key: Array(threadID.utf8))
        var all = Set(direct)
        for notification in try load(seqs: direct, horizon: horizon) where notification.event.type == .notification {
            all.formUnion(try seqs(.refs, key: notification.event.identityKey))
        }
        return try load(seqs: Array(all), horizon: horizon)
    }

    /// The task rebuilt as of `horizon`, with its history and each step's findings;
    /// nil when the store has no event for it.
    public func taskReport(_ taskID: Int64, horizon: Horizon?, maskTokens: @escaping (String) -> String) throws -> TaskReport? {
        let events = try taskEvents(taskID, horizon: horizon)
        guard !events.isEmpty else { return nil }
        var analyzer = Analyzer(context: IndexedAuditContext(reader: self, horizon: horizon), maskTokens: maskTokens)
        var history: [HistoryEntry] = []
        for loaded in events {
            let before = analyzer.task(taskID).state
            let analysis = analyzer.process(loaded.event, seq: loaded.seq)
            history.append(HistoryEntry(
                loaded: loaded, from: analysis.transition?.from ?? before,
                to: analysis.transition?.to ?? analyzer.task(taskID).state, findings: analysis.findings))
        }
        return TaskReport(taskID: taskID, snapshot: analyzer.task(taskID), history: history)
    }

    /// The thread as of `horizon`, each entry with its task's state after it; nil when
    /// the store has nothing for the thread.
    public func threadReport(_ threadID: String, horizon: Horizon?, maskTokens: @escaping (String) -> String) throws -> ThreadReport? {
        let members = try threadEvents(threadID, horizon: horizon)
        guard !members.isEmpty else { return nil }
        return ThreadReport(threadID: threadID, entries: try timeline(members, horizon: horizon, maskTokens: maskTokens))
    }

    /// A task's events and the deliveries of its notifications, in timeline order.
    public func taskTimelineEvents(_ taskID: Int64, horizon: Horizon?) throws -> [LoadedEvent] {
        let own = try taskEvents(taskID, horizon: horizon)
        var all = Set(own.map(\.seq))
        for loaded in own where loaded.event.type == .notification {
            all.formUnion(try seqs(.refs, key: loaded.event.identityKey))
        }
        return all.count == own.count ? own : try load(seqs: Array(all), horizon: horizon)
    }

    /// A user's events at or after `since`, in timeline order.
    public func userEvents(_ user: String, since: Timestamp?, horizon: Horizon?) throws -> [LoadedEvent] {
        try load(seqs: seqs(.users, key: Array(user.utf8)), horizon: horizon).filter { loaded in
            since.map { loaded.event.at >= $0 } ?? true
        }
    }

    /// `members` annotated with the state of their task after each, and their
    /// findings. The tasks' events outside `members` move their state too, so they are
    /// folded (as of `horizon`); with `stateChanges` those that changed the state are
    /// listed as well, marked as not members.
    public func timeline(
        _ members: [LoadedEvent], horizon: Horizon?, stateChanges: Bool = false, maskTokens: @escaping (String) -> String
    ) throws -> [TimelineEntry] {
        let context = IndexedAuditContext(reader: self, horizon: horizon)
        var taskIDs = Set<Int64>()
        for m in members {
            if let t = m.event.taskID ?? m.event.referencedNotificationID.flatMap({ context.notification($0)?.taskID }) {
                taskIDs.insert(t)
            }
        }
        var all: [Position: LoadedEvent] = [:]
        for m in members { all[m.position] = m }
        for t in taskIDs {
            for e in try taskEvents(t, horizon: horizon) where all[e.position] == nil { all[e.position] = e }
        }
        let memberSeqs = Set(members.map(\.seq))
        var analyzer = Analyzer(context: context, maskTokens: maskTokens)
        var entries: [TimelineEntry] = []
        for position in all.keys.sorted() {
            let loaded = all[position]!
            let analysis = analyzer.process(loaded.event, seq: loaded.seq)
            let member = memberSeqs.contains(loaded.seq)
            let changed = analysis.transition.map { $0.from != $0.to } ?? false
            guard member || (stateChanges && changed) else { continue }
            entries.append(TimelineEntry(
                loaded: loaded, taskID: analysis.taskID, taskState: analysis.stateAfter,
                transition: analysis.transition, findings: member ? analysis.findings : [], member: member))
        }
        return entries
    }
}

/// Answers the analyzer's questions from the store's indexes, as of a horizon: used
/// when only part of the log (a task, a thread) is analysed.
public final class IndexedAuditContext: AuditContext {
    let reader: StoreReader
    let horizon: Horizon?
    private var notifications: [String: NotificationFacts?] = [:]
    private var unregistrations: [String: [Unregistration]] = [:]

    public init(reader: StoreReader, horizon: Horizon?) {
        self.reader = reader
        self.horizon = horizon
    }

    public func notification(_ id: String) -> NotificationFacts? {
        if let cached = notifications[id] { return cached }
        let facts = try? lookup(id)
        notifications[id] = facts
        return facts
    }

    private func lookup(_ id: String) throws -> NotificationFacts? {
        guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq),
            stored.type == .notification, horizon?.includes(stored.position) ?? true
        else { return nil }
        let event = try stored.decode()
        guard let n = event.notification else { return nil }
        return NotificationFacts(id: event.id, seq: seq, at: event.at, notification: n, device: event.device)
    }

    public func unregistration(device: String, before position: Position) -> Unregistration? {
        if unregistrations[device] == nil { unregistrations[device] = (try? collect(device)) ?? [] }
        return unregistrations[device]!.first { $0.at < position.at }
    }

    /// The 410 answers filed under `device`, oldest first.
    private func collect(_ device: String) throws -> [Unregistration] {
        try reader.load(seqs: reader.seqs(.unregistered, key: Layout.deviceKey(device)), horizon: horizon).compactMap { loaded in
            guard let d = loaded.event.delivery, Layout.isUnregistration(d) else { return nil }
            return Unregistration(deliveryID: loaded.event.id, seq: loaded.seq, at: loaded.event.at, reason: d.reason ?? "Unregistered")
        }
    }
}
