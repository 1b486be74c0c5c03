import PushTrailModel

/// A stored event with its decoded form.
///
/// A class: a report meets one event in several places (its thread, its task, its
/// notification's actions), and a struct this size would copy a reference count for
/// every string of the event at each.
public final class LoadedEvent: Sendable {
    public let stored: StoredEvent
    public let event: Event
    public var seq: UInt64 { stored.seq }
    public var position: Position { stored.position }

    public init(stored: StoredEvent, event: Event) {
        self.stored = stored
        self.event = event
    }
}

/// One step of a task's history (`task --json`'s `history`).
public struct HistoryEntry: Sendable {
    public var loaded: LoadedEvent
    public var from: TaskState
    public var to: TaskState
    public var findings: [Finding]

    public init(loaded: LoadedEvent, from: TaskState, to: TaskState, findings: [Finding]) {
        self.loaded = loaded
        self.from = from
        self.to = to
        self.findings = findings
    }
}

/// A task rebuilt from its events as of a horizon.
public struct TaskReport: Sendable {
    public var taskID: Int64
    public var snapshot: TaskSnapshot
    public var history: [HistoryEntry]

    public init(taskID: Int64, snapshot: TaskSnapshot, history: [HistoryEntry]) {
        self.taskID = taskID
        self.snapshot = snapshot
        self.history = history
    }
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

    public init(
        loaded: LoadedEvent, taskID: Int64?, taskState: TaskState?, transition: Transition?, findings: [Finding],
        member: Bool = true
    ) {
        self.loaded = loaded
        self.taskID = taskID
        self.taskState = taskState
        self.transition = transition
        self.findings = findings
        self.member = member
    }
}

/// A thread's timeline as of a horizon.
public struct ThreadReport: Sendable {
    public var threadID: String
    public var entries: [TimelineEntry]

    public init(threadID: String, entries: [TimelineEntry]) {
        self.threadID = threadID
        self.entries = entries
    }
}

extension StoreReader {
    /// Loads and decodes the events at `positions` visible from `horizon`.
    public func load(_ positions: [Position], horizon: Horizon?) throws -> [LoadedEvent] {
        var out: [LoadedEvent] = []
        out.reserveCapacity(positions.count)
        var decoder = EventDecoder()
        for p in positions where horizon?.includes(p) ?? true {
            guard let stored = try event(seq: p.seq) else {
                throw StoreError.damaged(seq: p.seq, detail: "an index names it but it is not stored")
            }
            out.append(LoadedEvent(stored: stored, event: try stored.decode(using: &decoder)))
        }
        return out
    }

    /// Loads the events `seqs`, visible from `horizon`, in timeline order.
    public func load(seqs: [UInt64], horizon: Horizon?) throws -> [LoadedEvent] {
        var out: [LoadedEvent] = []
        out.reserveCapacity(seqs.count)
        var decoder = EventDecoder()
        for seq in seqs {
            guard let stored = try event(seq: seq) else {
                throw StoreError.damaged(seq: seq, detail: "an index names it but it is not stored")
            }
            guard horizon?.includes(stored.position) ?? true else { continue }
            out.append(LoadedEvent(stored: stored, event: try stored.decode(using: &decoder)))
        }
        return out.sorted { $0.position < $1.position }
    }

    /// The notifications and actions of a task, in timeline order.
    public func taskEvents(_ taskID: Int64, horizon: Horizon?) throws -> [LoadedEvent] {
        try taskEvents(taskID, EventLoader(reader: self, horizon: horizon))
    }

    func taskEvents(_ taskID: Int64, _ loader: EventLoader) throws -> [LoadedEvent] {
        try loader.load(seqs(.tasks, key: Layout.taskKey(taskID))).inTimelineOrder()
    }

    /// The members of thread `threadID`: its notifications, the actions that
    /// name it, and the actions and deliveries that refer to its notifications.
    public func threadEvents(_ threadID: String, horizon: Horizon?) throws -> [LoadedEvent] {
        try threadEvents(threadID, EventLoader(reader: self, horizon: horizon))
    }

    func threadEvents(_ threadID: String, _ loader: EventLoader) throws -> [LoadedEvent] {
        let direct = try seqs(.threads, key: Array(threadID.utf8))
        var all = direct
        for notification in try loader.load(direct) where notification.event.type == .notification {
            all += try seqs(.refs, key: notification.event.identityKey)
        }
        // The direct members are decoded already: this decodes only the referrers.
        return try loader.load(all).inTimelineOrder()
    }

