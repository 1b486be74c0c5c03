import LMDBKit
import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The result of checking a store end to end.
public struct VerifyReport: Sendable, Equatable {
    public var ok: Bool { firstBadSeq == nil && problem == nil }
    /// Events checked.
    public var events: UInt64
    /// The head recomputed from the events (what `head` should say).
    public var head: ChainHead
    /// The first seq at which the log stops being what was appended.
    public var firstBadSeq: UInt64?
    /// What is wrong, in one line.
    public var problem: String?
    /// Bytes of event JSON checked (as ingested: compressed records count decompressed).
    public var bytes: Int
}

extension Store {
    /// Checks the whole chain from the events, and that the indexes hold exactly the
    /// entries the events call for, on one thread per core (`VerifyPart`).
    ///
    /// Indexes are checked by comparing, per index, an order-independent sum of entry
    /// hashes computed from the events with the same sum over the stored entries: one
    /// sequential pass over each, no random lookups. Only on a mismatch does a slower
    /// pass find the first event whose entries are wrong.
    public func verify(progress: ((UInt64) -> Void)? = nil) throws -> VerifyReport {
        try read { reader in try Verifier(reader: reader, progress: progress).run() }
    }
}

struct Verifier {
    let reader: StoreReader
    let progress: ((UInt64) -> Void)?

    func fail(_ report: inout VerifyReport, _ seq: UInt64, _ problem: String) -> VerifyReport {
        report.firstBadSeq = seq
        report.problem = problem
        return report
    }

    /// Events per work item: at least 16 items for the threads to share, at most 8,192
    /// events each (a seek per item is then nothing).
    static func rangeSize(events: UInt64) -> UInt64 { min(8192, max(32, events / 16)) }

    /// The threads that check the store: one per core, this one included, at most 8.
    static var threads: Int {
        #if canImport(Glibc) || canImport(Darwin)
            return max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        #else
            return 1
        #endif
    }

    func run() throws -> VerifyReport {
        var report = VerifyReport(events: 0, head: .empty, bytes: 0)

        // The first key must be seq 1; the ranges below start there.
        let stored = try reader.store.events.statistics(in: reader.txn).entries
        if let (key, _) = try reader.txn.withCursor(reader.store.events, { try $0.first() }) {
            guard key.count == 8 else { return fail(&report, 1, "an events key is \(key.count) bytes, not 8") }
            let seq: UInt64 = Layout.readBigEndian(key)
            if seq != 1 {
                return fail(
                    &report, 1,
                    seq > 1 ? "event seq 1 is missing (next stored is \(seq))" : "event seq \(seq) is out of order")
            }
        }

        // The work: every index's entries, then the events in ranges of seqs. An intact
        // log holds seqs 1…entries; the last range runs to the end of the database, so
        // every key is looked at whatever the keys are.
        var items = IndexDigest.names.indices.map { VerifyWork.Item.index($0) }
        let size = Verifier.rangeSize(events: UInt64(stored))
        var start: UInt64 = 1
        while stored > 0 {
            let end = start + size
            items.append(.events(start, end > UInt64(stored) ? nil : end))
            if end > UInt64(stored) { break }
            start = end
        }
        let work = VerifyWork(items: items)

        // Helpers, each in a read transaction of its own that must see this snapshot
        // (same transaction id); one that sees another, or cannot begin while the map
        // must change, takes no work.
        let snapshot = reader.txn.id
        let store = reader.store
        let helpers = (1..<Verifier.threads).map { _ in
            let part = VerifyPart()
            let thread = WorkerThread {
                do {
                    _ = try store.readIfReady { other in
                        guard other.txn.id == snapshot else { return }
                        part.run(work, reader: other)
                    }
                } catch {
                    part.error = error
                }
            }
            return (part, thread)
        }
        for (_, thread) in helpers { thread.start() }
        let mine = VerifyPart()
        mine.run(work, reader: reader, progress: progress)
        for (_, thread) in helpers { thread.join() }
        if let error = ([mine] + helpers.map(\.0)).lazy.compactMap(\.error).first { throw error }
        let parts = [mine.found] + helpers.map(\.0.found)

        // The parts together; the 410 deliveries whose device needs a lookup here.
        var expected = IndexDigest()
        var actual = IndexDigest()
        var counts = SIMD4<UInt64>()
        var broken: (UInt64, String)?
        for part in parts {
            expected.merge(part.expected)
            actual.merge(part.actual)
            counts &+= part.counts
            report.bytes += part.jsonBytes
            if let failure = part.failure, broken.map({ failure.0 < $0.0 }) ?? true { broken = failure }
        }
        report.events = UInt64(stored)
        report.head = parts.lazy.compactMap(\.last).first ?? .empty
        if broken == nil, stored > 0, report.head.seq != UInt64(stored) {
            broken = (report.head.seq + 1, "event seq \(report.head.seq + 1) is missing")
        }
        if let (seq, problem) = broken {
            // An event that no longer decodes: the log is good up to the one before it.
            report.events = seq - 1
            report.head = seq > 1 ? ChainHead(seq: seq - 1, hash: try reader.event(seq: seq - 1)?.hash ?? []) : .empty
            return fail(&report, seq, problem)
        }
        // As `Layout.indexEntries` files a 410 delivery: under its notification's device,
        // else its own.
        for part in parts {
            for (seq, delivery) in part.deferred {
                if let device = try notificationDevice(delivery.notificationID) ?? delivery.device {
                    expected.add(IndexDigest.slot(.unregistered), Layout.deviceKey(device), Layout.bigEndian(seq))
                }
            }
        }

        let recorded = try reader.head()
        if recorded != report.head {
            let seq = min(recorded.seq, report.head.seq) + 1
            return fail(
                &report, seq,
                "the recorded chain head (seq \(recorded.seq)) is not the last event's (seq \(report.head.seq))")
        }
        let storedCounts = try reader.counts()
        for type in EventType.allCases where UInt64(storedCounts[type] ?? 0) != counts[Int(type.rawValue) - 1] {
            return fail(&report, report.events, "the \(type) counter disagrees with the events")
        }

        // Indexes: compare digests, then find the first bad seq if they differ.
        for (slot, name) in IndexDigest.names.enumerated()
        where expected.sums[slot] != actual.sums[slot] || expected.counts[slot] != actual.counts[slot] {
            let seq = try firstBadIndexedSeq(name) ?? report.events
            return fail(&report, seq, "the \(name) index disagrees with the events at seq \(seq)")
        }
        // The right entries, but where readers would not find them in order.
        if let (seq, problem) = try checkRuns() { return fail(&report, seq, problem) }
        return report
    }

