import PushTrailModel

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
    private var samples: DictionarySample?

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
        sources: [(InputSource, Int32)], options: IngestOptions, dictionary: RecordDictionary?,
        queue: OrderedQueue<Batch>, spent: HandBackQueue<[PendingEvent]>, prefaulter: MapPrefaulter? = nil
    ) {
        self.sources = sources
        self.prefaulter = prefaulter
        self.options = options
        self.queue = queue
        self.spent = spent
        self.dictionary = dictionary
        if options.compress && dictionary == nil { samples = DictionarySample(wanted: options.dictionarySamples) }
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
        let limit = TransactionPolicy.handoffLimit(options)
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
        pending.lines.reserveCapacity(min(TransactionPolicy.handoffLimit(options).events, 1 << 16))
        return chunk
    }

    /// Decodes a chunk's lines and compresses its events: with `dictionary`, or, while
    /// `sampling` (with the lock held), with the one trained once the sample is complete.
    private func decode(
        _ chunk: Chunk, _ worker: Worker, sampling: Bool = false, dictionary: RecordDictionary? = nil
    ) -> (Int, Batch) {
        var batch = Batch()
        batch.events.reserveCapacity(chunk.lines.count)
        batch.lines = chunk.lines.count
        batch.bytesRead = chunk.bytesRead
        batch.error = chunk.error
        var bytes = 0
        for i in chunk.lines.indices {
            let source = sources[chunk.sourceOf[i]].0.name
            let ordinal = chunk.firstOrdinal + i
            switch Ingest.decode(chunk.lines[i], source: source, ordinal: ordinal, decoder: &worker.decoder) {
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
            if worker.compressor?.dictionary !== dictionary {
                worker.compressor = RecordCompressor(dictionary: dictionary)
            }
            if let compressor = worker.compressor {
                batch.dictionary = dictionary
                compressor.compress(&batch.events)
            }
        }
        return (chunk.number, batch)
    }

    /// Keeps events for the dictionary and trains it once enough have come; called with
    /// the lock held. The dictionary to compress with, if any.
    private func sample(_ events: [PendingEvent]) -> RecordDictionary? {
        if samples?.add(events) == true {
            dictionary = samples?.train()
            samples = nil
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
