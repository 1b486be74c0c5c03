import LMDBKit

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
    /// Recomputes the whole chain from the events, and checks that the indexes hold
    /// exactly the entries the events call for.
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

    func run() throws -> VerifyReport {
        let store = reader.store
        let txn = reader.txn
        var report = VerifyReport(events: 0, head: .empty, bytes: 0)
        var broken: (UInt64, String)?
        let hasher = SHA256.Context()
        // The previous event's hash at `current`, the one being computed in the other half.
        let hashes = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { hashes.deallocate() }
        hashes.initializeMemory(as: UInt8.self, repeating: 0)
        hashes.copyBytes(from: ChainHead.empty.hash)
        var current = 0

        // This thread walks the chain, which is sequential; reading the events to
        // recompute their index entries is not, so chunks of events go to a worker,
        // and this thread reads a chunk itself only when the worker is behind (its
        // queue is full), and helps with what is queued once the walk is done. Their
        // digests are sums, so the order they are added in does not matter. The
        // values stay mapped, unchanged, for as long as this read transaction lives.
        let worker = ChunkDecoder()
        var mine = ChunkDecoder.Result()
        var decoder = EventDecoder(full: false)
        var scanner = IndexFieldScanner()
        let decompressor = RecordDecompressor()
        // The compression dictionaries by number, read as records name them.
        var dictionaries = [RecordDictionary?](repeating: nil, count: 256)
        // Their SHA-256 digests, 32 bytes at 32 × the number, for the chain.
        var digests = [UInt8](repeating: 0, count: 256 * 32)
        var chunk = ChunkDecoder.Chunk()
        chunk.items.reserveCapacity(ChunkDecoder.chunkSize)
        let queue = ChunkQueue(capacity: 4)
        // The worker first digests the indexes in its own read transaction (when it
        // sees the same snapshot), meanwhile this thread reads the chunks itself.
        let indexes = IndexScan(reader: reader)
        let thread = WorkerThread {
            indexes.run()
            worker.drain(queue)
        }
        thread.start()
        func dispatch() {
            guard !chunk.items.isEmpty else { return }
            if !queue.tryPush(chunk) {
                ChunkDecoder.decode(chunk, into: &mine, decoder: &decoder, scanner: &scanner, decompressor: decompressor)
            }
            chunk = ChunkDecoder.Chunk()
            chunk.items.reserveCapacity(ChunkDecoder.chunkSize)
        }

        do {
            try txn.withCursor(store.events) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry {
                    guard key.count == 8 else {
                        broken = (report.events + 1, "an events key is \(key.count) bytes, not 8")
                        return
                    }
                    let seq = Layout.readBigEndian(key)
                    let want = report.events + 1
                    if seq != want {
                        broken = (want, seq > want ? "event seq \(want) is missing (next stored is \(seq))" : "event seq \(seq) is out of order")
                        return
                    }
                    guard value.count > Layout.eventHeaderSize, let (type, compressed) = Layout.recordKind(value[0]),
                        !compressed || value.count > Layout.eventHeaderSize + 1
                    else {
                        broken = (seq, "event seq \(seq) has a malformed header")
                        return
                    }
                    // Unretained: `dictionaries` keeps them until the worker is joined.
                    var dictionary: Unmanaged<RecordDictionary>?
                    if compressed {
                        let number = Int(value[Layout.eventHeaderSize])
                        if dictionaries[number] == nil {
                            dictionaries[number] = try reader.dictionary(UInt8(number))
                            if let d = dictionaries[number] { digests.replaceSubrange((number * 32)..<(number * 32 + 32), with: d.digest) }
                        }
                        guard let d = dictionaries[number] else {
                            broken = (seq, "event seq \(seq) is compressed with dictionary \(number), which the store lacks")
                            return
                        }
                        dictionary = Unmanaged.passUnretained(d)
                    }
                    // The hash into the other half of `hashes`, which becomes `previous`.
                    let hash = hashes.baseAddress! + (current ^ 32)
                    let previous = UnsafeRawBufferPointer(rebasing: hashes[current..<(current + 32)])
                    if compressed {
                        let start = Int(value[Layout.eventHeaderSize]) * 32
                        digests.withUnsafeBytes { table in
                            Layout.chainHash(
                                previous: previous, seq: key, value: value,
                                dictionaryDigest: UnsafeRawBufferPointer(rebasing: table[start..<(start + 32)]), context: hasher,
                                into: hash)
                        }
                    } else {
                        Layout.chainHash(previous: previous, seq: key, value: value, context: hasher, into: hash)
                    }
                    if !JSONText.memcmpEqual(hash, value.baseAddress! + Layout.hashRange.lowerBound, 32) {
                        broken = (seq, "event seq \(seq) does not match its chain hash (changed, removed or reordered)")
                        return
                    }
                    let at = Timestamp(microseconds: Layout.signedFromOrdered(Layout.readBigEndian(value, at: 9)))
                    chunk.items.append(ChunkDecoder.Item(
                        seq: seq, type: type, at: at,
                        raw: UnsafeRawBufferPointer(rebasing: value[(Layout.eventHeaderSize + (compressed ? 1 : 0))...]),
                        dictionary: dictionary))
                    if chunk.items.count == ChunkDecoder.chunkSize { dispatch() }
                    current ^= 32
                    report.events = seq
                    if seq % 65536 == 0 { progress?(seq) }
                    entry = try cursor.next()
                }
            }
        } catch {
            queue.close()
            thread.join()
            withExtendedLifetime(dictionaries) {}
            throw error
        }
        dispatch()
        queue.close()
        while let queued = queue.tryPop() {
            ChunkDecoder.decode(queued, into: &mine, decoder: &decoder, scanner: &scanner, decompressor: decompressor)
        }
        thread.join()
        withExtendedLifetime(dictionaries) {}  // the queued items held them unretained
        let previous = Array(hashes[current..<(current + 32)])

        // Both halves, and the 410 deliveries whose device needs a lookup here.
        var expected = mine.digest
        expected.merge(worker.result.digest)
        var counts = [UInt64](repeating: 0, count: EventType.allCases.count)
        for (i, n) in mine.counts.enumerated() { counts[i] = n + worker.result.counts[i] }
        report.bytes = mine.jsonBytes + worker.result.jsonBytes
        let failures = [broken, mine.failure, worker.result.failure].compactMap { $0 }
        if let first = failures.min(by: { $0.0 < $1.0 }) { broken = first }
        // As `Layout.indexEntries` files a 410 delivery: under its notification's device,
        // else its own.
        for (seq, delivery) in mine.deferred + worker.result.deferred where broken.map({ seq < $0.0 }) ?? true {
            if let device = try notificationDevice(delivery.notificationID) ?? delivery.device {
                expected.add(IndexDigest.slot(.unregistered), Layout.deviceKey(device), Layout.bigEndian(seq))
            }
        }
        report.head = ChainHead(seq: report.events, hash: previous)
        if let (seq, problem) = broken {
            // An event that no longer decodes: the log is good up to the one before it.
            if seq <= report.events {
                report.events = seq - 1
                report.head = seq > 1 ? ChainHead(seq: seq - 1, hash: try reader.event(seq: seq - 1)?.hash ?? []) : .empty
            }
            return fail(&report, seq, problem)
        }

        let stored = try reader.head()
        if stored != report.head {
            let seq = min(stored.seq, report.head.seq) + 1
            return fail(&report, seq, "the recorded chain head (seq \(stored.seq)) is not the last event's (seq \(report.head.seq))")
        }
        let storedCounts = try reader.counts()
        for type in EventType.allCases where UInt64(storedCounts[type] ?? 0) != counts[Int(type.rawValue) - 1] {
            return fail(&report, report.events, "the \(type) counter disagrees with the events")
        }

        // Indexes: compare digests, then find the first bad seq if they differ.
        var actual = IndexDigest()
        if let digest = indexes.digest {
            actual = digest
        } else {
            try scanIndexes(into: &actual)
        }
        for (slot, name) in IndexDigest.names.enumerated()
        where expected.sums[slot] != actual.sums[slot] || expected.counts[slot] != actual.counts[slot] {
            let seq = try firstBadIndexedSeq(name) ?? report.events
            return fail(&report, seq, "the \(name) index disagrees with the events at seq \(seq)")
        }
        return report
    }

    /// The device of the stored notification `id` (for 410 deliveries without one).
    private func notificationDevice(_ id: String) throws -> String? {
        guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq), stored.type == .notification,
            let event = try? stored.decode()
        else { return nil }
        return event.device
    }

    /// The digest of what the indexes hold.
    func scanIndexes(into digest: inout IndexDigest) throws {
        try scan(reader.store.ids, slot: IndexDigest.ids, into: &digest)
        for index in Layout.Index.allCases {
            try scanDuplicates(reader.store.indexes[index]!, slot: IndexDigest.slot(index), into: &digest)
        }
    }

    private func scan(_ db: Database, slot: Int, into digest: inout IndexDigest) throws {
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, value) = entry {
                digest.add(slot, key, value)
                entry = try cursor.next()
            }
        }
    }

    /// `scan` for a duplicate-sort index of fixed-size values: a key's values come a
    /// page at a time, and its bytes are hashed once for all of them.
    private func scanDuplicates(_ db: Database, slot: Int, into digest: inout IndexDigest) throws {
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, first) = entry {
                let state = IndexDigest.keyState(key)
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
                            digest.add(slot, keyState: state, UnsafeRawBufferPointer(rebasing: values[offset..<(offset + size)]))
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
        // Entries the events call for but the index lacks.
        try reader.forEachEvent { stored in
            let event = try decoder.decode(stored.raw)
            if name == "ids" {
                let got = try store.ids.get(event.identityKey, in: reader.txn)
                if got.map(Array.init) != Layout.bigEndian(stored.seq) { worst = stored.seq }
            } else {
                for (index, key) in try Layout.indexEntries(of: event, seq: stored.seq, notificationDevice: notificationDevice)
                where index.rawValue == name {
                    let value = Layout.indexValue(index, event.at, stored.seq)
                    let present = try reader.txn.withCursor(store.indexes[index]!) { cursor in
                        try key.withUnsafeBytes { k in
                            try value.withUnsafeBytes { v in try cursor.seek(k, value: v) }
                        }.map { Array($0.value) == value } ?? false
                    }
                    if !present { worst = stored.seq }
                }
            }
            return worst == nil
        }
        // Entries the index has but no event calls for.
        let db = name == "ids" ? store.ids : store.indexes[Layout.Index(rawValue: name)!]!
        try reader.txn.withCursor(db) { cursor in
            var entry = try cursor.first()
            while let (key, value) = entry {
                let seq: UInt64 = value.count == 8 ? Layout.readBigEndian(value) : (value.count == 16 ? Layout.readBigEndian(value, at: 8) : 0)
                var ok = false
                if let stored = try reader.event(seq: seq), let event = try? decoder.decode(stored.raw) {
                    if name == "ids" {
                        ok = event.identityKey.elementsEqual(key)
                    } else {
                        ok = try Layout.indexEntries(of: event, seq: seq, notificationDevice: notificationDevice).contains {
                            $0.0.rawValue == name && $0.1.elementsEqual(key) && Layout.indexValue($0.0, event.at, seq).elementsEqual(value)
                        }
                    }
                }
                if !ok { worst = min(worst ?? seq, max(seq, 1)) }
                entry = try cursor.next()
            }
        }
        return worst
    }
}

