import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where events are read from: a file or standard input.
public struct InputSource: Sendable {
    /// The name used in messages (`FILE:LINE`); `-` for standard input.
    public var name: String
    public var path: String?

    public static let standardInput = InputSource(name: "stdin", path: nil)
    public static func file(_ path: String) -> InputSource { InputSource(name: path, path: path) }

    func open() throws -> Int32 {
        guard let path else { return 0 }
        let fd = Glibc_open(path)
        if fd < 0 {
            throw StoreError.io("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw StoreError.io("cannot read \(path): it is a directory")
        }
        return fd
    }
}

@inline(__always) private func Glibc_open(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}

/// A line that was not stored, and why.
public struct Rejection: Error, Sendable, Equatable {
    public var source: String
    public var line: Int
    public var reason: String
    /// The line byte for byte, without its `\n`.
    public var raw: [UInt8]
    /// Whether it was refused because its id is stored with different content.
    public var isConflict: Bool
    /// Its place in the whole input, for reporting in order.
    var ordinal = 0
}

/// What an ingest did (the `--json` summary).
public struct IngestSummary: Sendable, Equatable, Codable {
    public var read = 0
    public var appended = 0
    public var duplicates = 0
    public var conflicts = 0
    public var rejected = 0
    public var firstSeq: UInt64?
    public var lastSeq: UInt64?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case read, appended, duplicates, conflicts, rejected
        case firstSeq = "first_seq"
        case lastSeq = "last_seq"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(read, forKey: .read)
        try c.encode(appended, forKey: .appended)
        try c.encode(duplicates, forKey: .duplicates)
        try c.encode(conflicts, forKey: .conflicts)
        try c.encode(rejected, forKey: .rejected)
        try c.encode(firstSeq, forKey: .firstSeq)
        try c.encode(lastSeq, forKey: .lastSeq)
    }
}

/// How an ingest runs.
public struct IngestOptions: Sendable {
    /// All or nothing: the first bad line (or conflict) stores nothing of this run.
    public var strict = false
    /// Events per write transaction at most (one commit, two syncs each): one per 512
    /// bytes of `batchBytes`. Large transactions rewrite the randomly placed index pages
    /// less often, and each commit waits for the disk to take the pages it changed;
    /// their pages are the map's, so their size costs no memory (docs/PERFORMANCE.md).
    public var batchEvents = IngestOptions.defaultBatchBytes / 512
    /// Raw bytes per write transaction at most: a sixteenth of the machine's memory,
    /// from 128 MiB to 1 GiB. A transaction dirties map pages in proportion to what it
    /// brings, and the kernel starts writing dirty pages back at a tenth of memory (its
    /// default): past that it would write pages the transaction still changes, then
    /// write them again at the commit.
    public var batchBytes = IngestOptions.defaultBatchBytes
    /// Let a transaction grow to a quarter of the store's size when that is more than
    /// `batchBytes` (and its events in proportion): every transaction rewrites about
    /// half of the random-keyed index leaves, and a large store has more of them.
    public var scaleWithStore = true
    /// Events and raw bytes per batch handed from the parsing thread to the writing
    /// one: what bounds the memory an ingest holds, whatever its transactions.
    public var handoffEvents = 8192
    public var handoffBytes = 8 << 20
    /// Compress records with the store's dictionary (docs/STORE.md). A store without
    /// one gets one trained on the first `dictionarySamples` events of an ingest that
    /// brings that many; the events before it are stored whole.
    public var compress = true
    public var dictionarySamples = 1000
    /// Threads that read and decode beside the writing one (at least one).
    public var parsingThreads = Ingest.parsingThreads
    /// Index entries a transaction gathers before filing them in key order (`IndexRun`).
    public var indexRunEntries = IndexRun.defaultLimit

