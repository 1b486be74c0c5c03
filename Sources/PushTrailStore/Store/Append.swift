import LMDBKit
import PushTrailModel

/// A decoded event waiting to be appended, with its raw bytes and where it came from.
public struct PendingEvent: Sendable {
    /// What the store files it under (all that appending needs of the decoded event).
    public let event: FilingEvent
    public var raw: [UInt8]
    public var source: String
    public var line: Int
    /// Its place in the whole input, for reporting in order.
    var ordinal = 0
    /// The input line ended in `\r\n`: `raw` lacks the `\r` that a rejects file must keep.
    var hadCarriageReturn = false
    /// `raw` compressed with the dictionary its batch is appended with, when that is
    /// smaller: what the record stores.
    var compressed: [UInt8]?
    /// What the writer files the event under.
    let fields: IndexFields

    public init(event: FilingEvent, raw: [UInt8], source: String = "-", line: Int = 0) {
        fields = IndexFields(event)
        self.event = event
        self.raw = raw
        self.source = source
        self.line = line
    }

    /// A fully decoded event waiting to be appended.
    public init(event: Event, raw: [UInt8], source: String = "-", line: Int = 0) {
        self.init(event: event.filing, raw: raw, source: source, line: line)
    }
}

/// The keys an event is filed under, built once from its `FilingEvent`: the one builder
/// of index keys. The writer files these; `Layout.indexEntries`, which `verify` checks
/// the indexes against, is made from them too, and the verify scanner's entries from
/// stored JSON go through the same `IndexFields.forEachEntry` rule.
///
/// Made where the event is parsed, so that the writing thread, which bounds ingest,
/// copies no part of the event and retains nothing per key: the keys lie one after
/// another in one array.
struct IndexFields: Sendable {
    let type: EventType
    let at: Timestamp
    let taskID: Int64?
    /// The identity key, the user, then the thread id and the referenced notification
    /// id when the event has them, as bytes.
    let keys: [UInt8]
    /// Where each part of `keys` ends: identity key, user, thread id, reference.
    private let ends: (Int32, Int32, Int32, Int32)
    let hasThread: Bool
    let hasReference: Bool
    /// A 410 delivery's notification: it is filed under that notification's device.
    let unregisteredNotificationID: String?
    /// `KeyFilter.hash` of the identity key and of the reference (0 without one), made
    /// where the event is parsed: the writer looks its filters' words up with them, and
    /// asks for them a few events ahead, before it needs them (they are seldom cached).
    let identityHash: UInt64
    let referenceHash: UInt64

    init(_ event: borrowing FilingEvent) {
        at = event.at
        type = event.type
        taskID = event.taskID
        let thread = event.threadID
        let reference = event.referencedNotificationID
        hasThread = thread != nil
        hasReference = reference != nil
        // One allocation of the exact size; a notification's id is lowercased into it.
        var keys: [UInt8] = []
        keys.reserveCapacity(
            event.id.utf8.count + event.user.utf8.count + (thread?.utf8.count ?? 0) + (reference?.utf8.count ?? 0))
        if type == .notification {
            var id = event.id
            id.withUTF8 { for c in $0 { keys.append(EventID.lowercased(c)) } }
        } else {
            keys += event.id.utf8
        }
        let id = Int32(keys.count)
        keys += event.user.utf8
        let user = Int32(keys.count)
        if let thread { keys += thread.utf8 }
        let threadEnd = Int32(keys.count)
        if let reference { keys += reference.utf8 }
        ends = (id, user, threadEnd, Int32(keys.count))
        self.keys = keys
        (identityHash, referenceHash) = keys.withUnsafeBytes {
            (
                KeyFilter.hash(UnsafeRawBufferPointer(rebasing: $0[..<Int(id)])),
                reference == nil ? 0 : KeyFilter.hash(UnsafeRawBufferPointer(rebasing: $0[Int(threadEnd)...]))
            )
        }
        unregisteredNotificationID = event.declaresTokenDead ? reference : nil
    }

    /// The key ranges in `keys`: identity key, user, thread id, reference (empty when absent).
    var identityRange: Range<Int> { 0..<Int(ends.0) }
    var userRange: Range<Int> { Int(ends.0)..<Int(ends.1) }
    var threadRange: Range<Int> { Int(ends.1)..<Int(ends.2) }
    var referenceRange: Range<Int> { Int(ends.2)..<Int(ends.3) }

