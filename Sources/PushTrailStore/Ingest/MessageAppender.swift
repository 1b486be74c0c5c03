import PushTrailModel

/// Appends events that arrive as messages of a stream (NATS JetStream), a batch per
/// write transaction, each batch with the stream positions it reaches: the events and
/// the positions commit together, so a consumer killed at any moment resumes exactly
/// after what it stored. Each message holds one event line, checked by `ingest`'s rules
/// (a bad one is rejected and still counted as consumed). Records are compressed as the
/// server's are, with the store's dictionary or one trained on the first 1,000 events.
public final class MessageAppender {
    let store: Store
    private let dictionaries = DictionarySampler()
    private var decoder = EventDecoder()

    /// One message: its data, and how reports name it (`STREAM/PARTITION@SEQ`).
    public struct Message: Sendable {
        public var data: [UInt8]
        public var label: String

        public init(data: [UInt8], label: String) {
            self.data = data
            self.label = label
        }
    }

    /// A message that was not stored: its label, why, and its data.
    public struct Refusal: Sendable, Equatable {
        public var label: String
        public var reason: String
        public var data: [UInt8]
    }

    /// What a batch did.
    public struct Outcome: Sendable {
        public var summary = IngestSummary()
        public var refusals: [Refusal] = []
    }

    public init(store: Store) { self.store = store }

    /// Appends `messages` in order and records `positions`, all in one transaction.
    public func append(
        _ messages: [Message], positions: [StreamPosition], recordedAt clock: @escaping () -> Timestamp
    ) throws -> Outcome {
        var outcome = Outcome()
        var pending: [PendingEvent] = []
        var labels: [String] = []
        for (i, message) in messages.enumerated() {
            outcome.summary.read += 1
            var bytes = message.data
            if bytes.last == 0x0A { bytes.removeLast() }
            let refusal: String?
            if bytes.contains(0x0A) {
                refusal = "a message holds one event line; this one holds several"
            } else if Ingest.isBlank(bytes) {
                refusal = "the message is empty"
            } else {
                let line = InputLine(bytes: bytes, number: i + 1, truncated: bytes.count > EventDecoder.maxLineBytes)
                switch Ingest.decode(line, source: message.label, decoder: &decoder) {
                case .success(let event):
                    pending.append(event)
                    labels.append(message.label)
                    refusal = nil
                case .failure(let rejection):
                    refusal = rejection.reason
                }
            }
            if let refusal {
                outcome.summary.rejected += 1
                outcome.refusals.append(Refusal(label: message.label, reason: refusal, data: message.data))
            }
        }
        let dictionary = pending.isEmpty ? nil : try dictionaries.dictionary(for: pending, store: store)
        let compressor = dictionary.flatMap { RecordCompressor(dictionary: $0) }
        compressor?.compress(&pending)
        let outcomes = try store.write(recordedAt: clock, tiered: true) { writer in
            let outcomes = try writer.append(pending, dictionary: compressor?.dictionary)
            for p in positions { try writer.setStreamPosition(p) }
            return outcomes
        }
        for (i, result) in outcomes.enumerated() {
            outcome.summary.count(result)
            if case .conflict(let seq) = result {
                outcome.summary.rejected += 1
                let rejection = Ingest.conflict(pending[i], seq)
                outcome.refusals.append(Refusal(label: labels[i], reason: rejection.reason, data: pending[i].raw))
            }
        }
        return outcome
    }
}
