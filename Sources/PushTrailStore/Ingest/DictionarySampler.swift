import PushTrailModel

/// The compression dictionary for appends that come in bodies (the server's): the
/// store's newest, or, for a store without one, one trained on the first events
/// appended through this sampler, as an ingest trains one on its first 1,000.
///
/// Without it a store that only the server fills keeps every record whole: twice the
/// bytes to write and to sync, and twice the store (docs/PERFORMANCE.md).
public final class DictionarySampler: @unchecked Sendable {
    private let monitor = Monitor()
    private var samples: [[UInt8]] = []
    private var sampleBytes = 0
    /// The dictionary found or trained; once set, it is used for every later body.
    private var found: RecordDictionary?
    /// Events to train on.
    let wanted: Int

    public init(samples: Int = 1000) {
        wanted = samples
    }

    /// The dictionary to compress `events` with: the store's newest; else one trained
    /// here once `wanted` events (or 8 MiB of them) have come, these among them; nil
    /// until then (those events are stored whole).
    func dictionary(for events: [PendingEvent], store: Store) throws -> RecordDictionary? {
        if let found = monitor.locked({ found }) { return found }
        let stored = try store.latestDictionary()
        return monitor.locked {
            if let found { return found }
            if let stored {
                found = stored
                return stored
            }
            for e in events where samples.count < wanted && sampleBytes < 8 << 20 {
                samples.append(e.raw)
                sampleBytes += e.raw.count
            }
            guard samples.count >= wanted || sampleBytes >= 8 << 20 else { return nil }
            found = RecordDictionary.train(samples)
            samples = []
            return found
        }
    }
}