    /// Hands `body` every entry of this event but `unregistered` (which needs the stored
    /// notification's device), as (digest slot, key, value), the `ids` entry first.
    func forEachEntry(seq: UInt64, _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void)
        rethrows
    {
        try keys.withUnsafeBytes { k in
            try IndexFields.forEachEntry(
                seq: seq, at: at, taskID: taskID, identity: UnsafeRawBufferPointer(rebasing: k[identityRange]),
                user: UnsafeRawBufferPointer(rebasing: k[userRange]),
                thread: hasThread ? UnsafeRawBufferPointer(rebasing: k[threadRange]) : nil,
                reference: hasReference ? UnsafeRawBufferPointer(rebasing: k[referenceRange]) : nil, body)
        }
    }

    /// The rule itself: which index files which key, with which value. `identity` is
    /// the normalised id (a notification's lowercased), `reference` the normalised
    /// notification id an action or delivery names.
    @inline(__always)
    static func forEachEntry(
        seq: UInt64, at: Timestamp, taskID: Int64?, identity: UnsafeRawBufferPointer, user: UnsafeRawBufferPointer,
        thread: UnsafeRawBufferPointer?, reference: UnsafeRawBufferPointer?,
        _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        try withUnsafeBytes(of: seq.bigEndian) { seqBytes in
            try body(IndexDigest.ids, identity, seqBytes)
            let position = (Layout.orderedSigned(at.microseconds).bigEndian, seq.bigEndian)
            try withUnsafeBytes(of: position) { value in
                try withUnsafeBytes(of: UInt8(0)) { try body(IndexDigest.slot(.time), $0, value) }
            }
            try body(IndexDigest.slot(.users), user, seqBytes)
            if let taskID {
                try withUnsafeBytes(of: Layout.orderedSigned(taskID).bigEndian) {
                    try body(IndexDigest.slot(.tasks), $0, seqBytes)
                }
            }
            if let thread { try body(IndexDigest.slot(.threads), thread, seqBytes) }
            if let reference { try body(IndexDigest.slot(.refs), reference, seqBytes) }
        }
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
    ///
    /// With `retryingWhenFull` false a full map is an error instead, for a `body` that
    /// cannot run twice; `makeRoom` first sizes the map so that it cannot fill.
    ///
    /// A `tiered` write files its ids and seqs in the recent tier's runs (`TierRuns`),
    /// for transactions of a few thousand events, and moves a slice of the tier into
    /// the main databases while it holds `StoreOptions.foldEvents` events or more; any
    /// other write moves all of it first, then files in the main databases.
    public func write<R>(
        recordedAt clock: @escaping () -> Timestamp, retryingWhenFull: Bool = true, tiered: Bool = false,
        _ body: (StoreWriter) throws -> R
    ) throws -> R {
        try writeTransaction(retryingWhenFull: retryingWhenFull) { txn in
            let writer = try StoreWriter(store: self, txn: txn, clock: clock, tiered: tiered)
            let result = try body(writer)
            try writer.flush()
            if let used = writer.runFilters { runFilters.cover(txn.id, used) }
            return result
        }
    }

    /// Appends `batch` in one transaction (`tiered`: as `write` says).
    public func append(
        _ batch: [PendingEvent], recordedAt clock: @escaping () -> Timestamp, tiered: Bool = false
    ) throws -> [AppendOutcome] {
        try write(recordedAt: clock, tiered: tiered) { try $0.append(batch) }
    }

    /// The events whose entries the recent tier holds (its `ids` entries): in its
    /// runs, and in `recent.*`, which only a store an older build wrote can hold.
    func recentEvents(in txn: Transaction) throws -> Int {
        try olderTierEvents(in: txn) + StoreReader(store: self, txn: txn).tierRuns().entries(0)
    }

    /// The events whose entries the tier's first layout (`recent.*`) holds.
    func olderTierEvents(in txn: Transaction) throws -> Int {
        try recent.map { try $0.ids.statistics(in: txn).entries } ?? 0
    }

    /// The newest compression dictionary of the store, which new records are compressed
    /// with; nil while it has none.
    public func latestDictionary() throws -> RecordDictionary? {
        try read { try $0.latestDictionary() }
    }

    /// Moves everything the recent tier's first layout holds (`recent.*`, which only a
    /// store an older build wrote has) into the main databases, in key order, and
    /// empties it. A key's recent seqs are greater than its main ones, so they are
    /// appended to its values; a recent id already in `ids` is damage, and throws.
    func fold(in txn: Transaction) throws {
        for (name, source, target) in tieredIndexes where try source.statistics(in: txn).entries > 0 {
            try txn.withCursor(source) { cursor in
                try Store.move(from: cursor, to: txn.writeCursor(target), duplicates: name != "ids")
            }
            try source.empty(in: txn)
        }
    }

    /// Copies every key from `source` to `target` (appended to a key's values, or as a
    /// new key).
    private static func move(from source: Cursor, to target: Cursor, duplicates: Bool) throws {
        var values: [UInt64] = []
        var entry = try source.first()
        while let (key, first) = entry {
            _ = try copyKey(
                key, first: first, at: source, to: target, duplicates: duplicates, values: &values,
                twice: "its id is in both ids and recent.ids")
            entry = try source.nextKey()
        }
    }

    /// Copies the key under `cursor` (`key`, whose first value is `first`) into `target`
    /// with all its values: appended to the key's values there in a duplicate-sort
    /// database, or as a new key in `ids`, where finding it already is damage (`twice`
    /// says what). `values` is scratch space; returns the entries copied.
    static func copyKey(
        _ key: UnsafeRawBufferPointer, first: UnsafeRawBufferPointer, at cursor: Cursor, to target: Cursor,
        duplicates: Bool, values: inout [UInt64], twice: String
    ) throws -> Int {
        guard duplicates else {
            guard try target.put(key, first, flags: .noOverwrite) else {
                throw StoreError.damaged(seq: first.count == 8 ? Layout.readBigEndian(first) : 0, detail: twice)
            }
            return 1
        }
        values.removeAll(keepingCapacity: true)
        if try cursor.duplicateCount() == 1 {
            values.append(first.loadUnaligned(as: UInt64.self))
        } else {
            var page = try cursor.multiple()
            while let (_, run) = page {
                for offset in stride(from: 0, to: run.count - 7, by: 8) {
                    values.append(run.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                }
                page = try cursor.nextMultiple()
            }
        }
        try values.withUnsafeBytes { try target.appendDuplicates(key, $0, size: 8) }
        return values.count
    }
}

/// Appends events inside one write transaction, keeping the chain head and the
/// per-type counters in memory until `flush`.
public final class StoreWriter {
    let store: Store
    let txn: Transaction
    let clock: () -> Timestamp
    /// Files ids and seqs in the recent tier's runs (`Store.write`'s `tiered`): an id
    /// or a reference is then looked for in the main `ids` and `refs` too.
    let tiered: Bool
    /// The tier's runs as this write has left them so far (tiered only); the last is
    /// the one it files in.
    private var tier = TierRuns()
    /// The filters of the keys of `ids` and `refs`, which this write adds to: always in
    /// a tiered write, in another only when they were good as it began.
    let runFilters: RunKeyFilters.Filters?
    /// `runFilters` in a tiered write, which looks keys up in them; nil in another.
    private let tieredFilters: RunKeyFilters.Filters?
    /// The chain head: the last seq, and its hash (kept in `headHash`).
    public var head: ChainHead {
        ChainHead(seq: headSeq, hash: Array(UnsafeRawBufferPointer(start: headHash, count: 32)))
    }
    private var headSeq: UInt64
    /// The last hash, where the next record's hash is made from it and copied to, with
    /// no array to retain per event.
    private let headHash: UnsafeMutableRawPointer
    /// Events of each type, by `EventType.rawValue - 1`: counted in place, where an
    /// array property is checked for exclusive access and uniqueness per event.
    private let counts: UnsafeMutablePointer<UInt64>
    private var storedTape = JSONTape()
    private var newTape = JSONTape()
    private let hasher = SHA256.Context()
    /// The greatest position in the `time` index, as (ordered at, seq).
    private var lastTime: (UInt64, UInt64)?
    /// Positions not filed in `time` yet, as (ordered at, seq), filed with the runs:
    /// those past `lastTime` (nearly all: events mostly come in time order) in one call.
    @exclusivity(unchecked) private var timeRun: [(UInt64, UInt64)] = []
    private var timeValues: [UInt64] = []
    private let idCursor: Cursor
    private let eventCursor: Cursor
    /// A cursor per index. Each is its own property, as are the runs below: an element
    /// read from an array is retained and released around its use, per event.
    private let timeCursor: Cursor
    private let userCursor: Cursor
    private let taskCursor: Cursor
    private let threadCursor: Cursor
    private let refCursor: Cursor
    private let unregisteredCursor: Cursor
    /// Where the newest record lies in the writable map (0 before the first): new pages
    /// are taken just past it, which `MapPrefaulter` faults in ahead of this thread.
    private(set) var newestRecord = 0
    /// The notification ids `refs` may hold (its keys, those this transaction adds
    /// included), when the ingest keeps them; nil: look in `refs` for every notification.
    var refsFilter: KeyFilter?
    /// The ids `ids` may hold (its keys, those this transaction adds included), when the
    /// ingest keeps them; nil: every id is looked up and filed at once.
    var idsFilter: KeyFilter?
    /// New ids not filed yet (only with `idsFilter`), found by `seq(of:hash:)`.
    private let pendingIDs = IndexRun(lookup: true)
    /// Entries of `users`, `tasks`, `threads` and `refs` not filed yet. All runs are
    /// filed in key order when they hold `runLimit` entries together, and at `flush`;
    /// `refs` also before it is read.
    private let userRun = IndexRun()
    private let taskRun = IndexRun()
    private let threadRun = IndexRun()
    private let refRun = IndexRun()
    var runLimit = IndexRun.defaultLimit
    /// The dictionary the last batch was compressed with and its number in this store
    /// (nil: the store has no room for another, its records are stored whole).
    private var dictionaryInUse: (RecordDictionary, UInt8?)?

    init(store: Store, txn: Transaction, clock: @escaping () -> Timestamp, tiered: Bool = false) throws {
        self.store = store
        self.txn = txn
        self.clock = clock
        let runs = tiered ? store.runs : nil
        self.tiered = runs != nil
        // The tier's first layout (only a store an older build wrote holds it) is moved
        // first, and a write to the main databases moves the runs there too: every
        // tier seq stays greater than every main one.
        if try store.olderTierEvents(in: txn) > 0 { try store.fold(in: txn) }
        let reader = StoreReader(store: store, txn: txn)
        var tier = try reader.tierRuns()
        if runs == nil, !tier.runs.isEmpty { try store.foldRuns(in: txn, runs: &tier, slices: 1) }
        let head = try reader.head()
        if runs != nil {
            if tier.runs.last.map({ $0.entries[0] >= store.runCapacity }) ?? true {
                tier.runs.append(TierRuns.Run(number: head.seq + 1, entries: TierRuns.names.map { _ in 0 }))
            }
            runFilters = try store.runFilters.filters(for: store, txn)
        } else {
            runFilters = store.runFilters.current(for: txn)
        }
        tieredFilters = runs != nil ? runFilters : nil
        self.tier = tier
        headSeq = head.seq
        let c = try reader.counts()
        let initialCounts = EventType.allCases.map { UInt64(c[$0] ?? 0) }
        var last: (UInt64, UInt64)?
        try reader.forEachPosition(reverse: true) { p in
            last = (Layout.orderedSigned(p.at.microseconds), p.seq)
            return false
        }
        lastTime = last
        idCursor = try txn.writeCursor(runs?.ids ?? store.ids)
        eventCursor = try txn.writeCursor(store.events)
        timeCursor = try txn.writeCursor(store.indexes[.time])
        userCursor = try txn.writeCursor(runs?.users ?? store.indexes[.users])
        taskCursor = try txn.writeCursor(runs?.tasks ?? store.indexes[.tasks])
        threadCursor = try txn.writeCursor(runs?.threads ?? store.indexes[.threads])
        refCursor = try txn.writeCursor(runs?.refs ?? store.indexes[.refs])
        unregisteredCursor = try txn.writeCursor(store.indexes[.unregistered])
        // After the last `try`:
        let hash = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 8)
        head.hash.withUnsafeBytes { hash.copyMemory(from: $0.baseAddress!, byteCount: 32) }
        headHash = hash
        counts = .allocate(capacity: initialCounts.count)
        counts.initialize(from: initialCounts, count: initialCounts.count)
    }

    deinit {
        headHash.deallocate()
        counts.deallocate()
    }

    /// Appends each event, or classifies it as a duplicate or conflict. Events carrying
    /// a compressed form were compressed with `dictionary`, stored with the first of
    /// them unless the store has it.
    public func append(_ batch: [PendingEvent], dictionary: RecordDictionary? = nil) throws -> [AppendOutcome] {
        let recordedAt = clock()
        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(batch.count)
        let dictionaryNumber = try dictionary.flatMap { try number(of: $0) }
        let digest = dictionaryNumber != nil ? dictionary!.digest : []
        // Borrowed through the buffer: iterating or subscripting the array copies
        // (retains and releases) every event, a few percent of the writer's time; the
        // digest too is lent for the batch, not passed as an array per event.
        try batch.withUnsafeBufferPointer { events in
            try digest.withUnsafeBytes { digest in
                // The ingest's filters hold the main databases' keys; a tiered write has
                // those of the runs instead.
                let context = BatchContext(
                    recordedAt: recordedAt, compression: dictionaryNumber.map { (number: $0, digest: digest) },
                    idsFilter: tiered ? nil : idsFilter, refsFilter: tiered ? tieredFilters?.refs : refsFilter)
                for i in events.indices {
                    if i + StoreWriter.lookAhead < events.count {
                        prefetchFilterWords(of: events.baseAddress! + i + StoreWriter.lookAhead, context)
                    }
                    let pending = events.baseAddress! + i
                    outcomes.append(
                        try pending.pointee.fields.keys.withUnsafeBytes { try append(pending, keys: $0, context) })
                }
            }
        }
        return outcomes
    }

    /// How many events ahead the writer asks for the filter words an event will need.
    static let lookAhead = 4

    /// Asks for the words of the filters (and the slot of the new ids' table) that
    /// appending `pending` will read: each is a miss in memory larger than the caches.
    @inline(__always) private func prefetchFilterWords(of pending: UnsafePointer<PendingEvent>, _ context: BatchContext)
    {
        let identity = pending.pointee.fields.identityHash
        if let ids = context.idsFilter {
            ids.prefetch(hash: identity)
            pendingIDs.prefetch(hash: identity)
        }
        if let refs = context.refsFilter {
            if pending.pointee.fields.hasReference {
                refs.prefetch(hash: pending.pointee.fields.referenceHash)
            } else if pending.pointee.fields.type == .notification {
                refs.prefetch(hash: identity)
            }
        }
    }

    /// What each event of a batch is appended with, read once for the batch and lent
    /// to each append: a class read from a property is retained and released around
    /// its use, per event.
    private struct BatchContext {
        let recordedAt: Timestamp
        /// The dictionary's number in the store and its digest, for events carrying a
        /// compressed form.
        let compression: (number: UInt8, digest: UnsafeRawBufferPointer)?
        let idsFilter: KeyFilter?
        let refsFilter: KeyFilter?
    }

    /// The number of `dictionary` in this store, storing it (and marking the store
    /// format 2) when it is new; nil when the store already holds 255.
    private func number(of dictionary: RecordDictionary) throws -> UInt8? {
        if let (d, n) = dictionaryInUse, d === dictionary { return n }
        var n = dictionary.storedID
        if n == nil {
            // Another writer may have stored the same one since: use it.
            let reader = StoreReader(store: store, txn: txn)
            let numbers = try reader.dictionaryNumbers()
            n = try numbers.first { try reader.dictionary($0)?.bytes == dictionary.bytes }
            let highest = numbers.last ?? 0
            if n == nil && highest < 255 {
                n = highest + 1
                try store.meta.put(Layout.dictionaryKey(highest + 1), dictionary.bytes, in: txn)
                try raiseFormat(to: Layout.compressedFormatVersion)
            }
        }
        dictionaryInUse = (dictionary, n)
        return n
    }

    /// Appends `pending`, whose `fields.keys` are `keys`.
    private func append(_ pending: UnsafePointer<PendingEvent>, keys: UnsafeRawBufferPointer, _ context: BatchContext)
        throws -> AppendOutcome
    {
        // Read through the pointer, never bound to a local: a local `PendingEvent` is a
        // copy, a retain for each of its strings, for every append.
        let type = pending.pointee.fields.type
        let seq = headSeq + 1
        var seqBE = seq.bigEndian
        let key = UnsafeRawBufferPointer(rebasing: keys[pending.pointee.fields.identityRange])
        let existing: UInt64?
        if let idsFilter = context.idsFilter {
            existing = try storedSeq(key, hash: pending.pointee.fields.identityHash, filter: idsFilter, reserving: seq)
        } else if let tieredFilters {
            existing = try tieredStoredSeq(
                key, hash: pending.pointee.fields.identityHash, filters: tieredFilters, reserving: seq)
        } else {
            // One search both finds an existing id and files a new one.
            existing = try withUnsafeBytes(of: &seqBE) { try idCursor.insertIfAbsent(key, $0) }.map {
                Layout.readBigEndian($0)
            }
        }
        if let existing {
            guard let value = try store.events.get(Layout.bigEndian(existing), in: txn) else {
                throw StoreError.damaged(seq: existing, detail: "its id is indexed but the event is missing")
            }
            let stored = try StoreReader(store: store, txn: txn).json(seq: existing, value: value)
            return try stored.withUnsafeBytes {
                try sameJSON($0, pending.pointee.raw, caseInsensitiveID: type == .notification)
            } ? .duplicate(existing) : .conflict(existing)
        }
        // Compressed: the dictionary's number, then the frame; otherwise the JSON. Read
        // through the pointer where they are used: a local array is a retain and a release.
        let compression = context.compression
        let compressed = compression != nil && pending.pointee.compressed != nil
        let bodyCount = compressed ? pending.pointee.compressed.unsafelyUnwrapped.count : pending.pointee.raw.count
        let bodyOffset = Layout.eventHeaderSize + (compressed ? 1 : 0)
        try withUnsafeBytes(of: &seqBE) { seqBytes in
            // The record is written in place in the map and hashed there.
            try eventCursor.reserve(seqBytes, size: bodyOffset + bodyCount, flags: .append) { value in
                newestRecord = Int(bitPattern: value.baseAddress)
                Layout.writeEventHeader(
                    type: type, compressed: compressed, recordedAt: context.recordedAt, at: pending.pointee.fields.at,
                    into: value)
                let body = value.baseAddress! + bodyOffset
                if compressed {
                    value[Layout.eventHeaderSize] = compression.unsafelyUnwrapped.number
                    pending.pointee.compressed.unsafelyUnwrapped.withUnsafeBytes {
                        body.copyMemory(from: $0.baseAddress!, byteCount: $0.count)
                    }
                } else {
                    pending.pointee.raw.withUnsafeBytes { body.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                }
                Layout.chainHash(
                    previous: UnsafeRawBufferPointer(start: headHash, count: 32), seq: seqBytes,
                    value: UnsafeRawBufferPointer(value),
                    dictionaryDigest: compressed
                        ? compression.unsafelyUnwrapped.digest : UnsafeRawBufferPointer(start: nil, count: 0),
                    context: hasher, into: value.baseAddress! + Layout.hashRange.lowerBound)
                headHash.copyMemory(from: value.baseAddress! + Layout.hashRange.lowerBound, byteCount: 32)
            }
            try fileIndexEntries(pending, keys: keys, seq: seq, seqBytes: seqBytes, refsFilter: context.refsFilter)
        }
        // A notification arriving after its 410 deliveries re-files them under its device.
        // One probe through the refs cursor that lives for the transaction settles the
        // usual case (nothing refers to a new notification yet), and the filter of refs'
        // keys, when there is one, settles most without the probe.
        if type == .notification,
            try {
                let id = UnsafeRawBufferPointer(rebasing: keys[pending.pointee.fields.identityRange])
                let mainRefs = store.indexes[.refs]
                if let tieredFilters, !tieredFilters.coversMain, try mainRefs.get(id, in: txn) != nil { return true }
                guard context.refsFilter?.mayContain(hash: pending.pointee.fields.identityHash) != false else {
                    return false
                }
                try fileRun(refRun, through: refCursor, slot: 4, duplicates: true)
                guard let tieredFilters else { return try refCursor.find(id) != nil }
                if tieredFilters.coversMain, try mainRefs.get(id, in: txn) != nil { return true }
                return try tier.runs.contains { run in
                    try store.runs!.refs.get(TierRuns.key(run.number, id), in: txn) != nil
                }
            }(),
            let device = pending.pointee.event.device
        {
            let reader = StoreReader(store: store, txn: txn)
            let unregistered = store.indexes[.unregistered]
            let idKey = Array(keys[pending.pointee.fields.identityRange])
            for refSeq in try reader.seqs(.refs, key: idKey) {
                guard let stored = try reader.event(seq: refSeq), stored.type == .delivery else { continue }
                let d = try stored.decode()
                guard let delivery = d.delivery, delivery.declaresTokenDead else { continue }
                let value = Layout.bigEndian(refSeq)
                if let own = d.device, own != device {
                    try unregistered.delete(Layout.deviceKey(own), value: value, in: txn)
                }
                try unregistered.put(Layout.deviceKey(device), value, flags: .noDuplicateData, in: txn)
            }
        }
        // A tiered write adds its keys to the filters as it looks them up.
        if !tiered, let runFilters {
            runFilters.ids.insert(hash: pending.pointee.fields.identityHash)
            if pending.pointee.fields.hasReference {
                runFilters.refs.insert(hash: pending.pointee.fields.referenceHash)
            }
        }
        headSeq = seq
        counts[Int(type.rawValue) - 1] += 1
        return .appended(seq)
    }

    /// The seq stored under the id `key` (whose hash is `hash`), looked for only where
    /// `filter` (of `ids`) says it may be; nil: the id is new, and `seq` is its own, to
    /// be filed later with its run.
    @inline(__always)
    private func storedSeq(_ key: UnsafeRawBufferPointer, hash: UInt64, filter: KeyFilter, reserving seq: UInt64) throws
        -> UInt64?
    {
        if filter.mayContain(hash: hash) {
            if let stored = pendingIDs.seq(of: key, hash: hash) { return stored }
            if let (_, value) = try idCursor.find(key) { return Layout.readBigEndian(value) }
        } else {
            filter.insert(hash: hash)
        }
        pendingIDs.add(key, seq: seq, hash: hash)
        return nil
    }

    /// Files the event in the indexes (the same entries as `Layout.indexEntries`, which
    /// `verify` checks), through long-lived cursors and without building arrays.
    private func fileIndexEntries(
        _ pending: UnsafePointer<PendingEvent>, keys: UnsafeRawBufferPointer, seq: UInt64,
        seqBytes: UnsafeRawBufferPointer,
        refsFilter: KeyFilter?
    ) throws {
        // Through the pointer, like `append`: a local `PendingEvent` would be a copy.
        let at = pending.pointee.fields.at.microseconds
        timeRun.append((Layout.orderedSigned(at), seq))
        // The others hold seqs, which only grow: always appended.
        userRun.add(UnsafeRawBufferPointer(rebasing: keys[pending.pointee.fields.userRange]), seq: seq)
        if let task = pending.pointee.fields.taskID {
            var key = Layout.orderedSigned(task).bigEndian
            withUnsafeBytes(of: &key) { taskRun.add($0, seq: seq) }
        }
        if pending.pointee.fields.hasThread {
            threadRun.add(UnsafeRawBufferPointer(rebasing: keys[pending.pointee.fields.threadRange]), seq: seq)
        }
        if pending.pointee.fields.hasReference {
            let reference = UnsafeRawBufferPointer(rebasing: keys[pending.pointee.fields.referenceRange])
            // Without a filter every new notification reads `refs`: file at once.
            if let refsFilter {
                refRun.add(reference, seq: seq)
                refsFilter.insert(hash: pending.pointee.fields.referenceHash)
            } else {
                _ = try refCursor.put(reference, seqBytes, flags: .appendDuplicate)
            }
        }
        if unfiledEntries >= runLimit { try fileRuns() }
        if let notification = pending.pointee.fields.unregisteredNotificationID,
            let device = try notificationDevice(notification) ?? pending.pointee.event.device
        {
            try Layout.deviceKey(device).withUnsafeBytes {
                _ = try unregisteredCursor.put($0, seqBytes, flags: .appendDuplicate)
            }
        }
    }

    /// Entries gathered and not filed yet, over all runs.
    private var unfiledEntries: Int {
        pendingIDs.count + userRun.count + taskRun.count + threadRun.count + refRun.count + timeRun.count
    }

    /// Files every run: the new ids, then the index entries.
    private func fileRuns() throws {
        try fileRun(pendingIDs, through: idCursor, slot: 0, duplicates: false)
        try fileRun(userRun, through: userCursor, slot: 1, duplicates: true)
        try fileRun(taskRun, through: taskCursor, slot: 2, duplicates: true)
        try fileRun(threadRun, through: threadCursor, slot: 3, duplicates: true)
        try fileRun(refRun, through: refCursor, slot: 4, duplicates: true)
        try fileTimeRun()
    }

    /// Files `run` through `cursor`: in a tiered write, in the tier's newest run (its
    /// number before each key), counted in `meta/runs` at once, so that readers in this
    /// transaction find them.
    private func fileRun(_ run: IndexRun, through cursor: Cursor, slot: Int, duplicates: Bool) throws {
        guard tiered else { return try run.file(through: cursor, duplicates: duplicates) }
        let filed = try run.file(through: cursor, duplicates: duplicates, prefix: tier.runs[tier.runs.count - 1].number)
        guard filed > 0 else { return }
        tier.runs[tier.runs.count - 1].entries[slot] += filed
        try store.writeRuns(tier, in: txn)
    }

    /// `storedSeq` for a tiered write: the seq stored under the id `key` in the main
    /// `ids`, in the runs, or new in this write, looked for only where `filters` say it
    /// may be (the main `ids` always when they do not cover it); nil: the id is new, and
    /// `seq` is its own.
    @inline(__always)
    private func tieredStoredSeq(
        _ key: UnsafeRawBufferPointer, hash: UInt64, filters: RunKeyFilters.Filters, reserving seq: UInt64
    ) throws -> UInt64? {
        let filter = filters.ids
        if !filters.coversMain, let stored = try store.ids.get(key, in: txn) { return Layout.readBigEndian(stored) }
        if filter.mayContain(hash: hash) {
            if let stored = pendingIDs.seq(of: key, hash: hash) { return stored }
            if filters.coversMain, let stored = try store.ids.get(key, in: txn) { return Layout.readBigEndian(stored) }
            let reader = StoreReader(store: store, txn: txn)
            if let stored = try reader.runValue(ofID: key, runs: tier) { return Layout.readBigEndian(stored) }
        } else {
            filter.insert(hash: hash)
        }
        pendingIDs.add(key, seq: seq, hash: hash)
        return nil
    }

    /// Files the positions of `timeRun` in `time`: those before its greatest position one
    /// by one, where they belong, and the others appended in one call.
    private func fileTimeRun() throws {
        guard !timeRun.isEmpty else { return }
        timeRun.sort { $0 < $1 }
        var late = 0
        if let last = lastTime {
            while late < timeRun.count && timeRun[late] < last { late += 1 }
        }
        try Layout.timeKey.withUnsafeBytes { key in
            for (at, seq) in timeRun[..<late] {
                var position = (at.bigEndian, seq.bigEndian)
                _ = try withUnsafeBytes(of: &position) { try timeCursor.put(key, $0) }
            }
            guard late < timeRun.count else { return }
            timeValues.removeAll(keepingCapacity: true)
            for (at, seq) in timeRun[late...] {
                timeValues.append(at.bigEndian)
                timeValues.append(seq.bigEndian)
            }
            try timeValues.withUnsafeBytes { try timeCursor.appendDuplicates(key, $0, size: 16) }
            lastTime = timeRun.last
        }
        timeRun.removeAll(keepingCapacity: true)
    }

    /// A filter of the keys of `db` (`ids` or `refs`), or nil when it holds more than
    /// `limit` entries (walking them would cost more than the look-ups it saves).
    func makeFilter(of db: Database, walkingAtMost limit: Int) throws -> KeyFilter? {
        guard try db.statistics(in: txn).entries <= limit else { return nil }
        let filter = KeyFilter()
        try txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, _) = entry {
                filter.insert(key)
                entry = try cursor.nextKey()
            }
        }
        return filter
    }

