import CNats
import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends the messages of some partitions of the stream to a store, exactly once: each
/// partition is read by a pull consumer that starts after the stream sequence the store
/// holds it through, and each batch's events commit with the sequences they reach.
public final class Consumer {
    let connection: JetStreamConnection
    let store: Store
    let stream: String
    let partitions: [Int]
    let appender: MessageAppender
    private(set) var subscriptions: [(partition: Int, subscription: OpaquePointer)] = []
    /// The stream sequence each partition is stored through.
    public private(set) var positions: [Int: UInt64] = [:]
    /// Messages each partition still had after the last one fetched from it.
    public private(set) var lag: [Int: UInt64] = [:]
    /// Events a transaction takes at most, and their bytes: a batch is held in memory
    /// until it commits.
    public var batchEvents = 20_000
    public var batchBytes = 16 << 20

    public private(set) var summary = IngestSummary()

    /// The consumer sequence each partition's next message must carry: a consumer
    /// numbers what it delivers 1, 2, 3…, and a gap means messages were lost on the way
    /// (a connection dropped with them in flight), which acknowledging nothing would not
    /// show otherwise.
    private var nextDelivery: [Int: UInt64] = [:]
    /// The partition the next round starts from.
    private var rotation = 0

    public init(connection: JetStreamConnection, store: Store, stream: String, partitions: [Int]) throws {
        self.connection = connection
        self.store = store
        self.stream = stream
        self.partitions = partitions
        appender = MessageAppender(store: store)
        try store.read { reader in
            for p in partitions { positions[p] = try reader.streamSequence(stream: stream, partition: p) }
        }
        try resubscribe()
    }

    deinit { unsubscribe() }

    private func unsubscribe() {
        for (_, s) in subscriptions {
            natsSubscription_Unsubscribe(s)
            natsSubscription_Destroy(s)
        }
        subscriptions = []
    }

    /// New pull consumers for every partition, from after the positions the store holds:
    /// what was fetched but not committed is fetched again.
    public func resubscribe() throws {
        unsubscribe()
        for p in partitions {
            subscriptions.append((p, try connection.pullSubscribe(stream: stream, partition: p, after: positions[p]!)))
            nextDelivery[p] = 1
        }
    }

    /// A partition's deliveries skipped a number: what was fetched is dropped.
    struct Gap: Error {}

    /// Takes what the partitions have (waiting up to `waitMilliseconds` in all for a
    /// round in which none has anything), up to a batch, and commits it. The messages
    /// stored, or nil when no partition had anything. When a partition's deliveries skip
    /// a number, or fetching or committing fails, nothing of the batch is kept and every
    /// partition is read again from the store's positions (the error, if any, is thrown).
    public func step(
        waitMilliseconds: Int64, clock: @escaping () -> Timestamp, refused: (MessageAppender.Refusal) -> Void
    ) throws -> Int? {
        do {
            return try take(waitMilliseconds: waitMilliseconds, clock: clock, refused: refused)
        } catch is Gap {
            try resubscribe()
            return 0
        } catch {
            try? resubscribe()
            throw error
        }
    }

    private func take(
        waitMilliseconds: Int64, clock: @escaping () -> Timestamp, refused: (MessageAppender.Refusal) -> Void
    ) throws -> Int? {
        var messages: [MessageAppender.Message] = []
        var bytes = 0
        var reached: [Int: UInt64] = [:]
        // A quick round over the partitions first, starting from a different one each
        // time so that none waits for the others' backlog; only when none had anything
        // does a round wait, its wait shared by the partitions.
        let count = subscriptions.count
        let wait = max(1, waitMilliseconds / Int64(max(count, 1)))
        var waited = false
        rotation = (rotation + 1) % max(count, 1)
        while messages.count < batchEvents && bytes < batchBytes {
            var got = false
            var full = false
            for k in 0..<count {
                let (p, subscription) = subscriptions[(rotation + k) % count]
                let room = min(1000, batchEvents - messages.count)
                guard room > 0 else { break }
                let fetched = try connection.fetch(
                    subscription, count: room, waitMilliseconds: messages.isEmpty && waited ? wait : 5)
                for m in fetched {
                    guard m.delivery == nextDelivery[p] else { throw Gap() }
                    nextDelivery[p] = m.delivery + 1
                    messages.append(MessageAppender.Message(data: m.data, label: "\(stream)/\(p)@\(m.sequence)"))
                    bytes += m.data.count
                    reached[p] = m.sequence
                    lag[p] = m.pending
                }
                got = got || !fetched.isEmpty
                full = full || fetched.count == room
            }
            if got && !full { break }  // everything there was is taken
            if !got {
                if waited { break }
                waited = true
            }
        }
        guard !messages.isEmpty else { return nil }
        let newPositions = reached.sorted { $0.key < $1.key }.map {
            StreamPosition(stream: stream, partition: $0.key, sequence: $0.value)
        }
        let outcome = try appender.append(messages, positions: newPositions, recordedAt: clock)
        for p in newPositions { positions[p.partition] = p.sequence }
        summary.add(outcome.summary)
        outcome.refusals.forEach(refused)
        return messages.count
    }
}

/// A message taken from a pull consumer.
struct FetchedMessage {
    var sequence: UInt64
    /// Its number among what its consumer delivered (1, 2, 3…).
    var delivery: UInt64
    /// Messages left after this one for its consumer.
    var pending: UInt64
    var data: [UInt8]
}

extension JetStreamConnection {
    /// A pull consumer of `partition`'s subject from the message after stream sequence
    /// `after`; it acknowledges nothing (the store's position is the acknowledgement) and
    /// the server forgets it 10 minutes after its last pull.
    func pullSubscribe(stream: String, partition: Int, after: UInt64) throws -> OpaquePointer {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Config.DeliverPolicy = after == 0 ? js_DeliverAll : js_DeliverByStartSequence
        options.Config.OptStartSeq = after == 0 ? 0 : after + 1
        options.Config.AckPolicy = js_AckNone
        options.Config.InactiveThreshold = 600 * 1_000_000_000
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = stream.withCString { name in
            options.Stream = name
            return js_PullSubscribe(
                &subscription, context, EventSubjects.subject(partition: partition), nil, nil, &options, &code)
        }
        try check("subscribing to partition \(partition) of \(stream)", status, code)
        return subscription!
    }

    /// Up to `count` messages, as soon as some are there; none after `waitMilliseconds`.
    func fetch(_ subscription: OpaquePointer, count: Int, waitMilliseconds: Int64) throws -> [FetchedMessage] {
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, subscription, Int32(count), max(1, waitMilliseconds), &code)
        defer { natsMsgList_Destroy(&list) }
        if status == NATS_TIMEOUT { return [] }
        try check("fetching messages", status, code)
        var out: [FetchedMessage] = []
        out.reserveCapacity(Int(list.Count))
        for i in 0..<Int(list.Count) {
            let message = list.Msgs[i]
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            try check("reading a message's sequence", natsMsg_GetMetaData(&meta, message))
            defer { jsMsgMetaData_Destroy(meta) }
            let length = Int(natsMsg_GetDataLength(message))
            let data: [UInt8] =
                length == 0
                ? [] : Array(UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length))
            let m = meta!.pointee
            out.append(
                FetchedMessage(
                    sequence: m.Sequence.Stream, delivery: m.Sequence.Consumer, pending: m.NumPending, data: data))
        }
        return out
    }
}
