/// Events a long-running reader (the server) has decoded, kept by seq for the next
/// question that needs them. A stored event never changes once committed (the chain
/// holds it), so a kept one is never stale; only readers whose snapshot holds a seq
/// ask for it. Two generations bound it: when the newer holds half the capacity, the
/// older is dropped and the newer takes its place; a hit in the older is moved up.
final class DecodedEvents: @unchecked Sendable {
    private let monitor = Monitor()
    private var newer: [UInt64: LoadedEvent] = [:]
    private var older: [UInt64: LoadedEvent] = [:]
    private let generation: Int
    /// The most events one question (one `EventLoader`) may take from and give to the
    /// kept ones: a thread's or a task's fit.
    static let largestQuestion = 128

    /// At most `capacity` events kept.
    init(capacity: Int) {
        generation = max(1, capacity / 2)
    }

    // A generation dropped is returned out of the monitor and freed there: thousands of
    // events freed under it would hold up every other reader.

    func event(_ seq: UInt64) -> LoadedEvent? {
        let (hit, _) = monitor.locked { () -> (LoadedEvent?, [UInt64: LoadedEvent]?) in
            if let hit = newer[seq] { return (hit, nil) }
            guard let hit = older.removeValue(forKey: seq) else { return (nil, nil) }
            return (hit, keep(seq, hit))
        }
        return hit
    }

    func remember(_ loaded: LoadedEvent) {
        _ = monitor.locked { keep(loaded.seq, loaded) }
    }

    /// Under the monitor: keeps `loaded`, and returns the generation it drops, if any.
    private func keep(_ seq: UInt64, _ loaded: LoadedEvent) -> [UInt64: LoadedEvent]? {
        var dropped: [UInt64: LoadedEvent]?
        if newer.count >= generation {
            dropped = older
            older = newer
            newer = [:]
            newer.reserveCapacity(generation)
        }
        newer[seq] = loaded
        return dropped
    }
}
