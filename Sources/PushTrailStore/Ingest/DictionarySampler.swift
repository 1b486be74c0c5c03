import PushTrailModel

/// The events a store's first compression dictionary is trained on: the first
/// `wanted` events appended, at most 8 MiB of them.
struct DictionarySample {
    let wanted: Int
    private var kept: [[UInt8]] = []
    private var bytes = 0

    init(wanted: Int) {
        self.wanted = wanted
    }

    /// Keeps what the sample still lacks of `events`; whether it is now complete.
    mutating func add(_ events: [PendingEvent]) -> Bool {
        for e in events where kept.count < wanted && bytes < 8 << 20 {
            kept.append(e.raw)
            bytes += e.raw.count
        }
        return kept.count >= wanted || bytes >= 8 << 20
    }

    /// A dictionary trained on the events kept (nil when zstd finds too little to learn).
    func train() -> RecordDictionary? { RecordDictionary.train(kept) }
}

/// The compression dictionary for appends that come in bodies (the server's): the
/// store's newest, or, for a store without one, one trained on the first events
/// appended through this sampler, as an ingest trains one on its first 1,000.
///
/// Without it a store that only the server fills keeps every record whole: twice the
/// bytes to write and to sync, and twice the store (docs/PERFORMANCE.md).
public final class DictionarySampler: @unchecked Sendable {
    private let monitor = Monitor()
    /// The events kept until a dictionary is found or trained (nil after).
    private var sample: DictionarySample?
    /// The dictionary found or trained; once set, it is used for every later body.
    private var found: RecordDictionary?

    public init(samples: Int = 1000) {
        sample = DictionarySample(wanted: samples)
    }

    /// The dictionary to compress `events` with: the store's newest; else one trained
    /// here once the sample is complete, these events among it; nil until then (those
    /// events are stored whole).
    func dictionary(for events: [PendingEvent], store: Store) throws -> RecordDictionary? {
        try dictionary(for: events) { try store.latestDictionary() }
    }

    /// As `dictionary(for:store:)`, the store's newest dictionary read by `latest`
    /// (from a transaction the caller holds).
    func dictionary(for events: [PendingEvent], latest: () throws -> RecordDictionary?) throws -> RecordDictionary? {
        if let found = monitor.locked({ found }) { return found }
        let stored = try latest()
        return monitor.locked {
            if found == nil, let stored {
                found = stored
                sample = nil
            }
            if found == nil, sample?.add(events) == true {
                found = sample?.train()
                sample = nil
            }
            return found
        }
    }
}
