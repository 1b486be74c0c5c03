import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends events that arrive as messages of a stream (NATS JetStream), in write
/// transactions that take round after round of messages with the stream positions they
/// reach: the events and the positions commit together, so a consumer killed at any
/// moment resumes exactly after what it stored. Each message holds one event line,
/// checked by `ingest`'s rules (a bad one is rejected and still counted as consumed).
/// Records are compressed as the server's are, with the store's dictionary or one
/// trained on the first 1,000 events.
///
/// A transaction is sized as `ingest`'s are: while the stream holds a backlog it takes
/// rounds until it holds a transaction's worth (`TransactionPolicy`) and files in the
/// main databases, as one ingest of those events would; a consumer that keeps up
/// commits each small round in the recent tier, as the server's appends do.
public final class MessageAppender {
    let store: Store
    let stream: String
    private let dictionaries = DictionarySampler()
    private var decoder = EventDecoder()
    /// The keys of `ids` and `refs`, kept across this appender's large transactions
    /// while no other writer commits between them (as `ingest` keeps them).
    private var idsFilter: KeyFilter?
    private var refsFilter: KeyFilter?
    private var filterThrough = Int.min
    /// Room asked of the map beyond a transaction's bytes (its last round may take it
    /// past them): doubled whenever a transaction fails, as a round of unusually large
    /// messages may have filled the map.
    private var extraRoom = 64 << 20

    /// Events a transaction takes at most, over what its size allows (crash tests make
    /// many small transactions with `PUSHTRAIL_BATCH_EVENTS`).
    public var maxEvents: Int?

    /// A backlog of this many events or more is appended in large transactions that
    /// file in the main databases; a smaller one in the recent tier.
    public var largeBacklog = 65_536
    /// What a transaction in the recent tier takes at most.
    static let tieredEvents = 20_000
    static let tieredBytes = 16 << 20

    /// One message: its data and where the stream holds it.
    public struct Message: Sendable {
        public var data: [UInt8]
        public var partition: Int
        public var sequence: UInt64

        public init(data: [UInt8], partition: Int, sequence: UInt64) {
            self.data = data
            self.partition = partition
            self.sequence = sequence
        }
    }

    /// Messages taken together from the stream, in order, and the position each
    /// partition reaches with them.
    public struct Round: Sendable {
        public var messages: [Message]
        public var positions: [StreamPosition]

        public init(messages: [Message], positions: [StreamPosition]) {
            self.messages = messages
            self.positions = positions
        }
    }

    /// A message that was not stored: its label (`STREAM/PARTITION@SEQ`), why, and its data.
    public struct Refusal: Sendable, Equatable {
        public var label: String
        public var reason: String
        public var data: [UInt8]
    }

    /// What a transaction did: its totals, its refusals in order, and the positions it
    /// stored (the last of each partition).
    public struct Outcome: Sendable {
        public var summary = IngestSummary()
        public var refusals: [Refusal] = []
        public var positions: [StreamPosition] = []
    }

    public init(store: Store, stream: String) {
        self.store = store
        self.stream = stream
    }

    func label(_ partition: Int, _ sequence: UInt64) -> String { "\(stream)/\(partition)@\(sequence)" }