    /// The task rebuilt as of `horizon`, with its history and each step's findings;
    /// nil when the store has no event for it.
    public func taskReport(_ taskID: Int64, horizon: Horizon?) throws -> TaskReport? {
        let loader = EventLoader(reader: self, horizon: horizon)
        let events = try taskEvents(taskID, loader)
        guard !events.isEmpty else { return nil }
        var analyzer = Analyzer(context: IndexedAuditContext(loader: loader))
        var history: [HistoryEntry] = []
        history.reserveCapacity(events.count)
        for loaded in events {
            let before = analyzer.task(taskID).state
            let analysis = try analyzer.process(loaded.event, seq: loaded.seq)
            history.append(
                HistoryEntry(
                    loaded: loaded, from: analysis.transition?.from ?? before,
                    to: analysis.transition?.to ?? analyzer.task(taskID).state, findings: analysis.findings))
        }
        return TaskReport(taskID: taskID, snapshot: analyzer.task(taskID), history: history)
    }

    /// The thread as of `horizon`, each entry with its task's state after it; nil when
    /// the store has nothing for the thread.
    public func threadReport(_ threadID: String, horizon: Horizon?) throws -> ThreadReport? {
        let loader = EventLoader(reader: self, horizon: horizon)
        let members = try threadEvents(threadID, loader)
        guard !members.isEmpty else { return nil }
        return ThreadReport(threadID: threadID, entries: try timeline(members, loader, stateChanges: false))
    }

    /// A task's events and the deliveries of its notifications, in timeline order.
    public func taskTimelineEvents(_ taskID: Int64, horizon: Horizon?) throws -> [LoadedEvent] {
        let loader = EventLoader(reader: self, horizon: horizon)
        let own = try taskEvents(taskID, loader)
        var all = own.map(\.seq)
        for loaded in own where loaded.event.type == .notification {
            all += try seqs(.refs, key: loaded.event.identityKey)
        }
        all = sortedUnique(all)
        return all.count == own.count ? own : try loader.load(all).inTimelineOrder()
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
        _ members: [LoadedEvent], horizon: Horizon?, stateChanges: Bool = false
    ) throws -> [TimelineEntry] {
        let loader = EventLoader(reader: self, horizon: horizon)
        loader.remember(members)
        return try timeline(members, loader, stateChanges: stateChanges)
    }

    func timeline(
        _ members: [LoadedEvent], _ loader: EventLoader, stateChanges: Bool
    ) throws -> [TimelineEntry] {
        let context = IndexedAuditContext(loader: loader)
        var taskIDs: [Int64] = []
        for m in members {
            if let t = try m.event.taskID
                ?? m.event.referencedNotificationID.flatMap({ try context.notification($0)?.taskID })
            {
                taskIDs.append(t)
            }
        }
        var taskSeqs: [UInt64] = []
        for t in sortedUnique(taskIDs) { taskSeqs += try seqs(.tasks, key: Layout.taskKey(t)) }
        let memberSeqs = sortedUnique(members.map(\.seq))
        var all = members
        for e in try loader.load(taskSeqs) where !memberSeqs.containsSorted(e.seq) { all.append(e) }
        all = all.inTimelineOrder()
        var analyzer = Analyzer(context: context)
        var entries: [TimelineEntry] = []
        entries.reserveCapacity(members.count)
        var previous: UInt64?
        for loaded in all {
            // One entry per event, should `members` name one twice.
            if loaded.seq == previous { continue }
            previous = loaded.seq
            let analysis = try analyzer.process(loaded.event, seq: loaded.seq)
            let member = memberSeqs.containsSorted(loaded.seq)
            let changed = analysis.transition.map { $0.from != $0.to } ?? false
            guard member || (stateChanges && changed) else { continue }
            entries.append(
                TimelineEntry(
                    loaded: loaded, taskID: analysis.taskID, taskState: analysis.stateAfter,
                    transition: analysis.transition, findings: member ? analysis.findings : [], member: member))
        }
        return entries
    }
}

extension Array where Element == LoadedEvent {
    /// In timeline order: by (at, seq).
    func inTimelineOrder() -> [LoadedEvent] { sorted { $0.position < $1.position } }
}

extension Array where Element == UInt64 {
    /// Whether this ascending array holds `value` (binary search).
    func containsSorted(_ value: UInt64) -> Bool {
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if self[mid] < value { lo = mid + 1 } else { hi = mid }
        }
        return lo < count && self[lo] == value
    }
}

/// `values` ascending without repeats. Query code uses sorted arrays where a `Set`
/// would do: the first `Set` or `Dictionary` of a key type costs the Swift runtime a
/// scan of every protocol conformance in the binary (about 0.1M instructions, a
/// noticeable part of a query that takes a few million).
func sortedUnique<T: Comparable>(_ values: [T]) -> [T] {
    var ascending = true
    var i = 1
    while i < values.count {
        if !(values[i - 1] < values[i]) {
            ascending = false
            break
        }
        i += 1
    }
    if ascending { return values }
    var out: [T] = []
    out.reserveCapacity(values.count)
    for v in values.sorted() where out.last != v { out.append(v) }
    return out
}

