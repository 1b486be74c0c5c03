import PushTrailModel

extension StoreReader {
    /// The audit findings (docs/AUDIT.md) of the events matching `query`, in timeline order.
    ///
    /// With no task, thread or user filter this is one pass over the timeline, keeping
    /// only per-task state; otherwise the matching events are found through the indexes
    /// and analysed together with the rest of their tasks' histories, so a finding is
    /// the same whichever way it is asked for.
    public func audit(_ query: LogQuery, codes: Set<FindingCode> = [], progress: ((Int) -> Void)? = nil) throws
        -> [Finding]
    {
        let wanted = { (f: Finding) in codes.isEmpty || codes.contains(f.code) }
        if query.hasIndexedFilter { return try scopedAudit(query).filter(wanted) }

        // One pass over the whole timeline (bounded by --until), reporting what the
        // other filters select.
        let context = StreamingAuditContext(reader: self, horizon: query.until)
        var analyzer = Analyzer(context: context)
        var matcher = LogMatcher(query: query, reader: self)
        var everything = LogQuery()
        everything.until = query.until
        var findings: [Finding] = []
        var count = 0
        try log(everything) { loaded in
            let analysis = try analyzer.process(loaded.event, seq: loaded.seq)
            try context.observe(loaded)
            if !analysis.findings.isEmpty, try matcher.matches(loaded, drivenBy: .time) {
                findings += analysis.findings.filter(wanted)
            }
            count += 1
            if count % 65536 == 0 { progress?(count) }
            return true
        }
        return findings
    }

    private func scopedAudit(_ query: LogQuery) throws -> [Finding] {
        var selected: [Position: LoadedEvent] = [:]
        try log(query) { loaded in
            selected[loaded.position] = loaded
            return true
        }
        guard !selected.isEmpty else { return [] }
        // One loader for the selection, its tasks' histories and the notifications they
        // refer to: an event the selection already decoded is not decoded again.
        let loader = EventLoader(reader: self, horizon: query.until)
        loader.remember(Array(selected.values))
        let context = IndexedAuditContext(loader: loader)
        var tasks = Set<Int64>()
        for loaded in selected.values {
            if let t = try loaded.event.taskID
                ?? loaded.event.referencedNotificationID.flatMap({ try context.notification($0)?.taskID })
            {
                tasks.insert(t)
            }
        }
        var all = selected
        for t in tasks {
            for loaded in try taskEvents(t, loader) where all[loaded.position] == nil {
                all[loaded.position] = loaded
            }
        }
        var analyzer = Analyzer(context: context)
        var findings: [Finding] = []
        for position in all.keys.sorted() {
            let analysis = try analyzer.process(all[position]!.event, seq: position.seq)
            if selected[position] != nil { findings += analysis.findings }
        }
        return findings
    }
}

/// Answers the analyzer's questions during one pass over the whole timeline: device
/// unregistrations are learnt as the pass meets them (the rule asks for strictly
/// earlier ones, which the pass has always seen), notifications are looked up by id.
final class StreamingAuditContext: AuditContext {
    let reader: StoreReader
    let horizon: Horizon?
    private var cache: [String: NotificationFacts?] = [:]
    private var unregistered: [String: Unregistration] = [:]

    init(reader: StoreReader, horizon: Horizon?) {
        self.reader = reader
        self.horizon = horizon
    }

    func notification(_ id: String) throws -> NotificationFacts? {
        if let hit = cache[id] { return hit }
        var facts: NotificationFacts?
        if let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq), stored.type == .notification,
            horizon?.includes(stored.position) ?? true
        {
            let event = try stored.decode()
            guard let n = event.notification else {
                throw StoreError.damaged(seq: seq, detail: "its type byte says notification but its JSON is not one")
            }
            facts = NotificationFacts(id: event.id, seq: seq, at: event.at, notification: n, device: event.device)
        }
        remember(id, facts)
        return facts
    }

    private func remember(_ id: String, _ facts: NotificationFacts?) {
        if cache.count >= 65536 { cache.removeAll(keepingCapacity: true) }
        cache[id] = facts
    }

    func unregistration(device: String, before position: Position) throws -> Unregistration? {
        if let book = reader.unregistrations { return book.unregistration(device: device, before: position) }
        guard let u = unregistered[device], u.at < position.at else { return nil }
        return u
    }

    /// Learns from an event the pass has just analysed.
    func observe(_ loaded: LoadedEvent) throws {
        if let n = loaded.event.notification {
            // The pass holds the notification decoded: the actions and deliveries that
            // name it, which mostly follow it, need not find, read and decode it again
            // (it is the one its id leads to: ingest stores one event per id).
            let facts = NotificationFacts(
                id: loaded.event.id, seq: loaded.seq, at: loaded.event.at, notification: n, device: loaded.event.device)
            remember(EventID.normalizedNotificationIDString(loaded.event.id), facts)
            return
        }
        guard let d = loaded.event.delivery, d.declaresTokenDead,
            let device = try notification(d.notificationID)?.device ?? loaded.event.device,
            unregistered[device] == nil
        else { return }
        unregistered[device] = Unregistration(
            deliveryID: loaded.event.id, seq: loaded.seq, at: loaded.event.at, delivery: d)
    }
}
