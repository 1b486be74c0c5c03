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

    /// At most `capacity` events kept.
    init(capacity: Int) {
        generation = max(1, capacity / 2)
    }

    func event(_ seq: UInt64) -> LoadedEvent? {
        monitor.locked {
            if let hit = newer[seq] { return hit }
            guard let hit = older.removeValue(forKey: seq) else { return nil }
            keep(seq, hit)
            return hit
        }
    }

    func remember(_ loaded: LoadedEvent) {
        monitor.locked { keep(loaded.seq, loaded) }
    }

    /// Under the monitor.
    private func keep(_ seq: UInt64, _ loaded: LoadedEvent) {
        if newer.count >= generation {
            older = newer
            newer = [:]
            newer.reserveCapacity(generation)
        }
        newer[seq] = loaded
    }
}
