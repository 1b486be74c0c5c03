/// Where an event sits in the timeline: ordered by `at`, then `seq`.
public struct Position: Comparable, Hashable, Sendable {
    public var at: Timestamp
    public var seq: UInt64

    public init(at: Timestamp, seq: UInt64) {
        self.at = at
        self.seq = seq
    }

    public static func < (a: Position, b: Position) -> Bool {
        (a.at, a.seq) < (b.at, b.seq)
    }
}
