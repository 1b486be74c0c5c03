import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends NDJSON events from files or standard input to a store. This file is the
/// coordinator: it opens the inputs, starts the parsing threads (`Producer`) and
/// writes their handoffs in transactions that `TransactionPolicy` sizes; the
/// all-or-nothing ingest runs apart (`runStrict`).
///
/// Lines are read and decoded on a second thread while this one writes the previous
/// batch, so parsing and LMDB's work overlap on two cores; a bounded queue keeps
/// memory constant whatever the input size. One write transaction takes handoffs
/// until it holds `batchEvents` or `batchBytes`, or until the next handoff is not
/// ready: the writer never waits for a pipe holding the writers' lock, and slow input
/// is committed as it comes (regular files are waited for while a transaction has its
/// unscaled size: their lines are only being parsed). Rejections reach `onReject` in
/// input order, and the totals `onProgress`, once the transaction holding their lines
/// has committed.
public final class Ingest {
    let store: Store
    let sources: [InputSource]
    let options: IngestOptions
    let clock: @Sendable () -> Timestamp
    public var onReject: (Rejection) -> Void = { _ in }
    /// Called as lines are appended, with the running totals (including a transaction
    /// not yet committed) and bytes read.
    public var onProgress: (IngestSummary, Int) -> Void = { _, _ in }

    public init(
        store: Store, sources: [InputSource], options: IngestOptions, clock: @escaping @Sendable () -> Timestamp
    ) {
        self.store = store
        self.sources = sources
        self.options = options
        self.clock = clock
    }

    /// Runs the ingest to the end of the input and returns what it did.
    public func run() throws -> IngestSummary {
        options.strict ? try runStrict() : try runPipelined()
    }

    // MARK: - Pipelined (default)

