import LMDBKit

/// A decoded event waiting to be appended, with its raw bytes and where it came from.
public struct PendingEvent: Sendable {
    public var event: Event
    public var raw: [UInt8]
    public var source: String
    public var line: Int
    /// Its place in the whole input, for reporting in order.
    var ordinal = 0
    /// The input line ended in `\r\n`: `raw` lacks the `\r` that `--rejects` must keep.
    var hadCarriageReturn = false

    public init(event: Event, raw: [UInt8], source: String = "-", line: Int = 0) {
        self.event = event
        self.raw = raw
        self.source = source
        self.line = line
    }
}

/// What happened to one pending event.
public enum AppendOutcome: Equatable, Sendable {
    /// Stored as this seq.
    case appended(UInt64)
    /// An equal event is already stored as this seq: skipped.
    case duplicate(UInt64)
    /// A different event with the same id is stored as this seq: rejected.
    case conflict(UInt64)
}

extension Store {
    /// Runs `body` in one write transaction; everything it appends commits together
    /// when it returns, or not at all when it throws. When the map fills, the
    /// transaction is retried from the start after the map grows, so `body` must be
    /// repeatable.
    public func write<R>(recordedAt clock: @escaping () -> Timestamp, _ body: (StoreWriter) throws -> R) throws -> R {
        try mapErrors {
            try env.write { txn in
                let writer = try StoreWriter(store: self, txn: txn, clock: clock)
                let result = try body(writer)
                try writer.flush()
                return result
            }
        }
    }

    /// Appends `batch` in one transaction.
    public func append(_ batch: [PendingEvent], recordedAt clock: @escaping () -> Timestamp) throws -> [AppendOutcome] {
        try write(recordedAt: clock) { try $0.append(batch) }
    }
}

/// Appends events inside one write transaction, keeping the chain head and the
/// per-type counters in memory until `flush`.
public final class StoreWriter {
    let store: Store
    let txn: Transaction
    let clock: () -> Timestamp
    private(set) public var head: ChainHead
    private var counts: [UInt64]
    private var storedTape = JSONTape()
    private var newTape = JSONTape()
    /// The greatest position in the `time` index.
    private var lastTime: [UInt8]?

    init(store: Store, txn: Transaction, clock: @escaping () -> Timestamp) throws {
        self.store = store
        self.txn = txn
        self.clock = clock
        let reader = StoreReader(store: store, txn: txn)
        head = try reader.head()
        let c = try reader.counts()
        counts = EventType.allCases.map { UInt64(c[$0] ?? 0) }
        try reader.forEachPosition(reverse: true) { last in
            lastTime = Layout.position(last.at, last.seq)
            return false
        }
    }

    /// Appends each event, or classifies it as a duplicate or conflict.
    public func append(_ batch: [PendingEvent]) throws -> [AppendOutcome] {
        let recordedAt = clock()
        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(batch.count)
        for pending in batch {
            outcomes.append(try append(pending, recordedAt: recordedAt))
        }
        return outcomes
    }