    /// Appends `first`, then the rounds `next` gives until it gives nil or the
    /// transaction is full, and their positions, in one write transaction. `backlog`
    /// (the events the stream holds for these partitions, `first`'s included) decides
    /// the transaction's size and where it files. `next` runs inside the transaction:
    /// it must not touch the store.
    public func append(
        first: Round, backlog: Int, recordedAt clock: @escaping () -> Timestamp, next: () throws -> Round?
    ) throws -> Outcome {
        let tiered = backlog < largeBacklog
        let policy = TransactionPolicy(IngestOptions(), storeBytes: store.fileBytes)
        let maxBytes = tiered ? Self.tieredBytes : policy.maxBytes
        let maxEvents = min(tiered ? Self.tieredEvents : policy.maxEvents, self.maxEvents ?? .max)
        // `next` cannot give its rounds twice, so the map is grown first, and a map that
        // fills anyway fails the transaction: the messages are fetched again.
        try store.makeRoom(for: maxBytes + extraRoom)
        // The first round is decoded outside the transaction, which the store's
        // dictionary may have to be read for.
        var decoded = decode(first)
        let firstDictionary =
            decoded.events.isEmpty ? nil : try dictionaries.dictionary(for: decoded.events, store: store)
        var outcome = Outcome()
        var reached: [Int: UInt64] = [:]
        var conflicts: [(event: PendingEvent, label: String, seq: UInt64)] = []
        do {
            try store.write(recordedAt: clock, retryingWhenFull: false, tiered: tiered) { writer in
                if !tiered { useFilters(in: writer, backlog: backlog) }
                var dictionary = firstDictionary
                var round = first
                var bytes = 0
                var events = 0
                while true {
                    let compressor = dictionary.flatMap { RecordCompressor(dictionary: $0) }
                    compressor?.compress(&decoded.events)
                    let results = try writer.append(decoded.events, dictionary: compressor?.dictionary)
                    for p in round.positions {
                        try writer.setStreamPosition(p)
                        reached[p.partition] = p.sequence
                    }
                    for (i, result) in results.enumerated() {
                        outcome.summary.count(result)
                        if case .conflict(let seq) = result {
                            let place = decoded.places[i]
                            conflicts.append((decoded.events[i], label(place.partition, place.sequence), seq))
                        }
                    }
                    outcome.summary.read += decoded.read
                    outcome.summary.rejected += decoded.refusals.count
                    outcome.refusals += decoded.refusals
                    events += round.messages.count
                    bytes += decoded.bytes
                    guard events < maxEvents, bytes < maxBytes,
                        outcome.refusals.count + conflicts.count < IngestOptions().handoffEvents,
                        let later = try next()
                    else { break }
                    round = later
                    decoded = decode(round)
                    if !decoded.events.isEmpty {
                        dictionary = try dictionaries.dictionary(for: decoded.events) {
                            try StoreReader(store: store, txn: writer.txn).latestDictionary()
                        }
                    }
                }
                if !tiered { filterThrough = writer.transactionID }
            }
        } catch {
            // The map may have filled: the next try asks for more room (the file is
            // sparse past its pages, and trimmed when the store closes).
            extraRoom = min(2 * extraRoom, 4 << 30)
            throw error
        }
        for c in conflicts {
            outcome.summary.rejected += 1
            let rejection = Ingest.conflict(c.event, c.seq)
            outcome.refusals.append(Refusal(label: c.label, reason: rejection.reason, data: c.event.raw))
        }
        outcome.positions = reached.sorted { $0.key < $1.key }.map {
            StreamPosition(stream: stream, partition: $0.key, sequence: $0.value)
        }
        return outcome
    }

    /// Gives a large transaction the filters of `ids` and `refs`: kept from the last
    /// one when no other writer committed since, else walked from the store when it
    /// holds fewer keys than four per event of the backlog (`ingest`'s rule).
    private func useFilters(in writer: StoreWriter, backlog: Int) {
        if writer.transactionID != filterThrough + 1 {
            idsFilter = try? writer.makeFilter(of: store.ids, walkingAtMost: 4 * backlog)
            refsFilter = try? writer.makeFilter(of: store.indexes[.refs], walkingAtMost: 4 * backlog)
        }
        writer.idsFilter = idsFilter
        writer.refsFilter = refsFilter
    }

    /// A round's messages decoded: the good events with their places, and the refusals.
    private struct Decoded {
        var events: [PendingEvent] = []
        /// Each event's partition and stream sequence (its label is made only if needed).
        var places: [(partition: Int, sequence: UInt64)] = []
        var refusals: [Refusal] = []
        var read = 0
        var bytes = 0
    }

    private func decode(_ round: Round) -> Decoded {
        var decoded = Decoded()
        decoded.events.reserveCapacity(round.messages.count)
        for (i, message) in round.messages.enumerated() {
            decoded.read += 1
            var bytes = message.data
            if bytes.last == 0x0A { bytes.removeLast() }
            let refusal: String?
            let newline = bytes.withUnsafeBytes { $0.baseAddress.map { memchr($0, 0x0A, bytes.count) != nil } ?? false }
            if newline {
                refusal = "a message holds one event line; this one holds several"
            } else if Ingest.isBlank(bytes) {
                refusal = "the message is empty"
            } else {
                let line = InputLine(bytes: bytes, number: i + 1, truncated: bytes.count > EventDecoder.maxLineBytes)
                switch Ingest.decode(line, source: stream, decoder: &decoder) {
                case .success(let event):
                    decoded.bytes += event.raw.count
                    decoded.events.append(event)
                    decoded.places.append((message.partition, message.sequence))
                    refusal = nil
                case .failure(let rejection):
                    refusal = rejection.reason
                }
            }
            if let refusal {
                let label = label(message.partition, message.sequence)
                decoded.refusals.append(Refusal(label: label, reason: refusal, data: message.data))
            }
        }
        return decoded
    }
}