    /// The recent tier's runs as `meta/runs` lists them against what their databases
    /// hold: every key in a listed run, each run's entries as many as listed, and each
    /// seq at or after its run's number and before the next run's (readers take a key's
    /// seqs in run order). The first seq that breaks this (a run's number for a count)
    /// and what is wrong; nil when all holds.
    private func checkRuns() throws -> (UInt64, String)? {
        guard let runs = reader.store.runs else { return nil }
        let tier: TierRuns
        do {
            tier = try reader.tierRuns()
        } catch {
            return (1, "the list of the recent tier's runs (meta/runs) is malformed")
        }
        let numbers = tier.runs.map(\.number)
        for slot in TierRuns.names.indices {
            var counts = numbers.map { _ in 0 }
            var problem: (UInt64, String)?
            try reader.txn.withCursor(runs.database(slot)) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry, problem == nil {
                    let seq = value.count == 8 ? Layout.readBigEndian(value) : 0
                    let name = "runs.\(TierRuns.names[slot])"
                    guard key.count > TierRuns.prefixSize, let r = numbers.firstIndex(of: Layout.readBigEndian(key))
                    else {
                        problem = (max(seq, 1), "\(name) holds an entry of a run that meta/runs does not list")
                        return
                    }
                    guard seq >= numbers[r], r + 1 == numbers.count || seq < numbers[r + 1] else {
                        problem = (max(seq, 1), "\(name) files seq \(seq) in run \(numbers[r]), out of order")
                        return
                    }
                    counts[r] += 1
                    entry = try cursor.next()
                }
            }
            if let problem { return problem }
            for (r, run) in tier.runs.enumerated() where run.entries[slot] != counts[r] {
                return (
                    max(run.number, 1),
                    "run \(run.number) holds \(counts[r]) entries in runs.\(TierRuns.names[slot]), "
                        + "meta/runs lists \(run.entries[slot])"
                )
            }
        }
        return nil
    }

    /// The device of the stored notification `id` (for 410 deliveries without one).
    private func notificationDevice(_ id: String) throws -> String? {
        guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq),
            stored.type == .notification,
            let event = try? stored.decode()
        else { return nil }
        return event.device
    }

    /// Adds what the database in digest slot `slot` holds to `digest`, its recent
    /// tier's entries included: an entry is in one or the other.
    func scanIndex(_ slot: Int, into digest: inout IndexDigest) throws {
        for (db, skip) in Verifier.databases(IndexDigest.names[slot], of: reader.store) {
            if slot == IndexDigest.ids {
                try scan(db, skip: skip, slot: slot, into: &digest)
            } else {
                try scanDuplicates(db, skip: skip, slot: slot, into: &digest)
            }
        }
    }

    /// The databases that hold the index `name` (`ids` or a `Layout.Index`), each with
    /// the bytes before the index's key in its keys: the main one, and the recent
    /// tier's (its first layout, and its runs) when the store has them.
    static func databases(_ name: String, of store: Store) -> [(db: Database, skip: Int)] {
        let main = name == "ids" ? store.ids : store.indexes[Layout.Index(rawValue: name)!]
        var out = [(main, 0)] + store.tieredIndexes.filter { $0.name == name }.map { ($0.recent, 0) }
        if let runs = store.runs, let slot = TierRuns.names.firstIndex(of: name) {
            out.append((runs.database(slot), TierRuns.prefixSize))
        }
        return out
    }

    /// `key` without its first `skip` bytes (none when it is too short).
    static func trimmed(_ key: UnsafeRawBufferPointer, _ skip: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: key[min(skip, key.count)...])
    }

    private func scan(_ db: Database, skip: Int, slot: Int, into digest: inout IndexDigest) throws {
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, value) = entry {
                digest.add(slot, Verifier.trimmed(key, skip), value)
                entry = try cursor.next()
            }
        }
    }

    /// `scan` for a duplicate-sort index of fixed-size values: a key's values come a
    /// page at a time, and its bytes are hashed once for all of them.
    private func scanDuplicates(_ db: Database, skip: Int, slot: Int, into digest: inout IndexDigest) throws {
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, first) = entry {
                let state = IndexDigest.keyState(Verifier.trimmed(key, skip))
                let count = try cursor.duplicateCount()
                if count <= 4 {
                    // Few values (most `refs` keys): one move each is fewer calls.
                    digest.add(slot, keyState: state, first)
                    for _ in 1..<max(count, 1) {
                        guard let (_, value) = try cursor.nextDuplicate() else { break }
                        digest.add(slot, keyState: state, value)
                    }
                } else {
                    let size = first.count
                    var page = try cursor.multiple()
                    while let (_, values) = page {
                        var offset = 0
                        while size > 0, offset + size <= values.count {
                            digest.add(
                                slot, keyState: state,
                                UnsafeRawBufferPointer(rebasing: values[offset..<(offset + size)]))
                            offset += size
                        }
                        // Values of another size under one key (LMDB refuses them): an
                        // entry no event calls for, so the sums differ.
                        if offset != values.count {
                            digest.add(slot, keyState: state, UnsafeRawBufferPointer(rebasing: values[offset...]))
                        }
                        page = try cursor.nextMultiple()
                    }
                }
                entry = try cursor.nextKey()
            }
        }
    }

    /// The smallest seq that has a missing index entry, or that an extra or wrong entry
    /// points at.
    private func firstBadIndexedSeq(_ name: String) throws -> UInt64? {
        let store = reader.store
        var decoder = EventDecoder()
        var worst: UInt64?
        let runs = try reader.tierRuns().runs.map { Layout.bigEndian($0.number) }
        // Entries the events call for but the index lacks.
        try reader.forEachEvent { stored in
            let event = try decoder.decode(stored.raw)
            if name == "ids" {
                let got = try reader.storedID(event.identityKey)
                if got.map(Array.init) != Layout.bigEndian(stored.seq) { worst = stored.seq }
            } else {
                for (index, key) in try Layout.indexEntries(
                    of: event.filing, seq: stored.seq, notificationDevice: notificationDevice)
                where index.rawValue == name {
                    let value = Layout.indexValue(index, event.at, stored.seq)
                    let present = try Verifier.databases(name, of: store).contains { db, skip in
                        try (skip == 0 ? [[]] : runs).contains { prefix in
                            try reader.txn.withCursor(db) { cursor in
                                try (prefix + key).withUnsafeBytes { k in
                                    try value.withUnsafeBytes { v in try cursor.seek(k, value: v) }
                                }.map { Array($0.value) == value } ?? false
                            }
                        }
                    }
                    if !present { worst = stored.seq }
                }
            }
            return worst == nil
        }
        // Entries the index has but no event calls for.
        for (db, skip) in Verifier.databases(name, of: store) {
            try extraEntries(db, skip: skip, name, decoder: &decoder, worst: &worst)
        }
        return worst
    }

    /// Lowers `worst` to the seq of each entry of `db` (index `name`) that no event calls for.
    private func extraEntries(
        _ db: Database, skip: Int, _ name: String, decoder: inout EventDecoder, worst: inout UInt64?
    ) throws {
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (whole, value) = entry {
                let key = Verifier.trimmed(whole, skip)
                let seq: UInt64 =
                    value.count == 8
                    ? Layout.readBigEndian(value) : (value.count == 16 ? Layout.readBigEndian(value, at: 8) : 0)
                var ok = false
                if let stored = try reader.event(seq: seq), let event = try? decoder.decode(stored.raw) {
                    if name == "ids" {
                        ok = event.identityKey.elementsEqual(key)
                    } else {
                        ok = try Layout.indexEntries(
                            of: event.filing, seq: seq, notificationDevice: notificationDevice
                        ).contains {
                            $0.0.rawValue == name && $0.1.elementsEqual(key)
                                && Layout.indexValue($0.0, event.at, seq).elementsEqual(value)
                        }
                    }
                }
                if !ok { worst = min(worst ?? seq, max(seq, 1)) }
                entry = try cursor.next()
            }
        }
    }
}