/// An order-independent digest of a multiset of index entries: per database, the
/// count and the wrapping sum of a 64-bit hash of each (key, value).
/// Decodes chunks of stored events into index digests, on the thread that drains a
/// queue of them (see `Verifier.run`).
final class ChunkDecoder: @unchecked Sendable {
    static let chunkSize = 2048

    struct Item {
        var seq: UInt64
        var type: EventType
        var at: Timestamp
        /// The record's body, in the map of the verifying read transaction: the event's
        /// JSON, or its zstd frame when `dictionary` is set.
        var raw: UnsafeRawBufferPointer
        /// Unretained (no reference counting per event): the verifier holds it.
        var dictionary: Unmanaged<RecordDictionary>?
    }

    struct Chunk: @unchecked Sendable {
        var items: [Item] = []
    }

    struct Result {
        var digest = IndexDigest()
        var counts = [UInt64](repeating: 0, count: EventType.allCases.count)
        /// Bytes of the events' JSON.
        var jsonBytes = 0
        /// The first event in this half that no longer decodes or disagrees with its
        /// header.
        var failure: (UInt64, String)?
        /// 410 deliveries, by seq: their `unregistered` entry depends on a stored
        /// notification's device, looked up in the transaction by its own thread.
        var deferred: [(UInt64, (notificationID: String, device: String?))] = []
    }

