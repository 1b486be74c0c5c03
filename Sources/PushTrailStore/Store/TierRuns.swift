import LMDBKit
import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The runs of the recent tier: where small write transactions (the server's bodies,
/// a `consume` that keeps up) file the entries of `ids`, `users`, `tasks`, `threads`
/// and `refs`, until later writes move them into the main databases.
///
/// Each of those five has a database of the same shape named `runs.NAME`, whose keys
/// are a run's number (8 bytes, big-endian) followed by the main database's key. A run
/// is numbered by the seq of the first event filed in it, and a write files in the
/// newest run until it holds `capacity` ids (`StoreOptions.runCapacity`), then starts
/// the next. So a write's entries go into pages of its own run only, past every older
/// run's: the pages a commit copies are about those its entries fill, however large
/// the tier is. (Filed in one B-tree keyed by random ids, as the tier's first layout,
/// `recent.*`, did, every commit copied most of the tier's leaves.)
///
/// A key's entries are the main database's, then each run's in run order: a run holds
/// only seqs from its number on, and a fold moves a key's entries out of every run at
/// once (`Store.foldRuns`). `meta/runs` lists the runs, each with its number of
/// entries in each database; `verify` checks both against the databases.
struct TierRuns: Equatable {
    /// The tier's databases, in slot order (`RecentDatabases.database(_:)`).
    static let names = ["ids", "users", "tasks", "threads", "refs"]
    static let metaKey = Array("runs".utf8)
    /// The bytes of a run's number before each key.
    static let prefixSize = 8
    /// The ids a run takes before a write starts the next: a body of 10,000 events
    /// makes a run of its own, while small writes (a `consume` keeping up with its
    /// stream) share one, so that a look-up asks few runs.
    static let capacity = 8_192

    /// The database name of the slot whose main database is `main`.
    static func databaseName(_ main: String) -> String { "runs." + main }

    /// The slot of `index` (nil for `time` and `unregistered`, which have no tier).
    static func slot(_ index: Layout.Index) -> Int? {
        switch index {
        case .users: 1
        case .tasks: 2
        case .threads: 3
        case .refs: 4
        case .time, .unregistered: nil
        }
    }

    struct Run: Equatable {
        /// The seq of the first event filed in it.
        var number: UInt64
        /// Its entries in each database, by slot.
        var entries: [Int]
    }

    /// Oldest first.
    var runs: [Run] = []

    init() {}

    /// The runs `meta/runs` lists: per run its number, then its entries in each slot,
    /// all 8 bytes big-endian.
    init(meta value: UnsafeRawBufferPointer?) throws {
        guard let value else { return }
        let size = 8 * (1 + TierRuns.names.count)
        guard value.count % size == 0 else { throw StoreError.damaged(seq: 0, detail: "meta/runs is malformed") }
        for offset in stride(from: 0, to: value.count, by: size) {
            let number: UInt64 = Layout.readBigEndian(value, at: offset)
            let entries = TierRuns.names.indices.map {
                Int(truncatingIfNeeded: Layout.readBigEndian(value, at: offset + 8 * ($0 + 1)) as UInt64)
            }
            guard runs.last.map({ $0.number < number }) ?? true, entries.allSatisfy({ $0 >= 0 }) else {
                throw StoreError.damaged(seq: 0, detail: "meta/runs is malformed")
            }
            runs.append(Run(number: number, entries: entries))
        }
    }

    var encoded: [UInt8] {
        runs.flatMap { run in Layout.bigEndian(run.number) + run.entries.flatMap { Layout.bigEndian(UInt64($0)) } }
    }

    /// Entries in slot `slot`, over every run.
    func entries(_ slot: Int) -> Int { runs.reduce(0) { $0 + $1.entries[slot] } }

    /// `key` in run `number`'s keys.
    static func key(_ number: UInt64, _ key: UnsafeRawBufferPointer) -> [UInt8] {
        Layout.bigEndian(number) + Array(key)
    }

    static func key(_ number: UInt64, _ key: [UInt8]) -> [UInt8] { Layout.bigEndian(number) + key }
}

/// What one writing process knows of the keys of `ids` and `refs`: a filter of the
/// ids and one of the notification ids that actions and deliveries name, those of the
/// tier's runs and, unless the main databases are too large for the filters to stay
/// selective, the main databases' too. A new event's id (nearly always new) and a new
/// notification (nearly never named yet) are then known to be absent without a look-up
/// in each run, nor (`coversMain`) in the main database.
///
/// Keys only ever move from the runs to the main databases, so the filters stay good
/// for the store as this process's last write left it (`coveredTransaction`), a write
/// to the main databases adding its keys too (a `consume` takes turns of both); if
/// another transaction committed since (another process), a tiered write rebuilds them
/// from the databases. A writer uses them inside its transaction, which no other writer
/// can run beside; a server also builds them from a reader as it starts.
final class RunKeyFilters: @unchecked Sendable {
    struct Filters {
        let ids: KeyFilter
        let refs: KeyFilter
        /// The filters hold the main databases' keys too.
        let coversMain: Bool
    }

    /// Held while the filters are handed out, built or marked.
    private let monitor = Monitor()
    private var filters: Filters?
    /// Times the filters were built (for tests).
    private(set) var builds = 0
    /// The transaction after whose commit the filters hold every key they cover.
    private var coveredTransaction = -1
    /// The main databases' ids up to which they are covered: at 4M keys, about 3% of
    /// the look-ups the filter lets through are false alarms (`KeyFilter`).
    static let mainLimit = 1 << 22

    /// The filters for write transaction `txn` if they hold every key it may meet, and
    /// no rebuilding: for a write to the main databases, which adds its keys to them.
    func current(for txn: Transaction) -> Filters? {
        monitor.locked { coveredTransaction == txn.id - 1 ? filters : nil }
    }

    /// The filters for write transaction `txn`, rebuilt when they may miss a key.
    func filters(for store: Store, _ txn: Transaction) throws -> Filters {
        try monitor.locked {
            if let filters, coveredTransaction == txn.id - 1, filters.ids.insertions < 2 * RunKeyFilters.mainLimit {
                return filters
            }
            return try build(store, txn)
        }
    }

    /// Marks the filters as holding what write transaction `id` filed into `used`, as
    /// it commits; unless they are no longer those (a reader built others meanwhile,
    /// which lack what it filed): then the next write rebuilds them. Should the
    /// transaction not commit, the next one has the same id, and rebuilds them too.
    func cover(_ id: Int, _ used: Filters) {
        monitor.locked { if filters?.ids === used.ids { coveredTransaction = id } }
    }

    /// Builds the filters from the snapshot of read transaction `txn`, unless they
    /// cover that snapshot or a later one already: a server does so as it starts, so
    /// that its first append need not.
    func prepare(_ store: Store, _ txn: Transaction) throws {
        try monitor.locked {
            guard coveredTransaction < txn.id else { return }
            _ = try build(store, txn)
            coveredTransaction = txn.id
        }
    }

    /// New filters of the keys `txn` sees (called with the monitor held).
    private func build(_ store: Store, _ txn: Transaction) throws -> Filters {
        let coversMain = try store.ids.statistics(in: txn).entries <= RunKeyFilters.mainLimit
        let made = Filters(ids: KeyFilter(), refs: KeyFilter(), coversMain: coversMain)
        var sources: [(Database, Int, KeyFilter)] = []
        if let runs = store.runs {
            sources += [(runs.ids, TierRuns.prefixSize, made.ids), (runs.refs, TierRuns.prefixSize, made.refs)]
        }
        if coversMain { sources += [(store.ids, 0, made.ids), (store.indexes[.refs], 0, made.refs)] }
        for (db, skip, filter) in sources {
            try txn.withCursor(db) { cursor in
                var entry = try cursor.first()
                while let (key, _) = entry {
                    filter.insert(UnsafeRawBufferPointer(rebasing: key[min(skip, key.count)...]))
                    entry = try cursor.nextKey()
                }
            }
        }
        filters = made
        builds += 1
        return made
    }
}

extension Store {
    /// Builds, on a thread of its own, the filters of the store's ids and notification
    /// ids that tiered writes use (`RunKeyFilters`), so that a server's first append
    /// does not wait for them. Best effort: a write builds them itself if need be.
    public func prepareAppendFilters() {
        let thread = WorkerThread { [self] in try? prepareAppendFiltersNow() }
        if thread.tryStart() { thread.detach() }
    }

    /// `prepareAppendFilters` on this thread.
    func prepareAppendFiltersNow() throws {
        try read { reader in try runFilters.prepare(self, reader.txn) }
    }
}

extension StoreReader {
    /// The runs of the recent tier (none in a store without them).
    func tierRuns() throws -> TierRuns {
        guard store.runs != nil else { return TierRuns() }
        return try TierRuns(meta: store.meta.get(TierRuns.metaKey, in: txn))
    }

    /// The value of the id `key` in the runs, newest first.
    func runValue(ofID key: UnsafeRawBufferPointer, runs tier: TierRuns) throws -> UnsafeRawBufferPointer? {
        guard let runs = store.runs else { return nil }
        for run in tier.runs.reversed() where run.entries[0] > 0 {
            if let raw = try runs.ids.get(TierRuns.key(run.number, key), in: txn) { return raw }
        }
        return nil
    }

    /// The distinct keys of slot `slot` that the runs hold, without their runs' numbers,
    /// in key order.
    func runKeys(_ slot: Int) throws -> [[UInt8]] {
        guard let runs = store.runs else { return [] }
        var keys: [[UInt8]] = []
        try txn.withCursor(runs.database(slot)) { cursor in
            var entry = try cursor.first()
            while let (key, _) = entry {
                keys.append(Array(key[TierRuns.prefixSize...]))
                entry = try cursor.nextKey()
            }
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        var unique: [[UInt8]] = []
        unique.reserveCapacity(keys.count)
        for key in keys where key != unique.last { unique.append(key) }
        return unique
    }
}

extension Store {
    /// Moves entries of the tier's runs into the main databases: all of them
    /// (`slices` 1), or, of each of the five databases, whole keys holding about
    /// `1/slices` of its entries, in key order from where the last slice of that
    /// database stopped (`meta/fold.NAME`) to the end of the key range at most. A key's
    /// entries leave every run at once, each run's appended after the main database's
    /// and the older runs'; an id in two places is damage, and throws. Updates `tier`
    /// and `meta/runs`.
    ///
    /// The keys of a slice lie in about `1/slices` of the main databases' key range, so
    /// a slice copies about that share of their leaves, and the runs' pages it empties.
    func foldRuns(in txn: Transaction, runs tier: inout TierRuns, slices: Int) throws {
        guard let runs else { return }
        for slot in TierRuns.names.indices {
            let total = tier.entries(slot)
            guard total > 0 else { continue }
            let name = TierRuns.names[slot]
            let main = slot == 0 ? ids : indexes[Layout.Index(rawValue: name)!]
            let move = RunMove(
                source: runs.database(slot), target: try txn.writeCursor(main), duplicates: slot != 0, txn: txn)
            let positionKey = Array("fold.\(name)".utf8)
            var start: [UInt8]?
            var end: [UInt8]?
            if slices > 1 {
                start = try meta.get(positionKey, in: txn).map(Array.init)
                // The slice ends where the runs together have given its share. Not where
                // one run has given its own: ids such as `a-…-12917` grow with time, so
                // each run holds its own stretch of keys.
                end = try move.end(
                    of: tier.runs.filter { $0.entries[slot] > 0 }.map(\.number), from: start,
                    quota: (total + slices - 1) / slices)
            }
            for r in tier.runs.indices where tier.runs[r].entries[slot] > 0 {
                tier.runs[r].entries[slot] -= try move.move(
                    run: tier.runs[r].number, from: start, through: end, deleting: slices > 1)
            }
            if slices == 1 {
                try runs.database(slot).empty(in: txn)
            } else if let end {
                try meta.put(positionKey, end, in: txn)
            } else {
                _ = try meta.delete(positionKey, in: txn)
            }
        }
        tier.runs.removeAll { $0.entries.allSatisfy { $0 == 0 } }
        try writeRuns(tier, in: txn)
    }

    /// Writes `meta/runs` (deletes it when there is no run).
    func writeRuns(_ tier: TierRuns, in txn: Transaction) throws {
        if tier.runs.isEmpty {
            _ = try meta.delete(TierRuns.metaKey, in: txn)
        } else {
            try meta.put(TierRuns.metaKey, tier.encoded, in: txn)
        }
    }
}

/// Moves the keys of one run, in a database of the tier's runs, into its main database.
private struct RunMove {
    let source: Database
    let target: Cursor
    let duplicates: Bool
    let txn: Transaction

    /// The key at which the runs numbered `numbers`, walked together in key order from
    /// the first key at or after `start` (the first without), have given `quota`
    /// entries; nil if they end first. Nothing is written meanwhile, so each cursor's
    /// key stays where LMDB gave it.
    func end(of numbers: [UInt64], from start: [UInt8]?, quota: Int) throws -> [UInt8]? {
        var cursors: [Cursor] = []
        var runs: [UInt64] = []
        var keys: [UnsafeRawBufferPointer] = []
        for number in numbers {
            let cursor = try txn.writeCursor(source)
            let entry = try TierRuns.key(number, start ?? []).withUnsafeBytes { try cursor.seek($0) }
            guard let (key, _) = entry, RunMove.inRun(key, number) else { continue }
            cursors.append(cursor)
            runs.append(number)
            keys.append(key)
        }
        // A heap of the cursors by their keys (without the runs' numbers), smallest first.
        func less(_ a: Int, _ b: Int) -> Bool {
            let x = keys[a]
            let y = keys[b]
            let p = TierRuns.prefixSize
            return IndexRun.compare(x.baseAddress! + p, x.count - p, y.baseAddress! + p, y.count - p) < 0
        }
        var heap = Array(cursors.indices)
        func siftDown(_ from: Int) {
            var i = from
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < heap.count && less(heap[l], heap[m]) { m = l }
                if r < heap.count && less(heap[r], heap[m]) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
        var given = 0
        while let top = heap.first {
            given += duplicates ? try cursors[top].duplicateCount() : 1
            if given >= quota { return Array(keys[top][TierRuns.prefixSize...]) }
            if let (key, _) = try cursors[top].nextKey(), RunMove.inRun(key, runs[top]) {
                keys[top] = key
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { siftDown(0) }
        }
        return nil
    }

    /// Whether `key` is one of run `number`'s.
    static func inRun(_ key: UnsafeRawBufferPointer, _ number: UInt64) -> Bool {
        key.count > TierRuns.prefixSize && Layout.readBigEndian(key) == number
    }

    /// Copies run `number`'s keys from the first at or after `start` (the first without)
    /// through `end` (to the run's end without) into the main database, appended to a
    /// key's values there or as a new key, deleting each from the run with `deleting`;
    /// the entries moved.
    func move(run number: UInt64, from start: [UInt8]?, through end: [UInt8]?, deleting: Bool) throws -> Int {
        var moved = 0
        var values: [UInt64] = []
        let cursor = try txn.writeCursor(source)
        var entry = try TierRuns.key(number, start ?? []).withUnsafeBytes { try cursor.seek($0) }
        while let (whole, first) = entry, RunMove.inRun(whole, number) {
            let key = UnsafeRawBufferPointer(rebasing: whole[TierRuns.prefixSize...])
            if let end, IndexRun.compare(key.baseAddress!, key.count, end, end.count) > 0 { break }
            moved += try Store.copyKey(
                key, first: first, at: cursor, to: target, duplicates: duplicates, values: &values,
                twice: "its id is filed twice in the ids index")
            guard deleting else {
                entry = try cursor.nextKey()
                continue
            }
            // LMDB leaves the cursor on the entry after the one deleted, which its next
            // move gives.
            try cursor.deleteCurrent(allDuplicates: duplicates)
            entry = try cursor.nextKey()
        }
        return moved
    }
}