/// What the threads of one `verify` share: the work items, handed out in order, and
/// how many events are checked so far.
final class VerifyWork: @unchecked Sendable {
    enum Item {
        /// Digest the stored entries of the database in this `IndexDigest` slot.
        case index(Int)
        /// Check the events from this seq up to (not including) that one, or to the end.
        case events(UInt64, UInt64?)
    }

    let items: [Item]
    private let monitor = Monitor()
    private var next = 0
    private var checked: UInt64 = 0
    private var stopped = false

    init(items: [Item]) { self.items = items }

    func claim() -> Item? {
        monitor.locked {
            guard !stopped, next < items.count else { return nil }
            next += 1
            return items[next - 1]
        }
    }

    /// Adds `events` checked; returns the total.
    func checked(_ events: UInt64) -> UInt64 {
        monitor.locked {
            checked += events
            return checked
        }
    }

    /// No more items for anyone (a thread failed with an error).
    func stop() { monitor.locked { stopped = true } }
}

/// One thread's share of a `verify`: it checks ranges of events (each event's chain
/// hash, then its index entries from its JSON) and digests whole indexes, as it claims
/// them, in its own read transaction of the snapshot.
///
/// An event's chain hash is `SHA-256(hash(n−1) ‖ record(n))` and every record holds its
/// own hash, so checking each event against the hash *stored* in the one before it
/// checks the whole chain, in any order: if every check passes, each stored hash is the
/// one recomputed from seq 1 (by induction from `hash(0)`), and the first failing check
/// is the first seq where the recomputed chain and the stored one part. That is what
/// lets the threads take ranges of the log at once, each event read by one core only.
final class VerifyPart: @unchecked Sendable {
    /// What the thread found; read after it is joined.
    private(set) var found = Found()
    var error: (any Error)?