/// Loads and decodes events by seq, each at most once, as of a horizon: a thread or
/// task report meets the same events through several indexes (the thread, its tasks,
/// the notifications its actions refer to), and decoding is most of a query's work.
/// Indexed by a sorted array of seqs rather than a `Dictionary` (see `sortedUnique`).
final class EventLoader {
    let reader: StoreReader
    let horizon: Horizon?
    /// The decoded events, in the order they were decoded.
    private var events: [LoadedEvent] = []
    /// The seqs of `events`, ascending, and where each is in `events`.
    private var seqs: [UInt64] = []
    private var slots: [Int] = []
    /// One decoder for every event loaded: its tape is reused.
    private var decoder = EventDecoder()
    /// Events asked of `load` so far.
    private var requested = 0

    init(reader: StoreReader, horizon: Horizon?) {
        self.reader = reader
        self.horizon = horizon
    }

    /// The events `wanted` (in any order, repeats allowed) visible from the horizon,
    /// ascending by seq. An index entry naming an event that is not stored is damage.
    func load(_ wanted: [UInt64]) throws -> [LoadedEvent] {
        var out: [LoadedEvent] = []
        out.reserveCapacity(wanted.count)
        var added: [Int] = []
        defer { index(added) }
        let kept = keptEvents(asking: wanted.count)
        for seq in sortedUnique(wanted) {
            if let hit = known(seq) {
                out.append(hit)
                continue
            }
            switch try find(seq, kept) {
            case .missing: throw StoreError.damaged(seq: seq, detail: "an index names it but it is not stored")
            case .hidden: continue
            case .visible(let loaded):
                added.append(events.count)
                events.append(loaded)
                out.append(loaded)
            }
        }
        return out
    }

    /// The event `seq` when it is a notification visible from the horizon.
    func notification(seq: UInt64) throws -> LoadedEvent? {
        if let hit = known(seq) { return hit.stored.type == .notification ? hit : nil }
        guard case .visible(let loaded) = try find(seq, keptEvents(asking: 1), type: .notification) else {
            return nil
        }
        events.append(loaded)
        index([events.count - 1])
        return loaded
    }

    private enum Found {
        case visible(LoadedEvent)
        /// Stored, but beyond the horizon or not of the type asked for.
        case hidden
        case missing
    }

    /// Event `seq` from `kept` or else the store (then kept), unless the horizon hides
    /// it or it is not of `type`: a stored event is decoded only when it is wanted.
    private func find(_ seq: UInt64, _ kept: DecodedEvents?, type: EventType? = nil) throws -> Found {
        if let hit = kept?.event(seq) {
            guard type.map({ hit.stored.type == $0 }) ?? true, horizon?.includes(hit.position) ?? true else {
                return .hidden
            }
            return .visible(hit)
        }
        guard let stored = try reader.event(seq: seq) else { return .missing }
        guard type.map({ stored.type == $0 }) ?? true, horizon?.includes(stored.position) ?? true else {
            return .hidden
        }
        let loaded = LoadedEvent(stored: stored, event: try stored.decode(using: &decoder))
        kept?.remember(loaded)
        return .visible(loaded)
    }

    /// The store's kept events, while this question has asked for few enough: a user's
    /// hundreds, or an audit's many tasks, would turn them over at every question (the
    /// churn doubled a user timeline's p99 under 8 clients).
    private func keptEvents(asking count: Int) -> DecodedEvents? {
        requested += count
        return requested <= DecodedEvents.largestQuestion ? reader.store.decodedEvents : nil
    }

    /// Takes events decoded elsewhere (those visible from the horizon).
    func remember(_ decoded: [LoadedEvent]) {
        var added: [Int] = []
        for loaded in decoded where known(loaded.seq) == nil && (horizon?.includes(loaded.position) ?? true) {
            added.append(events.count)
            events.append(loaded)
        }
        index(added)
    }

    private func known(_ seq: UInt64) -> LoadedEvent? {
        let i = lowerBound(seq)
        return i < seqs.count && seqs[i] == seq ? events[slots[i]] : nil
    }

