/// A line that was not stored, and why. With `IngestSummary`, what an ingest reports
/// whichever way it ran: kept apart from the pipeline, which fills them in.
public struct Rejection: Error, Sendable, Equatable {
    public var source: String
    public var line: Int
    public var reason: String
    /// The line byte for byte, without its `\n`.
    public var raw: [UInt8]
    /// Whether it was refused because its id is stored with different content.
    public var isConflict: Bool
    /// Its place in the whole input, for reporting in order.
    var ordinal = 0
}

/// What an ingest did (the `--json` summary).
public struct IngestSummary: Sendable, Equatable, Codable {
    public var read = 0
    public var appended = 0
    public var duplicates = 0
    public var conflicts = 0
    public var rejected = 0
    public var firstSeq: UInt64?
    public var lastSeq: UInt64?

    public init() {}

    /// Counts what an append did with one event (a conflict counts as a conflict only:
    /// callers say whether it is also a rejected line).
    mutating func count(_ outcome: AppendOutcome) {
        switch outcome {
        case .appended(let seq):
            appended += 1
            if firstSeq == nil { firstSeq = seq }
            lastSeq = seq
        case .duplicate: duplicates += 1
        case .conflict: conflicts += 1
        }
    }

    /// Adds what a later part of the same run did.
    public mutating func add(_ later: IngestSummary) {
        read += later.read
        appended += later.appended
        duplicates += later.duplicates
        conflicts += later.conflicts
        rejected += later.rejected
        firstSeq = firstSeq ?? later.firstSeq
        lastSeq = later.lastSeq ?? lastSeq
    }

    enum CodingKeys: String, CodingKey {
        case read, appended, duplicates, conflicts, rejected
        case firstSeq = "first_seq"
        case lastSeq = "last_seq"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(read, forKey: .read)
        try c.encode(appended, forKey: .appended)
        try c.encode(duplicates, forKey: .duplicates)
        try c.encode(conflicts, forKey: .conflicts)
        try c.encode(rejected, forKey: .rejected)
        try c.encode(firstSeq, forKey: .firstSeq)
        try c.encode(lastSeq, forKey: .lastSeq)
    }
}