    struct Found {
        /// Entries the events call for, and the entries the indexes hold.
        var expected = IndexDigest()
        var actual = IndexDigest()
        /// Events by type (`rawValue - 1`).
        var counts = SIMD4<UInt64>()
        /// Bytes of the events' JSON.
        var jsonBytes = 0
        /// The first event in this part's ranges that is missing, changed, or no longer
        /// decodes or agrees with its header.
        var failure: (UInt64, String)?
        /// 410 deliveries, by seq: their `unregistered` entry depends on a stored
        /// notification's device, looked up after the walk.
        var deferred: [(UInt64, (notificationID: String, device: String?))] = []
        /// The last event and its hash, from the part that checked the last range.
        var last: ChainHead?
    }

    func run(_ work: VerifyWork, reader: StoreReader, progress: ((UInt64) -> Void)? = nil) {
        // The work runs on a value of its own: no reference counting or exclusivity
        // checks per event.
        var checker = Checker()
        defer { found = checker.found }
        while let item = work.claim() {
            do {
                switch item {
                case .index(let slot):
                    // After a failure the digests are not compared.
                    guard checker.found.failure == nil else { continue }
                    try Verifier(reader: reader, progress: nil).scanIndex(slot, into: &checker.found.actual)
                case .events(let start, let end):
                    // Past a failure only earlier events matter: they make the answer.
                    if let failure = checker.found.failure, start > failure.0 { continue }
                    let done = work.checked(try checker.check(from: start, to: end, reader: reader))
                    progress?(done)
                }
            } catch {
                self.error = error
                work.stop()
                return
            }
        }
    }