    /// The first place in `seqs` holding `seq` or a greater one.
    private func lowerBound(_ seq: UInt64) -> Int {
        var lo = 0
        var hi = seqs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if seqs[mid] < seq { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Files the events at `added` (slots of `events`, none already filed) under their
    /// seqs; of slots with the same seq, the first.
    private func index(_ added: [Int]) {
        guard !added.isEmpty else { return }
        var fresh = added
        if added.count > 1 {
            fresh = []
            for slot in added.sorted(by: { events[$0].seq < events[$1].seq })
            where fresh.last.map({ events[$0].seq != events[slot].seq }) ?? true {
                fresh.append(slot)
            }
        }
        if let last = seqs.last, events[fresh[0]].seq < last {
            var mergedSeqs: [UInt64] = []
            var mergedSlots: [Int] = []
            mergedSeqs.reserveCapacity(seqs.count + fresh.count)
            mergedSlots.reserveCapacity(seqs.count + fresh.count)
            var i = 0
            var j = 0
            while i < seqs.count || j < fresh.count {
                if j == fresh.count || (i < seqs.count && seqs[i] < events[fresh[j]].seq) {
                    mergedSeqs.append(seqs[i])
                    mergedSlots.append(slots[i])
                    i += 1
                } else {
                    mergedSeqs.append(events[fresh[j]].seq)
                    mergedSlots.append(fresh[j])
                    j += 1
                }
            }
            seqs = mergedSeqs
            slots = mergedSlots
        } else {
            for slot in fresh {
                seqs.append(events[slot].seq)
                slots.append(slot)
            }
        }
    }
}

/// Answers the analyzer's questions from the store's indexes, as of a horizon: used
/// when only part of the log (a task, a thread) is analysed.
public final class IndexedAuditContext: AuditContext {
    let loader: EventLoader
    /// Notifications looked up so far (nil: not found), by id.
    private var notificationIDs = StringSlots()
    private var notifications: [NotificationFacts?] = []
    /// Each device's 410 answers, by device token.
    private var devices = StringSlots()
    private var unregistrations: [[Unregistration]] = []

    public convenience init(reader: StoreReader, horizon: Horizon?) {
        self.init(loader: EventLoader(reader: reader, horizon: horizon))
    }

    /// A context that shares a report's decoded events.
    init(loader: EventLoader) {
        self.loader = loader
    }

    public func notification(_ id: String) throws -> NotificationFacts? {
        if let slot = notificationIDs.slot(of: id) { return notifications[slot] }
        let facts = try lookup(id)
        notificationIDs.add(id)
        notifications.append(facts)
        return facts
    }

    private func lookup(_ id: String) throws -> NotificationFacts? {
        guard let seq = try loader.reader.seq(forID: id), let loaded = try loader.notification(seq: seq),
            let n = loaded.event.notification
        else { return nil }
        return NotificationFacts(
            id: loaded.event.id, seq: seq, at: loaded.event.at, notification: n, device: loaded.event.device)
    }

    public func unregistration(device: String, before position: Position) throws -> Unregistration? {
        if let book = loader.reader.unregistrations { return book.unregistration(device: device, before: position) }
        let slot: Int
        if let known = devices.slot(of: device) {
            slot = known
        } else {
            let found =
                try loader.reader.unregistrationLookup.map { lookup in
                    try lookup(loader.reader, Layout.deviceKey(device)).map { [$0] } ?? []
                } ?? collect(device)
            slot = devices.add(device)
            unregistrations.append(found)
        }
        return unregistrations[slot].first { $0.at < position.at }
    }

    /// The 410 answers filed under `device`, oldest first.
    private func collect(_ device: String) throws -> [Unregistration] {
        try loader.load(loader.reader.seqs(.unregistered, key: Layout.deviceKey(device))).inTimelineOrder().compactMap {
            loaded in
            guard let d = loaded.event.delivery, d.declaresTokenDead else { return nil }
            return Unregistration(
                deliveryID: loaded.event.id, seq: loaded.seq, at: loaded.event.at, delivery: d)
        }
    }
}

/// Strings numbered in the order added: searched in order while there are few (a
/// thread or task report meets a handful of notification ids and devices), hashed
/// once there are more (a user's audit), so a short query never instantiates a
/// `Dictionary` (see `sortedUnique`).
struct StringSlots {
    private var names: [String] = []
    private var index: [String: Int] = [:]
    static let fewLimit = 32

    func slot(of name: String) -> Int? {
        names.count <= StringSlots.fewLimit ? names.firstIndex(of: name) : index[name]
    }

    /// Numbers `name` (not already added) and returns its number.
    @discardableResult
    mutating func add(_ name: String) -> Int {
        names.append(name)
        if names.count == StringSlots.fewLimit + 1 {
            for (i, n) in names.enumerated() { index[n] = i }
        } else if names.count > StringSlots.fewLimit + 1 {
            index[name] = names.count - 1
        }
        return names.count - 1
    }
}