    /// Marks the store `format` unless it is marked that or higher already.
    private func raiseFormat(to format: UInt32) throws {
        let stored = try StoreReader(store: store, txn: txn).format()
        guard stored < format else { return }
        try store.meta.put(Layout.metaFormatKey, withUnsafeBytes(of: format.bigEndian) { Array($0) }, in: txn)
    }

    /// This write transaction's id: one more than the last committed one's.
    var transactionID: Int { txn.id }

    /// The device of the stored notification `id`, if it is stored and has one.
    func notificationDevice(_ id: String) throws -> String? {
        let reader = StoreReader(store: store, txn: txn)
        var id = id
        // Stored in this transaction, its id maybe not filed yet; `id` is lowercase, as
        // notification ids are filed.
        let notFiled = id.withUTF8 {
            pendingIDs.seq(of: UnsafeRawBufferPointer($0), hash: KeyFilter.hash(UnsafeRawBufferPointer($0)))
        }
        guard let seq = try notFiled ?? reader.seq(forID: id), let stored = try reader.event(seq: seq),
            stored.type == .notification
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
                        guard
                            let (_, w) = newMembers.first(where: {
                                JSONText.stringsEqual(old.nodes[k], in: stored, new.nodes[$0.key], in: newBytes)
                            })
                        else { return false }
                        if JSONText.equals(old.nodes[k], "id", in: stored), let x = old.string(v), let y = new.string(w)
                        {
                            if EventID.normalizedNotificationID(x) != EventID.normalizedNotificationID(y) {
                                return false
                            }
                        } else if !JSONView.equal(old, v, new, w) {
                            return false
                        }
                    }
                    return true
                }
            }
        }
    }

    /// Writes the chain head and counters; called once before commit. A tiered write
    /// marks the store format 3 and, while the recent tier holds `foldEvents` events or
    /// more, moves a slice of it into the main databases.
    func flush() throws {
        try fileRuns()
        if tiered {
            tier.runs.removeAll { $0.entries.allSatisfy { $0 == 0 } }
            let events = tier.entries(0)
            if events > 0 { try raiseFormat(to: Layout.runsFormatVersion) }
            if events >= store.foldEvents { try store.foldRuns(in: txn, runs: &tier, slices: Store.foldSlices) }
        }
        try store.meta.put(Layout.metaHeadKey, Layout.bigEndian(headSeq) + head.hash, in: txn)
        try store.meta.put(
            Layout.metaCountsKey,
            UnsafeBufferPointer(start: counts, count: EventType.allCases.count).flatMap { Layout.bigEndian($0) },
            in: txn)
    }
}