    /// Whether an events key comes before seq `bound`'s key in LMDB's order (bytes,
    /// then the shorter first).
    static func precedes(_ key: UnsafeRawBufferPointer, _ bound: UInt64) -> Bool {
        if key.count == 8 { return Layout.readBigEndian(key) < bound }
        return withUnsafeBytes(of: bound.bigEndian) { b in
            for i in 0..<min(key.count, 8) where key[i] != b[i] { return key[i] < b[i] }
            return key.count < 8
        }
    }
}

extension VerifyPart {
    /// The thread's work and what it found so far: a value, so that nothing is
    /// reference-counted or access-checked per event.
    struct Checker {
        var found = Found()
        private let hasher = SHA256.Context()
        private var decoder = EventDecoder()
        private var scanner = IndexFieldScanner()
        private let decompressor = RecordDecompressor(holdingContext: true)
        /// The compression dictionaries by number, read as records name them, the same
        /// unretained for the walk (`dictionaries` keeps them), and their SHA-256
        /// digests (32 bytes at 32 × the number) for the chain.
        private var dictionaries = [RecordDictionary?](repeating: nil, count: 256)
        private var unretained = [Unmanaged<RecordDictionary>?](repeating: nil, count: 256)
        private let digests = Scratch(byteCount: 256 * 32)
        /// The start of the record being hashed: the previous event's hash (then this
        /// one's), its seq and its header.
        private let prefix = Scratch(byteCount: Layout.chainPrefixSize)

        private mutating func failed(_ seq: UInt64, _ problem: String) {
            if found.failure.map({ seq < $0.0 }) ?? true { found.failure = (seq, problem) }
        }

