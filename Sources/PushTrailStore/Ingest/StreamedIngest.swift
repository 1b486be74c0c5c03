import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends an NDJSON body that arrives in pieces (an HTTP request's): each line is
/// decoded as soon as it is complete, with `ingest`'s rules and words, and the good
/// events are appended in one write transaction when the body ends, so a body is
/// stored whole or not at all (a refused write, a kill, a strict stop). Only the
/// decoded events are kept until then, never the body itself.
public final class StreamedIngest {
    /// What was done, for the answer: the totals and the first `maxRejects` rejections
    /// (without their raw lines), in line order.
    public struct Outcome: Sendable {
        public var summary = IngestSummary()
        public var rejects: [Rejection] = []
        /// Rejections beyond `maxRejects`, counted but not listed.
        public var omittedRejects = 0
    }

    /// An all-or-nothing body stopped at its first bad line (or conflict): nothing is stored.
    public struct StrictStop: Error, Sendable {
        public let rejection: Rejection
    }

    let store: Store
    let strict: Bool
    let source: String
    let maxRejects: Int
    /// Lines longer than this are cut (they are refused anyway, being over 64 KiB), so a
    /// connection holds at most this much of a line.
    let maxLine = 1 << 20
    private var decoder = EventDecoder()
    private var line: [UInt8] = []
    private var lineTruncated = false
    private var lineNumber = 0
    private var pending: [PendingEvent] = []
    private var outcome = Outcome()
    private var stop: Rejection?

    /// Where a body that is not strict commits: with the bodies finishing at the same
    /// time, in one transaction (nil: alone). A strict body always commits alone, as
    /// one conflict refuses it and only it.
    let group: GroupCommit?

    public init(
        store: Store, strict: Bool, group: GroupCommit? = nil, source: String = "request body", maxRejects: Int = 1000
    ) {
        self.store = store
        self.strict = strict
        self.group = group
        self.source = source
        self.maxRejects = maxRejects
    }

    /// Lines read so far (blank ones aside).
    public var linesRead: Int { outcome.summary.read }

    /// Takes the next piece of the body. In strict mode, returns the first bad line's
    /// rejection: the body is refused, and nothing more need be fed.
    public func feed(_ bytes: UnsafeRawBufferPointer) -> Rejection? {
        guard stop == nil, let base = bytes.baseAddress else { return stop }
        var start = 0
        while start < bytes.count {
            // memchr: a byte loop here was 4% of the server's appending CPU.
            guard let found = memchr(base + start, 0x0A, bytes.count - start) else {
                keep(bytes[start...])
                break
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            if line.isEmpty {
                // A whole line in this piece (nearly every one): decoded from here.
                let whole = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
                let truncated = whole.count > maxLine
                endLine(Array(truncated ? UnsafeRawBufferPointer(rebasing: whole[..<maxLine]) : whole), truncated)
            } else {
                keep(bytes[start..<newline])
                endLine()
            }
            start = newline + 1
            if stop != nil { return stop }
        }
        return stop
    }

    /// The body has ended: its last line (without `\n`) is taken, and every good event
    /// is appended in one write transaction, committed (durably, unless the store was
    /// opened with `noSync`) before this returns. Throws `StrictStop` for a strict body
    /// with a bad line or a conflict, or the store's error when the write is refused;
    /// either way nothing of the body is stored.
    public func finish(recordedAt clock: @escaping @Sendable () -> Timestamp) throws -> Outcome {
        if !line.isEmpty || lineTruncated { endLine() }
        if let stop { throw StrictStop(rejection: stop) }
        guard !pending.isEmpty else { return outcome }
        let dictionary = try group?.dictionaries.dictionary(for: pending, store: store) ?? store.latestDictionary()
        let compressor = dictionary.flatMap { RecordCompressor(dictionary: $0) }
        compressor?.compress(&pending)
        let outcomes: [AppendOutcome]
        if let group, !strict {
            outcomes = try group.append(pending, dictionary: compressor?.dictionary, recordedAt: clock)
        } else {
            outcomes = try alone(pending, compressor?.dictionary, clock)
        }
        return account(outcomes)
    }

    /// Appends the body's events in a transaction of their own; a strict body's first
    /// conflict aborts it.
    private func alone(
        _ events: [PendingEvent], _ dictionary: RecordDictionary?, _ clock: @escaping @Sendable () -> Timestamp
    ) throws -> [AppendOutcome] {
        let strict = self.strict
        return try store.write(recordedAt: clock, tiered: true) { writer in
            let outcomes = try writer.append(events, dictionary: dictionary)
            if strict, let i = outcomes.firstIndex(where: { if case .conflict = $0 { true } else { false } }),
                case .conflict(let seq) = outcomes[i]
            {
                throw StrictStop(rejection: Ingest.conflict(events[i], seq))
            }
            return outcomes
        }
    }

    /// Counts the outcomes into the answer, and forgets the body's events.
    private func account(_ outcomes: [AppendOutcome]) -> Outcome {
        let events = pending
        // The conflicts take their place among the lines' rejections, in line order.
        var conflicts: [Rejection] = []
        for i in outcomes.indices {
            outcome.summary.count(outcomes[i])
            if case .conflict(let seq) = outcomes[i] {
                var rejection = Ingest.conflict(events[i], seq)
                rejection.raw = []
                conflicts.append(rejection)
            }
        }
        pending = []
        if !conflicts.isEmpty {
            let listed = (outcome.rejects + conflicts).sorted { $0.line < $1.line }
            outcome.omittedRejects += max(0, listed.count - maxRejects)
            outcome.rejects = Array(listed.prefix(maxRejects))
        }
        return outcome
    }

    private func keep(_ bytes: Slice<UnsafeRawBufferPointer>) {
        let room = maxLine - line.count
        if bytes.count > room {
            line.append(contentsOf: bytes.prefix(room))
            lineTruncated = true
        } else {
            line.append(contentsOf: bytes)
        }
    }

    /// Takes the line the pieces kept so far make.
    private func endLine() {
        defer {
            line.removeAll(keepingCapacity: line.capacity <= 64 << 10)
            lineTruncated = false
        }
        // A copy of its own size: `line` is reused for the next one.
        endLine(Array(line), lineTruncated)
    }

    /// Takes the next line, `bytes` (cut at `maxLine` when `truncated`).
    private func endLine(_ bytes: [UInt8], _ truncated: Bool) {
        lineNumber += 1
        guard !Ingest.isBlank(bytes) || truncated else { return }
        outcome.summary.read += 1
        let input = InputLine(bytes: bytes, number: lineNumber, truncated: truncated)
        switch Ingest.decode(input, source: source, decoder: &decoder) {
        case .success(let event):
            pending.append(event)
        case .failure(var rejection):
            rejection.raw = []
            if strict {
                stop = rejection
                return
            }
            outcome.summary.rejected += 1
            if outcome.rejects.count < maxRejects {
                outcome.rejects.append(rejection)
            } else {
                outcome.omittedRejects += 1
            }
        }
    }
}