    static let defaultBatchBytes: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        let memory = pages > 0 && pageSize > 0 ? Int(pages) * Int(pageSize) : 0
        return min(max(memory / 16, 128 << 20), 1 << 30)
    }()

    /// Handoffs never span a transaction's end: a transaction is whole handoffs.
    var handoffLimit: (events: Int, bytes: Int) { (min(handoffEvents, batchEvents), min(handoffBytes, batchBytes)) }

    public init() {}
}

/// Appends NDJSON events from files or standard input to a store.
///
/// Lines are read and decoded on a second thread while this one writes the previous
/// batch, so parsing and LMDB's work overlap on two cores; a bounded queue keeps
/// memory constant whatever the input size. One write transaction takes handoffs
/// until it holds `batchEvents` or `batchBytes`, or until the next handoff is not
/// ready: the writer never waits for a pipe holding the writers' lock, and slow input
/// is committed as it comes (regular files are waited for while a transaction has its
/// unscaled size: their lines are only being parsed). Rejections reach `onReject` in input order, and the
/// totals `onProgress`, once the transaction holding their lines has committed.
public final class Ingest {
    let store: Store
    let sources: [InputSource]
    let options: IngestOptions
    let clock: @Sendable () -> Timestamp
    public var onReject: (Rejection) -> Void = { _ in }
    /// Called as lines are appended, with the running totals (including a transaction
    /// not yet committed) and bytes read.
    public var onProgress: (IngestSummary, Int) -> Void = { _, _ in }