    /// What the worker found; read after it is joined.
    private(set) var result = Result()

    func drain(_ queue: ChunkQueue) {
        var decoder = EventDecoder(full: false)
        var scanner = IndexFieldScanner()
        let decompressor = RecordDecompressor()
        while let chunk = queue.pop() {
            ChunkDecoder.decode(chunk, into: &result, decoder: &decoder, scanner: &scanner, decompressor: decompressor)
        }
    }

    static func decode(
        _ chunk: Chunk, into result: inout Result, decoder: inout EventDecoder, scanner: inout IndexFieldScanner,
        decompressor: RecordDecompressor
    ) {
        for var item in chunk.items {
            // Past a failure only earlier events matter: they make the answer.
            if let failure = result.failure, item.seq > failure.0 { return }
            if let dictionary = item.dictionary {
                guard let json = dictionary._withUnsafeGuaranteedRef({ decompressor.decompress(item.raw, with: $0) }) else {
                    result.failure = (item.seq, "event seq \(item.seq) no longer decompresses")
                    return
                }
                item.raw = json
            }
            result.jsonBytes += item.raw.count
            // The fields that decide the entries, read straight from the JSON ingest
            // validated; anything unexpected goes through the full decoder below.
            if scanner.scan(item.raw), scanner.type == item.type, scanner.at == item.at {
                scanner.forEachEntry(seq: item.seq) { slot, key, value in result.digest.add(slot, key, value) }
                if scanner.isUnregistration { result.deferred.append((item.seq, scanner.deferredUnregistration())) }
                result.counts[Int(item.type.rawValue) - 1] += 1
                continue
            }
            let event: Event
            do {
                event = try decoder.decode(item.raw)
            } catch {
                result.failure = (item.seq, "event seq \(item.seq) no longer decodes: \(InvalidEvent.from(error).reason)")
                return
            }
            if event.type != item.type || event.at != item.at {
                result.failure = (item.seq, "event seq \(item.seq) header disagrees with its JSON")
                return
            }
            for (index, key) in Layout.indexEntries(of: event, seq: item.seq, notificationDevice: { _ in nil })
            where index != .unregistered {
                result.digest.add(IndexDigest.slot(index), key, Layout.indexValue(index, event.at, item.seq))
            }
            if let d = event.delivery, Layout.isUnregistration(d) {
                result.deferred.append((item.seq, (d.notificationID, event.device)))
            }
            result.digest.add(IndexDigest.ids, event.identityKey, Layout.bigEndian(item.seq))
            result.counts[Int(item.type.rawValue) - 1] += 1
        }
    }
}