        /// Checks the events from seq `start` to the key `end` (or the end of the log);
        /// returns how many it checked.
        mutating func check(from start: UInt64, to end: UInt64?, reader: StoreReader) throws -> UInt64 {
            let prefix = self.prefix.bytes
            // Held here, so that the walk retains nothing per event.
            let hasher = self.hasher
            let digests = self.digests.bytes
            prefix.initializeMemory(as: UInt8.self, repeating: 0)
            let hash = prefix.baseAddress!
            var want = start
            try reader.txn.withCursor(reader.store.events) { cursor in
                if start > 1 {
                    // The stored hash of the event before, which this range's first event
                    // chains on. When that one is missing or malformed, the range before
                    // this one names it, a smaller seq.
                    let before = try withUnsafeBytes(of: (start - 1).bigEndian) { try cursor.find($0) }
                    if let (_, value) = before, value.count >= Layout.eventHeaderSize {
                        prefix.copyMemory(from: UnsafeRawBufferPointer(rebasing: value[Layout.hashRange]))
                    }
                }
                var entry = try withUnsafeBytes(of: start.bigEndian) { try cursor.seek($0) }
                while let (key, value) = entry {
                    if let end, !VerifyPart.precedes(key, end) { break }
                    guard key.count == 8 else {
                        failed(want, "an events key is \(key.count) bytes, not 8")
                        return
                    }
                    // LMDB puts appended entries below one another in a page: fetch
                    // where the next one lies while this one is hashed and read.
                    let below = key.baseAddress! - 8
                    for line in 1...5 { prefetch(below - 64 * line) }
                    let seq: UInt64 = Layout.readBigEndian(key)
                    if seq != want {
                        failed(
                            want,
                            seq > want
                                ? "event seq \(want) is missing (next stored is \(seq))"
                                : "event seq \(seq) is out of order")
                        return
                    }
                    guard value.count > Layout.eventHeaderSize, let (type, compressed) = Layout.recordKind(value[0]),
                        !compressed || value.count > Layout.eventHeaderSize + 1
                    else {
                        failed(seq, "event seq \(seq) has a malformed header")
                        return
                    }
                    var dictionary: Unmanaged<RecordDictionary>?
                    let digestAt = compressed ? Int(value[Layout.eventHeaderSize]) * 32 : 0
                    if compressed {
                        let number = Int(value[Layout.eventHeaderSize])
                        if unretained[number] == nil, let d = try reader.dictionary(UInt8(number)) {
                            dictionaries[number] = d
                            unretained[number] = Unmanaged.passUnretained(d)
                            d.digest.withUnsafeBytes {
                                digests.baseAddress!.advanced(by: digestAt).copyMemory(
                                    from: $0.baseAddress!, byteCount: 32)
                            }
                        }
                        guard let d = unretained[number] else {
                            failed(
                                seq, "event seq \(seq) is compressed with dictionary \(number), which the store lacks")
                            return
                        }
                        dictionary = d
                    }
                    // The new hash replaces the previous one at `hash`.
                    if compressed {
                        Layout.chainHash(
                            prefix: hash, seq: key, value: value,
                            dictionaryDigest: UnsafeRawBufferPointer(rebasing: digests[digestAt..<(digestAt + 32)]),
                            context: hasher)
                    } else {
                        Layout.chainHash(prefix: hash, seq: key, value: value, context: hasher)
                    }
                    if !JSONText.memcmpEqual(hash, value.baseAddress! + Layout.hashRange.lowerBound, 32) {
                        failed(seq, "event seq \(seq) does not match its chain hash (changed, removed or reordered)")
                        return
                    }
                    let at = Timestamp(microseconds: Layout.signedFromOrdered(Layout.readBigEndian(value, at: 9)))
                    let body = UnsafeRawBufferPointer(
                        rebasing: value[(Layout.eventHeaderSize + (compressed ? 1 : 0))...])
                    guard entries(seq: seq, type: type, at: at, body: body, dictionary: dictionary) else { return }
                    want += 1
                    entry = try cursor.next()
                }
                if let end, want < end {
                    let next = entry.flatMap { $0.key.count == 8 ? Layout.readBigEndian($0.key) as UInt64 : nil }
                    failed(want, "event seq \(want) is missing" + (next.map { " (next stored is \($0))" } ?? ""))
                } else if end == nil, want > start {
                    found.last = ChainHead(seq: want - 1, hash: Array(prefix[0..<32]))
                }
            }
            return want - start
        }

        /// Adds the index entries event `seq` calls for, read from its JSON (`body`,
        /// compressed with `dictionary` when given); false, with `failure` set, when it no
        /// longer decompresses, decodes, or agrees with its header.
        private mutating func entries(
            seq: UInt64, type: EventType, at: Timestamp, body: UnsafeRawBufferPointer,
            dictionary: Unmanaged<RecordDictionary>?
        ) -> Bool {
            var raw = body
            if let dictionary {
                guard let json = dictionary._withUnsafeGuaranteedRef({ decompressor.decompress(body, with: $0) }) else {
                    failed(seq, "event seq \(seq) no longer decompresses")
                    return false
                }
                raw = json
            }
            found.jsonBytes += raw.count
            // The fields that decide the entries, read straight from the JSON ingest
            // validated; anything unexpected goes through the full decoder below.
            if scanner.scan(raw), scanner.type == type, scanner.at == at {
                scanner.addEntries(seq: seq, to: &found.expected)
                if scanner.isUnregistration { found.deferred.append((seq, scanner.deferredUnregistration())) }
                found.counts[Int(type.rawValue) - 1] += 1
                return true
            }
            let event: FilingEvent
            do {
                event = try decoder.decodeForFiling(raw)
            } catch {
                failed(seq, "event seq \(seq) no longer decodes: \(InvalidEvent.from(error).reason)")
                return false
            }
            if event.type != type || event.at != at {
                failed(seq, "event seq \(seq) header disagrees with its JSON")
                return false
            }
            IndexFields(event).forEachEntry(seq: seq) { slot, key, value in found.expected.add(slot, key, value) }
            if event.declaresTokenDead, let ref = event.referencedNotificationID {
                found.deferred.append((seq, (ref, event.device)))
            }
            found.counts[Int(type.rawValue) - 1] += 1
            return true
        }
    }
}