    public init(store: Store, sources: [InputSource], options: IngestOptions, clock: @escaping @Sendable () -> Timestamp) {
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
        // through them. Alternating 1M-event runs with one parsing thread: 12.33 → 11.39 s
        // median, ~12 MB more at the peak.
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
            let scale = options.scaleWithStore ? max(1, Double(store.fileBytes) / Double(4 * options.batchBytes)) : 1
            let maxEvents = Int(Double(options.batchEvents) * scale)
            let maxBytes = Int(Double(options.batchBytes) * scale)
            try store.makeRoom(for: maxBytes)
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
                    let outcomes = try batch.events.isEmpty ? [] : writer.append(batch.events, dictionary: batch.dictionary)
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
                    if done.events >= maxEvents || done.rawBytes >= maxBytes
                        || done.rejections.count >= options.handoffEvents
                    {
                        return
                    }
                    switch queue.tryPop() {
                    case .item(let b): batch = b
                    case .empty:
                        // Lines from regular files are only being parsed: wait for them
                        // rather than commit early. An early commit makes the next
                        // transaction copy the random-keyed index pages again and take
                        // its pages from the freed ones, scattered, instead of in order
                        // past the end (which `MapPrefaulter` faults in ahead); 1M events:
                        // four or five commits instead of one. Not past the unscaled size: a
                        // transaction scaled with a large store, left uncut, outgrows
                        // the kernel's write-back threshold and has its pages written
                        // while it still changes them (10M events: 168 → 198 s). A
                        // pipe's next lines may not come for a while: commit what is here.
                        guard readsFiles, scale == 1 else { return }
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

    private func report(_ rejection: Rejection, into summary: inout IngestSummary) {
        if rejection.isConflict { summary.conflicts += 1 } else { summary.rejected += 1 }
        onReject(rejection)
    }

    private func tally(_ outcome: AppendOutcome, _ pending: UnsafePointer<PendingEvent>, into summary: inout IngestSummary) {
        switch outcome {
        case .appended(let seq):
            summary.appended += 1
            if summary.firstSeq == nil { summary.firstSeq = seq }
            summary.lastSeq = seq
        case .duplicate:
            summary.duplicates += 1
        case .conflict(let seq):
            report(Ingest.conflict(pending.pointee, seq), into: &summary)
        }
    }

    static func conflict(_ pending: PendingEvent, _ seq: UInt64) -> Rejection {
        Rejection(
            source: pending.source, line: pending.line,
            reason: "id \"\(EventDecoder.shown(pending.event.id))\" is already stored as seq \(seq) with different content (a conflict); give this event a new id",
            raw: pending.hadCarriageReturn ? pending.raw + [0x0D] : pending.raw, isConflict: true, ordinal: pending.ordinal)
    }

    // MARK: - Strict (all or nothing)

    private struct StrictStop: Error {
        let rejection: Rejection
        /// Lines read before the stop.
        var read = 0
    }

    private func runStrict() throws -> IngestSummary {
        // Standard input cannot be read twice, and a retry after the map grows must
        // start over: spool it to a private file first.
        var spooled: String?
        defer { if let spooled { unlink(spooled) } }
        let inputs = try sources.map { source -> InputSource in
            guard source.path == nil else { return source }
            let path = try Ingest.spool(standardInputInto: store.path)
            spooled = path
            return InputSource(name: source.name, path: path)
        }
        var result = IngestSummary()
        // Records are compressed with the store's dictionary when it has one; an
        // all-or-nothing ingest does not train one.
        let compressor = options.compress ? try store.latestDictionary().flatMap { RecordCompressor(dictionary: $0) } : nil
        do {
            result = try store.write(recordedAt: clock) { writer in
                var summary = IngestSummary()
                var decoder = EventDecoder()
                var bytesRead = 0
                for source in inputs {
                    let fd = try source.open()
                    defer { close(fd) }
                    let reader = LineReader(fd: fd)
                    var batch: [PendingEvent] = []
                    func flush() throws {
                        compressor?.compress(&batch)
                        let outcomes = try writer.append(batch, dictionary: compressor?.dictionary)
                        try batch.withUnsafeBufferPointer { events in
                            for i in outcomes.indices {
                                if case .conflict(let seq) = outcomes[i] {
                                    throw StrictStop(rejection: Ingest.conflict(events[i], seq), read: summary.read)
                                }
                                tally(outcomes[i], events.baseAddress! + i, into: &summary)
                            }
                        }
                        batch.removeAll(keepingCapacity: true)
                        onProgress(summary, bytesRead + reader.bytesRead)
                    }
                    while let line = try reader.next() {
                        guard !Ingest.isBlank(line.bytes) else { continue }
                        summary.read += 1
                        switch Ingest.decode(line, source: source.name, decoder: &decoder) {
                        case .success(let pending): batch.append(pending)
                        case .failure(let rejection): throw StrictStop(rejection: rejection, read: summary.read)
                        }
                        if batch.count >= options.handoffLimit.events { try flush() }
                    }
                    try flush()
                    bytesRead += reader.bytesRead
                }
                return summary
            }
        } catch let stop as StrictStop {
            var summary = IngestSummary()
            summary.read = stop.read
            report(stop.rejection, into: &summary)
            return summary
        }
        return result
    }

    static func spool(standardInputInto directory: String) throws -> String {
        var template = Array((directory + "/.stdin-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw StoreError.io("cannot spool standard input in \(directory): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw StoreError.io("cannot read standard input: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            var off = 0
            while off < n {
                let w = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + off, n - off) }
                if w < 0 && errno == EINTR { continue }
                if w < 0 { throw StoreError.io("cannot spool standard input: \(String(cString: strerror(errno)))") }
                off += w
            }
        }
        return path
    }

    // MARK: - Shared

    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    static func decode(_ line: InputLine, source: String, ordinal: Int = 0, decoder: inout EventDecoder) -> Result<PendingEvent, Rejection> {
        let content = line.content
        if line.truncated {
            return .failure(Rejection(
                source: source, line: line.number,
                reason: "line is over \(line.bytes.count) bytes, far over the limit of \(EventDecoder.maxLineBytes) (64 KiB); only its start was read",
                raw: line.bytes, isConflict: false, ordinal: ordinal))
        }
        do {
            let event = try decoder.decodeForFiling(content)
            // The line's own array when it has no `\r` to drop: no copy.
            let raw = line.hasCarriageReturn ? Array(content) : line.bytes
            var pending = PendingEvent(event: event, raw: raw, source: source, line: line.number)
            pending.ordinal = ordinal
            pending.hadCarriageReturn = line.hasCarriageReturn
            return .success(pending)
        } catch {
            return .failure(Rejection(
                source: source, line: line.number, reason: InvalidEvent.from(error).reason, raw: line.bytes, isConflict: false, ordinal: ordinal))
        }
    }
}

/// A batch handed from the reading thread to the writing one.
struct Batch: Sendable {
    var events: [PendingEvent] = []
    /// Bytes of the events' raw lines.
    var rawBytes = 0
    var rejections: [Rejection] = []
    var lines = 0
    var bytesRead = 0
    var error: StoreError?
    /// What the events' compressed forms were compressed with.
    var dictionary: RecordDictionary?
}

/// Reads lines in chunks and decodes and compresses them into batches, on one or more
/// threads of its own (`run` is each thread's body).
///
/// The lines are read under a lock, one chunk (a handoff's worth) at a time, and each
/// chunk is numbered; the thread that read it decodes and compresses it alone and hands
/// it to `queue`, which gives the writer the batches in chunk order. So the order of
/// events, seqs and rejections is the input's whatever thread decoded what, and with
/// two cores the parsing uses whichever core the writer leaves idle: the writer and
/// the parsing take turns at bounding an ingest (docs/PERFORMANCE.md). While the store
/// has no dictionary yet, chunks are decoded under the lock, one after another, until
/// the sample is complete and the dictionary trained; input that trickles in (a pipe)
/// is decoded under the lock too, as it comes.
final class Producer: @unchecked Sendable {
    let sources: [(InputSource, Int32)]
    let options: IngestOptions
    let queue: OrderedQueue<Batch>
    /// Events the writer has appended, to be freed on a parsing thread.
    let spent: HandBackQueue<[PendingEvent]>
    /// Faults in the writer's next map pages after each handoff (Linux).
    let prefaulter: MapPrefaulter?

    /// Guards everything below: the input, the numbering and the dictionary.
    private let input = Monitor()
    private var sourceIndex = 0
    private var reader: LineReader?
    /// Bytes read from the sources before the current one.
    private var readBefore = 0
    private var ordinal = 0
    private var nextChunk = 0
    /// The chunk being read.
    private var pending = Chunk()
    /// No chunk is left to read: the input ended, failed, or the writer has gone.
    private var finished = false
    /// What new records are compressed with; nil while there is none.
    private var dictionary: RecordDictionary?
    /// Events kept to train a dictionary on, while the store has none.
    private var samples: [[UInt8]]? = nil
    private var sampleBytes = 0

    /// Lines read for one handoff, with where they came from.
    struct Chunk {
        var number = 0
        var lines: [InputLine] = []
        /// The index in `sources` of each line's source.
        var sourceOf: [Int] = []
        var firstOrdinal = 0
        var bytes = 0
        var bytesRead = 0
        var error: StoreError?
    }

    /// What one parsing thread keeps between chunks.
    final class Worker {
        var decoder = EventDecoder()
        var compressor: RecordCompressor?
    }

    init(
        sources: [(InputSource, Int32)], options: IngestOptions, dictionary: RecordDictionary?, queue: OrderedQueue<Batch>,
        spent: HandBackQueue<[PendingEvent]>, prefaulter: MapPrefaulter? = nil
    ) {
        self.sources = sources
        self.prefaulter = prefaulter
        self.options = options
        self.queue = queue
        self.spent = spent
        self.dictionary = dictionary
        if options.compress && dictionary == nil { samples = [] }
    }

    /// One parsing thread: reads, decodes and hands off chunks until none is left.
    func run() {
        let worker = Worker()
        defer { queue.producerFinished() }
        while true {
            input.lock()
            guard !finished && !queue.isCancelled else {
                input.unlock()
                return
            }
            let chunk = read(worker)
            let dictionary = dictionary
            if samples != nil {
                // Until the dictionary is trained, one chunk after another.
                hand(decode(chunk, worker, sampling: true))
                input.unlock()
            } else {
                input.unlock()
                hand(decode(chunk, worker, dictionary: dictionary))
            }
        }
    }

    /// Reads the next chunk; called with the lock held. Sets `finished` when the input
    /// ends or fails.
    private func read(_ worker: Worker) -> Chunk {
        let limit = options.handoffLimit
        // Input that trickles in (a pipe from a live server) is stored as it comes, not
        // when a chunk fills: what is read is decoded (by this thread, which holds the
        // lock) and handed off before a read waits.
        let beforeWaiting = { [unowned self] in
            guard !pending.lines.isEmpty else { return }
            pending.bytesRead = readBefore + (reader?.bytesRead ?? 0)
            hand(decode(take(), worker, sampling: samples != nil, dictionary: dictionary))
        }
        reader?.beforeWaiting = beforeWaiting
        defer { reader?.beforeWaiting = nil }  // it holds this thread's decoder, and the reader
        while pending.lines.count < limit.events && pending.bytes < limit.bytes {
            if reader == nil {
                guard sourceIndex < sources.count else {
                    finished = true
                    break
                }
                reader = LineReader(fd: sources[sourceIndex].1)
                reader!.beforeWaiting = beforeWaiting
            }
            let reader = reader!
            do {
                guard let line = try reader.next() else {
                    readBefore += reader.bytesRead
                    reader.beforeWaiting = nil
                    self.reader = nil
                    sourceIndex += 1
                    continue
                }
                guard !Ingest.isBlank(line.bytes) else { continue }
                if pending.lines.isEmpty { pending.firstOrdinal = ordinal + 1 }
                ordinal += 1
                pending.bytes += line.bytes.count
                pending.lines.append(line)
                pending.sourceOf.append(sourceIndex)
            } catch {
                pending.error = error as? StoreError ?? .io("\(error)")
                finished = true
                break
            }
        }
        pending.bytesRead = readBefore + (reader?.bytesRead ?? 0)
        if finished, let reader {
            reader.beforeWaiting = nil
            self.reader = nil
        }
        return take()
    }

    /// The chunk read so far, numbered; a new one starts.
    private func take() -> Chunk {
        var chunk = pending
        chunk.number = nextChunk
        nextChunk += 1
        pending = Chunk()
        pending.lines.reserveCapacity(min(options.handoffLimit.events, 1 << 16))
        return chunk
    }

    /// Decodes a chunk's lines and compresses its events: with `dictionary`, or, while
    /// `sampling` (with the lock held), with the one trained once the sample is complete.
    private func decode(_ chunk: Chunk, _ worker: Worker, sampling: Bool = false, dictionary: RecordDictionary? = nil) -> (Int, Batch) {
        var batch = Batch()
        batch.events.reserveCapacity(chunk.lines.count)
        batch.lines = chunk.lines.count
        batch.bytesRead = chunk.bytesRead
        batch.error = chunk.error
        var bytes = 0
        for i in chunk.lines.indices {
            let source = sources[chunk.sourceOf[i]].0.name
            switch Ingest.decode(chunk.lines[i], source: source, ordinal: chunk.firstOrdinal + i, decoder: &worker.decoder) {
            case .success(let pending):
                bytes += pending.raw.count
                batch.events.append(pending)
            case .failure(let rejection):
                batch.rejections.append(rejection)
            }
        }
        batch.rawBytes = bytes
        var dictionary = dictionary
        if sampling { dictionary = sample(batch.events) }
        if let dictionary {
            if worker.compressor?.dictionary !== dictionary { worker.compressor = RecordCompressor(dictionary: dictionary) }
            if let compressor = worker.compressor {
                batch.dictionary = dictionary
                compressor.compress(&batch.events)
            }
        }
        return (chunk.number, batch)
    }

    /// Keeps events for the dictionary (at most 8 MiB of them) and trains it once enough
    /// have come; called with the lock held. The dictionary to compress with, if any.
    private func sample(_ events: [PendingEvent]) -> RecordDictionary? {
        guard var kept = samples else { return dictionary }
        for e in events where kept.count < options.dictionarySamples && sampleBytes < 8 << 20 {
            kept.append(e.raw)
            sampleBytes += e.raw.count
        }
        samples = kept
        if kept.count >= options.dictionarySamples || sampleBytes >= 8 << 20 {
            samples = nil
            dictionary = RecordDictionary.train(kept)
        }
        return dictionary
    }

    /// Hands a decoded chunk to the writer (unless it has gone: then the queue is
    /// cancelled, which stops every parsing thread), then does the work that follows a
    /// handoff. Takes no lock of this producer's: it is called with it held or not.
    private func hand(_ numbered: (Int, Batch)) {
        guard queue.push(numbered.1, number: numbered.0) else { return }
        prefaulter?.populate()
        while spent.tryPop() != nil {}
    }
}

/// Batches numbered 0, 1, 2… by several producers, given to one consumer in that order.
/// A producer waits while its batch is `capacity` or more ahead of the next one due,
/// so at most `capacity` wait here. `pop` returns nil once every producer has finished
/// and all they handed in has been taken.
final class OrderedQueue<Element: Sendable>: @unchecked Sendable {
    private let monitor = Monitor()
    private var waiting: [Int: Element] = [:]
    private var next = 0
    private let capacity: Int
    private var producers: Int
    private var cancelled = false

    init(capacity: Int, producers: Int) {
        self.capacity = capacity
        self.producers = producers
    }

    /// Blocks while `number` is too far ahead; false when the consumer has gone.
    func push(_ item: Element, number: Int) -> Bool {
        monitor.locked {
            while number >= next + capacity && !cancelled { monitor.wait() }
            guard !cancelled else { return false }
            waiting[number] = item
            monitor.broadcast()
            return true
        }
    }

    /// A producer has handed in everything it will.
    func producerFinished() {
        monitor.locked {
            producers -= 1
            monitor.broadcast()
        }
    }

    enum Poll {
        case item(Element)
        /// Nothing yet; more may come.
        case empty
        /// Every producer has finished, and all they handed in has been taken.
        case finished
    }

    /// Takes the next batch without waiting.
    func tryPop() -> Poll {
        monitor.locked {
            if let item = takeNext() { return .item(item) }
            return producers == 0 ? .finished : .empty
        }
    }

    func pop() -> Element? {
        monitor.locked {
            while true {
                if let item = takeNext() { return item }
                if producers == 0 || cancelled { return nil }
                monitor.wait()
            }
        }
    }

    /// The batch due next, if it is here; call with the lock held.
    private func takeNext() -> Element? {
        guard let item = waiting.removeValue(forKey: next) else { return nil }
        next += 1
        monitor.broadcast()  // a producer may wait for room
        return item
    }

    /// The consumer has gone.
    var isCancelled: Bool { monitor.locked { cancelled } }

    func cancel() {
        monitor.locked {
            cancelled = true
            waiting.removeAll()
            monitor.broadcast()
        }
    }
}

/// Items handed from one thread to others, taken without waiting (the writer hands
/// appended events back to the parsing threads, to be freed there).
final class HandBackQueue<Element: Sendable>: @unchecked Sendable {
    private let monitor = Monitor()
    private var items: [Element] = []

    func push(_ item: Element) {
        monitor.locked { items.append(item) }
    }

    /// The oldest item, or nil when there is none.
    func tryPop() -> Element? {
        monitor.locked { items.isEmpty ? nil : items.removeFirst() }
    }
}
