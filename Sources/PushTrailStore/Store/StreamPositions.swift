import LMDBKit

/// Where a store stands in each partition of an event stream it consumes (NATS
/// JetStream): the stream sequence of the last message taken from it, kept in `meta`
/// under `stream.NAME.PARTITION` as 8 bytes big-endian. A consumer writes it in the same
/// transaction as the events those messages carried, so after any crash the store holds
/// exactly the messages up to it, and consumption resumes after it.
public struct StreamPosition: Equatable, Sendable {
    public var stream: String
    public var partition: Int
    public var sequence: UInt64

    public init(stream: String, partition: Int, sequence: UInt64) {
        self.stream = stream
        self.partition = partition
        self.sequence = sequence
    }

    static let prefix = Array("stream.".utf8)

    static func key(stream: String, partition: Int) -> [UInt8] {
        prefix + Array("\(stream).\(partition)".utf8)
    }
}

extension StoreWriter {
    /// Records that the store holds `stream`'s partition `partition` through stream
    /// sequence `sequence`, in this transaction.
    public func setStreamPosition(_ position: StreamPosition) throws {
        try store.meta.put(
            StreamPosition.key(stream: position.stream, partition: position.partition),
            Layout.bigEndian(position.sequence), in: txn)
    }
}

extension StoreReader {
    /// The stream sequence the store holds `stream`'s partition through (0: none yet).
    public func streamSequence(stream: String, partition: Int) throws -> UInt64 {
        guard let raw = try store.meta.get(StreamPosition.key(stream: stream, partition: partition), in: txn),
            raw.count == 8
        else { return 0 }
        return Layout.readBigEndian(raw)
    }

    /// Every stream position the store keeps, by stream and partition.
    public func streamPositions() throws -> [StreamPosition] {
        let prefix = StreamPosition.prefix
        var out: [StreamPosition] = []
        try txn.withCursor(store.meta) { cursor in
            var entry = try prefix.withUnsafeBytes { try cursor.seek($0) }
            while let (key, value) = entry, key.starts(with: prefix) {
                let name = String(decoding: key[prefix.count...], as: UTF8.self)
                if let dot = name.lastIndex(of: "."), let partition = Int(name[name.index(after: dot)...]),
                    value.count == 8
                {
                    out.append(
                        StreamPosition(
                            stream: String(name[..<dot]), partition: partition, sequence: Layout.readBigEndian(value)))
                }
                entry = try cursor.next()
            }
        }
        return out.sorted { ($0.stream, $0.partition) < ($1.stream, $1.partition) }
    }
}