    private func append(_ pending: PendingEvent, recordedAt: Timestamp) throws -> AppendOutcome {
        let event = pending.event
        let idKey = event.identityKey
        if let existing = try store.ids.get(idKey, in: txn) {
            let seq = Layout.readBigEndian(existing)
            guard let value = try store.events.get(Layout.bigEndian(seq), in: txn) else {
                throw StoreError.damaged(seq: seq, detail: "its id is indexed but the event is missing")
            }
            let stored = UnsafeRawBufferPointer(rebasing: value[Layout.eventHeaderSize...])
            return try sameJSON(stored, pending.raw, caseInsensitiveID: event.type == .notification)
                ? .duplicate(seq) : .conflict(seq)
        }
        let seq = head.seq + 1
        var value = pending.raw.withUnsafeBytes {
            Layout.eventValue(
                type: event.type, recordedAt: recordedAt, at: event.at, hash: head.hash, raw: $0)
        }
        let hash = head.hash.withUnsafeBytes { previous in
            value.withUnsafeBytes { Layout.chainHash(previous: previous, seq: seq, value: $0) }
        }
        value.replaceSubrange(Layout.hashRange, with: hash)
        let seqKey = Layout.bigEndian(seq)
        try store.events.put(seqKey, value, flags: .append, in: txn)
        try store.ids.put(idKey, seqKey, in: txn)
        for (index, key) in try Layout.indexEntries(of: event, seq: seq, notificationDevice: notificationDevice) {
            let value = Layout.indexValue(index, event.at, seq)
            // Seqs only grow: append. In `time`, append while events come in time order.
            var flags: PutFlags = .appendDuplicate
            if index == .time {
                if let last = lastTime, value.lexicographicallyPrecedes(last) { flags = [] } else { lastTime = value }
            }
            try store.indexes[index]!.put(key, value, flags: flags, in: txn)
        }
        // A notification arriving after its 410 deliveries re-files them under its device.
        if let device = event.device, event.type == .notification {
            let reader = StoreReader(store: store, txn: txn)
            let unregistered = store.indexes[.unregistered]!
            for refSeq in try reader.seqs(.refs, key: idKey) {
                guard let stored = try reader.event(seq: refSeq), stored.type == .delivery,
                    let d = try? stored.decode(), let delivery = d.delivery, Layout.isUnregistration(delivery)
                else { continue }
                let value = Layout.bigEndian(refSeq)
                if let own = d.device, own != device {
                    try unregistered.delete(Layout.deviceKey(own), value: value, in: txn)
                }
                try unregistered.put(Layout.deviceKey(device), value, flags: .noDuplicateData, in: txn)
            }
        }
        head = ChainHead(seq: seq, hash: hash)
        counts[Int(event.type.rawValue) - 1] += 1
        return .appended(seq)
    }

    /// The device of the stored notification `id`, if it is stored and has one.
    func notificationDevice(_ id: String) throws -> String? {
        let reader = StoreReader(store: store, txn: txn)
        guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq), stored.type == .notification
        else { return nil }
        return try stored.decode().device
    }

    /// Whether two raw events are equal as JSON values; a notification's `id` (an
    /// APNs UUID) compares case-insensitively.
    private func sameJSON(_ stored: UnsafeRawBufferPointer, _ new: [UInt8], caseInsensitiveID: Bool) throws -> Bool {
        do {
            try storedTape.parse(stored)
        } catch {
            return false
        }
        return new.withUnsafeBytes { newBytes in
            do { try newTape.parse(newBytes) } catch { return false }
            return storedTape.nodes.withUnsafeBufferPointer { a in
                newTape.nodes.withUnsafeBufferPointer { b in
                    let old = JSONView(nodes: a, bytes: stored)
                    let new = JSONView(nodes: b, bytes: newBytes)
                    guard caseInsensitiveID, old.kind(0) == .object, new.kind(0) == .object else {
                        return JSONView.equal(old, 0, new, 0)
                    }
                    let oldMembers = old.members(0)
                    let newMembers = new.members(0)
                    guard oldMembers.count == newMembers.count else { return false }
                    for (k, v) in oldMembers {
                        guard let (_, w) = newMembers.first(where: {
                            JSONText.stringsEqual(old.nodes[k], in: stored, new.nodes[$0.key], in: newBytes)
                        }) else { return false }
                        if JSONText.equals(old.nodes[k], "id", in: stored), let x = old.string(v), let y = new.string(w) {
                            if EventID.normalizedNotificationID(x) != EventID.normalizedNotificationID(y) { return false }
                        } else if !JSONView.equal(old, v, new, w) {
                            return false
                        }
                    }
                    return true
                }
            }
        }
    }

    /// Writes the chain head and counters; called once before commit.
    func flush() throws {
        try store.meta.put(Layout.metaHeadKey, Layout.bigEndian(head.seq) + head.hash, in: txn)
        try store.meta.put(Layout.metaCountsKey, counts.flatMap { Layout.bigEndian($0) }, in: txn)
    }
}