    /// Threads that parse beside the writer by default: one per core, at most three.
    /// With two cores, two parsing threads and the writer share them, so the parsing
    /// takes the core the writer leaves idle while it waits (and the other way round).
    public static let parsingThreads = max(1, min(3, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private func runPipelined() throws -> IngestSummary {
        let fds = try sources.map { try $0.open() }
        // Each input's size when it is a regular file; nil for a pipe or terminal.
        let fileSizes = fds.map { fd -> Int? in
            var st = stat()
            return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
        }
        let readsFiles = fileSizes.allSatisfy { $0 != nil }
        // Two handoffs may wait: the writer's and the parsing's speeds vary (commits,
        // stretches of notifications), and a second slot lets the parsing run ahead
        // through them (docs/PERFORMANCE.md), for a little more memory at the peak.
        let parsers = max(1, options.parsingThreads)
        let queue = OrderedQueue<Batch>(capacity: 2, producers: parsers)
        let dictionary = options.compress ? try store.latestDictionary() : nil
        // Appended events go back to the parsing threads to be freed there: this thread
        // bounds the ingest, and freeing another thread's allocations costs glibc more.
        let spent = HandBackQueue<[PendingEvent]>()
        let prefaulter = MapPrefaulter.make()
        let producer = Producer(
            sources: Array(zip(sources, fds)), options: options, dictionary: dictionary, queue: queue, spent: spent,
            prefaulter: prefaulter)
        let threads = (0..<parsers).map { _ in WorkerThread { producer.run() } }
        for thread in threads { thread.start() }
        defer {
            queue.cancel()
            for thread in threads { thread.join() }
            for fd in fds where fd != 0 { close(fd) }
        }

        // The keys of `refs` and `ids` (KeyFilter), kept across this ingest's transactions
        // while no other writer commits between them. Walked from the store when it has
        // fewer entries than four per event the input may hold (about one per 512 bytes
        // of a regular file; none for a pipe, unless the database is empty). With the
        // `ids` filter, new ids are filed in key order with the index entries (IndexRun).
        var refsFilter: KeyFilter?
        var idsFilter: KeyFilter?
        var filterThrough = Int.min  // the last committed transaction the filter covers
        let inputBytes = fileSizes.reduce(0) { $0 + ($1 ?? 0) }
        var summary = IngestSummary()
        var next = queue.pop()
        var inputEnded = next == nil
        while next != nil {
            var batch = next!
            next = nil  // `batch` holds the only reference: its events can be handed back
            let policy = TransactionPolicy(options, storeBytes: store.fileBytes)
            try store.makeRoom(for: policy.maxBytes)
            // What the transaction did, applied once it has committed.
            var done = Committed()
            var failure: StoreError?
            var transaction = 0
            try store.write(recordedAt: clock, retryingWhenFull: false) { writer in
                transaction = writer.transactionID
                if filterThrough == Int.min {
                    refsFilter = try writer.makeFilter(of: store.indexes[.refs], walkingAtMost: 4 * inputBytes / 512)
                    idsFilter = try writer.makeFilter(of: store.ids, walkingAtMost: 4 * inputBytes / 512)
                } else if transaction != filterThrough + 1 {
                    // Another writer committed since: its keys are not in them.
                    refsFilter = nil
                    idsFilter = nil
                }
                writer.refsFilter = refsFilter
                writer.idsFilter = idsFilter
                writer.runLimit = options.indexRunEntries
                // The map may move between transactions: the parser stops populating it.
                defer { prefaulter?.pause() }
                let usedBytes = store.fileBytes
                while true {
                    if let error = batch.error {
                        failure = error  // commit what came before, then report it
                        return
                    }
                    let outcomes =
                        try batch.events.isEmpty ? [] : writer.append(batch.events, dictionary: batch.dictionary)
                    done.add(batch, outcomes)
                    prefaulter?.advance(to: writer.newestRecord, usedBytes: usedBytes)
                    spent.push(batch.events)
                    batch.events = []
                    // Progress as the transaction fills (it can take seconds).
                    var soFar = summary
                    soFar.read += done.lines
                    soFar.appended += done.appended
                    soFar.duplicates += done.duplicates
                    onProgress(soFar, done.bytesRead)
                    if policy.isFull(events: done.events, rawBytes: done.rawBytes, rejections: done.rejections.count) {
                        return
                    }
                    switch queue.tryPop() {
                    case .item(let b): batch = b
                    case .empty:
                        // Regular files' lines are only being parsed: wait for them, up
                        // to the unscaled size; a pipe's may not come for a while
                        // (`TransactionPolicy.waitsForNextHandoff` says why).
                        guard policy.waitsForNextHandoff(readsFiles: readsFiles) else { return }
                        guard let b = queue.pop() else {
                            inputEnded = true
                            return
                        }
                        batch = b
                    case .finished:
                        inputEnded = true
                        return
                    }
                }
            }
            filterThrough = transaction
            summary.read += done.lines
            for r in done.rejections { report(r, into: &summary) }
            summary.appended += done.appended
            summary.duplicates += done.duplicates
            if let seq = done.firstSeq, summary.firstSeq == nil { summary.firstSeq = seq }
            if let seq = done.lastSeq { summary.lastSeq = seq }
            if let failure { throw failure }
            onProgress(summary, done.bytesRead)
            if !inputEnded {
                next = queue.pop()
                inputEnded = next == nil
            }
        }
        return summary
    }

    /// The outcome of one write transaction's handoffs: counts, and the rejections and
    /// conflicts in input order.
    private struct Committed {
        var events = 0
        var rawBytes = 0
        var lines = 0
        var bytesRead = 0
        var appended = 0
        var duplicates = 0
        var firstSeq: UInt64?
        var lastSeq: UInt64?
        var rejections: [Rejection] = []

        mutating func add(_ batch: Batch, _ outcomes: [AppendOutcome]) {
            events += batch.events.count
            rawBytes += batch.rawBytes
            lines += batch.lines
            bytesRead = batch.bytesRead
            var parsed = batch.rejections[...]
            batch.events.withUnsafeBufferPointer { events in  // borrowed: zip would copy every event
                for i in outcomes.indices {
                    switch outcomes[i] {
                    case .appended(let seq):
                        appended += 1
                        if firstSeq == nil { firstSeq = seq }
                        lastSeq = seq
                    case .duplicate:
                        duplicates += 1
                    case .conflict(let seq):
                        while let r = parsed.first, r.ordinal < events[i].ordinal {
                            rejections.append(r)
                            parsed = parsed.dropFirst()
                        }
                        rejections.append(Ingest.conflict(events[i], seq))
                    }
                }
            }
            rejections.append(contentsOf: parsed)
        }
    }

    func report(_ rejection: Rejection, into summary: inout IngestSummary) {
        if rejection.isConflict { summary.conflicts += 1 } else { summary.rejected += 1 }
        onReject(rejection)
    }
}