/// The indexes' digest, computed on the worker thread in a read transaction of its
/// own, which must see the same snapshot as the verifying one (same transaction id);
/// otherwise, or on any error, `digest` stays nil and the verifying thread scans the
/// indexes itself after the walk.
final class IndexScan: @unchecked Sendable {
    private let reader: StoreReader
    /// Read after the worker is joined.
    private(set) var digest: IndexDigest?

    init(reader: StoreReader) { self.reader = reader }

    func run() {
        let snapshot = reader.txn.id
        digest = try? reader.store.read { other -> IndexDigest? in
            guard other.txn.id == snapshot else { return nil }
            var digest = IndexDigest()
            try Verifier(reader: other, progress: nil).scanIndexes(into: &digest)
            return digest
        }
    }
}

/// The chunks waiting for the worker: `tryPush` refuses when full (the walking thread
/// then reads the chunk itself) instead of waiting.
final class ChunkQueue: @unchecked Sendable {
    private let monitor = Monitor()
    private var items: [ChunkDecoder.Chunk] = []
    private let capacity: Int
    private var closed = false

    init(capacity: Int) { self.capacity = capacity }

    func tryPush(_ chunk: ChunkDecoder.Chunk) -> Bool {
        monitor.locked {
            guard items.count < capacity else { return false }
            items.append(chunk)
            monitor.broadcast()
            return true
        }
    }

    /// The next chunk, waiting for one; nil once closed and drained.
    func pop() -> ChunkDecoder.Chunk? {
        monitor.locked {
            while items.isEmpty && !closed { monitor.wait() }
            return items.isEmpty ? nil : items.removeFirst()
        }
    }

    /// The next chunk if one is queued.
    func tryPop() -> ChunkDecoder.Chunk? {
        monitor.locked { items.isEmpty ? nil : items.removeFirst() }
    }

    func close() {
        monitor.locked {
            closed = true
            monitor.broadcast()
        }
    }
}

struct IndexDigest {
    /// The digested databases, by slot: `ids`, then the indexes in `Layout.Index` order.
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

    var sums = [UInt64](repeating: 0, count: names.count)
    var counts = [Int](repeating: 0, count: names.count)

    mutating func merge(_ other: IndexDigest) {
        for slot in sums.indices {
            sums[slot] &+= other.sums[slot]
            counts[slot] += other.counts[slot]
        }
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
        guard n > 0 else { return h }
        let base = bytes.baseAddress!
        var i = 0
        while i + 8 <= n {
            h = mix(h, base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        if i < n {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                w |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
            h = mix(h, w)
        }
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
