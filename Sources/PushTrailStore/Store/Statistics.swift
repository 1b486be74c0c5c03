import PushTrailModel

/// What a store holds, for `stats`.
public struct StoreStatistics: Sendable, Equatable {
    public var events: UInt64
    public var byType: [EventType: Int]
    public var tasks: Int
    public var threads: Int
    public var users: Int
    public var firstAt: Timestamp?
    public var lastAt: Timestamp?
    public var head: ChainHead
    /// The store's format (docs/STORE.md) and how many compression dictionaries it holds.
    public var format: UInt32
    public var dictionaries: Int
    /// Where the store stands in each stream partition it consumes (`consume`).
    public var streams: [StreamPosition] = []
}

extension StoreReader {
    /// Counts from the meta counters and the indexes' distinct keys.
    public func statistics() throws -> StoreStatistics {
        let head = try head()
        var first: Timestamp?
        var last: Timestamp?
        try forEachPosition {
            first = $0.at
            return false
        }
        try forEachPosition(reverse: true) {
            last = $0.at
            return false
        }
        return StoreStatistics(
            events: head.seq, byType: try counts(), tasks: try keyCount(.tasks), threads: try keyCount(.threads),
            users: try keyCount(.users), firstAt: first, lastAt: last, head: head, format: try format(),
            dictionaries: try dictionaryNumbers().count, streams: try streamPositions())
    }
}