extension IndexFieldScanner {
    /// Adds the last scanned event's entries to `digest`. (A closure that captured the
    /// checker's `found` while its `scanner` ran would copy the scanner per event.)
    func addEntries(seq: UInt64, to digest: inout IndexDigest) {
        forEachEntry(seq: seq) { slot, key, value in digest.add(slot, key, value) }
    }
}

/// Zeroed bytes a `Checker` keeps outside itself: it is copied in and out.
final class Scratch {
    let bytes: UnsafeMutableRawBufferPointer

    init(byteCount: Int) {
        bytes = .allocate(byteCount: byteCount, alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { bytes.deallocate() }
}

/// An order-independent digest of a multiset of index entries: per database, the
/// count and the wrapping sum of a 64-bit hash of each (key, value).
struct IndexDigest {
    /// The digested databases, by slot: `ids`, then the indexes in `Layout.Index` order
    /// (at most eight: the sums and counts are `SIMD8`s).
    static let names = ["ids"] + Layout.Index.allCases.map(\.rawValue)
    static let ids = 0
    static func slot(_ index: Layout.Index) -> Int {
        switch index {
        case .time: 1
        case .users: 2
        case .tasks: 3
        case .threads: 4
        case .refs: 5
        case .unregistered: 6
        }
    }

    /// The index of a slot other than `ids`.
    static func index(of slot: Int) -> Layout.Index { Layout.Index.allCases[slot - 1] }

    // Inline vectors rather than arrays: an array's every update checks that its
    // buffer is not shared, once per entry in `verify`'s hot loop.
    var sums = SIMD8<UInt64>()
    var counts = SIMD8<Int>()

    mutating func merge(_ other: IndexDigest) {
        sums &+= other.sums
        counts &+= other.counts
    }

    mutating func add(_ slot: Int, _ key: [UInt8], _ value: [UInt8]) {
        key.withUnsafeBytes { k in value.withUnsafeBytes { v in add(slot, k, v) } }
    }

    @inline(__always)
    mutating func add(_ slot: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        add(slot, keyState: IndexDigest.keyState(key), value)
    }

    /// Adds an entry whose key `keyState` hashed (many values of one key hash it once).
    @inline(__always)
    mutating func add(_ slot: Int, keyState: UInt64, _ value: UnsafeRawBufferPointer) {
        sums[slot] &+= IndexDigest.hash(keyState: keyState, value)
        counts[slot] += 1
    }

    // The entry hash: the key's length and bytes then the value's, eight bytes at a
    // time through a multiply-xorshift step, then splitmix64's finaliser. Only this
    // file computes it, for both sides of the comparison.

    @inline(__always) private static func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let x = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        return x ^ (x >> 29)
    }

    @inline(__always) private static func absorb(_ h: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = mix(h, UInt64(bytes.count))
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return h }
        if n < 8 {
            // Up to seven bytes as one word (two overlapping loads; the length is in `h`).
            let w: UInt64
            if n >= 4 {
                w =
                    UInt64(base.loadUnaligned(as: UInt32.self)) << 32
                    | UInt64(base.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            } else {
                w =
                    UInt64(base.load(as: UInt8.self)) << 16 | UInt64(base.load(fromByteOffset: n / 2, as: UInt8.self))
                    << 8
                    | UInt64(base.load(fromByteOffset: n - 1, as: UInt8.self))
            }
            return mix(h, w)
        }
        var i = 0
        while i + 8 <= n {
            h = mix(h, base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        // The last bytes, as the word that ends the key (overlapping the one before).
        if i < n { h = mix(h, base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) }
        return h
    }

    @inline(__always) static func keyState(_ key: UnsafeRawBufferPointer) -> UInt64 {
        absorb(0xcbf2_9ce4_8422_2325, key)
    }

    @inline(__always) static func hash(keyState: UInt64, _ value: UnsafeRawBufferPointer) -> UInt64 {
        var h = absorb(keyState ^ 0xFF, value)
        h ^= h >> 30
        h = h &* 0xbf58_476d_1ce4_e5b9
        h ^= h >> 27
        h = h &* 0x94d0_49bb_1331_11eb
        h ^= h >> 31
        return h
    }
}
