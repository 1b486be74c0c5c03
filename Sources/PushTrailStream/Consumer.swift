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
/// holds it through, and each transaction's events commit with the sequences they reach.
/// A transaction takes fetch after fetch while the stream has more waiting, up to the
/// size `ingest` gives its transactions (`MessageAppender`).
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
    /// Events a transaction takes at most, over what its size allows (`MessageAppender`
    /// sizes transactions as `ingest` does); nil: no more than that.
    public var batchEvents: Int? {
        get { appender.maxEvents }
        set { appender.maxEvents = newValue }
    }
    /// Messages asked of a partition at a time (a fetch may bring a few hundred more,
    /// see `fetch`).
    var fetchSize = 1000
    /// How long a quick pass waits on each partition. A fetch returns once it has what
    /// it asked for; one that gives up first leaves the messages on their way to wait in
    /// the subscription, and the next fetch takes them all (tests that count what each
    /// fetch brings wait longer).
    var quickWaitMilliseconds: Int64 = 5
    /// Whether to commit now and stop taking rounds (`SIGTERM`).
    public var stopping: () -> Bool = { false }
    /// Called after each round a transaction takes (for a progress line).
    public var onRound: () -> Void = {}
    /// Messages fetched so far, those of a transaction not yet committed included.
    public private(set) var received = 0

    public private(set) var summary = IngestSummary()

    /// The consumer sequence each partition's next message must carry: a consumer
    /// numbers what it delivers 1, 2, 3…, and a gap means messages were lost on the way
    /// (a connection dropped with them in flight), which acknowledging nothing would not
    /// show otherwise.
    private var nextDelivery: [Int: UInt64] = [:]
    /// The partition the next round starts from.
    private var rotation = 0

    /// Each partition's consumer on the server: its name and the server it lives on, as
    /// JetStream said when it was made (nil when it did not say).
    private var placement: [Int: ConsumerPlacement] = [:]
    /// When each partition last delivered a message or was found alive (monotonic seconds).
    private var heard: [Int: Double] = [:]
    /// A partition silent this long has its consumer asked whether it is still there. A
    /// consumer lives on one server (it is ephemeral, so it has one copy): when that server
    /// goes, fetching from it finds nothing, the same as an idle partition, and says nothing.
    public var silenceSeconds = 2.0
    /// Says what happened to the partitions' consumers (one line each).
    public var tell: (String) -> Void = { _ in }
    /// Subscriptions given up, and when: each is destroyed 2 s later, once nothing can be
    /// on its way to it (its last pull has expired). libnats 3.4 hands an arriving message
    /// to its subscription without holding it, so destroying one a message is arriving for
    /// writes into freed memory.
    private var retired: [(subscription: OpaquePointer, at: Double)] = []

    public init(connection: JetStreamConnection, store: Store, stream: String, partitions: [Int]) throws {
        self.connection = connection
        self.store = store
        self.stream = stream
        self.partitions = partitions
        appender = MessageAppender(store: store, stream: stream)
        try store.read { reader in
            for p in partitions { positions[p] = try reader.streamSequence(stream: stream, partition: p) }
        }
        try resubscribe()
    }

    // The subscriptions still open are left to the connection, which closes them when it
    // is destroyed.
    deinit { unsubscribe() }

    /// Gives up the subscriptions (of the `lost` partitions only, when named) and deletes
    /// their consumers, but for the lost ones: their server does not answer (it forgets
    /// them 10 minutes after their last pull). A delete waits half a second at most, as
    /// one on a server that is gone but not yet noticed gets no answer.
    private func unsubscribe(lost: Set<Int>? = nil) {
        let now = StreamMain.monotonicSeconds()
        for (p, s) in subscriptions where lost?.contains(p) ?? true {
            retired.append((s, now))
            if lost == nil, let name = placement[p]?.name, !name.isEmpty {
                connection.deleteConsumer(stream: stream, name: name, waitMilliseconds: 500)
            }
            placement[p] = nil
        }
        subscriptions.removeAll { lost?.contains($0.partition) ?? true }
    }

    /// Destroys the subscriptions given up 2 s ago or more.
    private func destroyRetired() {
        let now = StreamMain.monotonicSeconds()
        for r in retired where now - r.at >= 2 { natsSubscription_Destroy(r.subscription) }
        retired.removeAll { now - $0.at >= 2 }
    }

    /// New pull consumers for every partition, from after the positions the store holds:
    /// what was fetched but not committed is fetched again.
    public func resubscribe() throws {
        unsubscribe()
        try subscribeMissing()
    }

    /// New pull consumers for the partitions that have none, from after the positions
    /// the store holds. One that gets no answer is asked for once more at once (it may
    /// have been placed on a server that is gone); a second failure is thrown, and the
    /// next step subscribes the partitions still missing.
    private func subscribeMissing() throws {
        let now = StreamMain.monotonicSeconds()
        for p in partitions where !subscriptions.contains(where: { $0.partition == p }) {
            let subscription: OpaquePointer
            do {
                subscription = try connection.pullSubscribe(stream: stream, partition: p, after: positions[p]!)
            } catch let unanswered as NATSFailure where unanswered.status == NATS_TIMEOUT {
                subscription = try connection.pullSubscribe(stream: stream, partition: p, after: positions[p]!)
            }
            subscriptions.append((p, subscription))
            placement[p] = try? connection.consumerPlacement(subscription, waitMilliseconds: 2000)
            nextDelivery[p] = 1
            heard[p] = now
        }
    }

    /// Whether every partition is read to the end of what the stream holds now, as its
    /// consumer on the server says: nothing left to deliver, and every message it
    /// delivered fetched. A round that fetched nothing is not proof, as a fetch can come
    /// back empty while the server is busy (`--drain`). (What waits in a subscription
    /// is no proof either way: the answer to a pull that expired arrives there after the
    /// fetch that made it has given up, and no fetch returns it.)
    public func caughtUp() throws -> Bool {
        guard subscriptions.count == partitions.count else { return false }
        for (p, subscription) in subscriptions {
            guard let state = try connection.delivery(subscription, waitMilliseconds: 2000),
                state.pending == 0, state.delivered == nextDelivery[p]! - 1
            else { return false }
        }
        return true
    }

    /// A partition's deliveries skipped a number: what was fetched is dropped.
    struct Gap: Error {}

    /// The consumers of some partitions do not answer: their server is gone, or they were
    /// deleted.
    struct Lost: Error {
        var partitions: [Int]
        var servers: [String]
    }

    /// Asks the consumers of the partitions silent for `silenceSeconds` whether they are
    /// still there (not while the connection is down: the reconnection says so).
    private func checkSilent() throws {
        guard connection.isConnected else { return }
        let now = StreamMain.monotonicSeconds()
        var lost = Lost(partitions: [], servers: [])
        for (p, subscription) in subscriptions where now - (heard[p] ?? now) >= silenceSeconds {
            if try connection.consumerPlacement(subscription, waitMilliseconds: 1000) != nil {
                heard[p] = now
            } else {
                lost.partitions.append(p)
                if let server = placement[p]?.server, !server.isEmpty, !lost.servers.contains(server) {
                    lost.servers.append(server)
                }
            }
        }
        if !lost.partitions.isEmpty { throw lost }
    }

    /// Takes what the partitions have (waiting up to `waitMilliseconds` in all for a
    /// pass in which none has anything), in one transaction that takes pass after pass
    /// while more waits, and commits it. The messages taken, or nil when no partition had
    /// anything. When a partition's deliveries skip a number or fetching fails, what the
    /// transaction took before commits; when committing fails, nothing of it is kept.
    /// Either way every partition is read again from the store's positions (the error,
    /// if any, is thrown).
    /// When the consumers of silent partitions are gone, it says so and reads those
    /// partitions again from new consumers.
    public func step(
        waitMilliseconds: Int64, clock: @escaping () -> Timestamp, refused: (MessageAppender.Refusal) -> Void
    ) throws -> Int? {
        destroyRetired()
        // A subscription that failed part way (NATS did not answer) is finished first.
        if subscriptions.count < partitions.count { try subscribeMissing() }
        do {
            try checkSilent()
            return try take(waitMilliseconds: waitMilliseconds, clock: clock, refused: refused)
        } catch is Gap {
            try resubscribe()
            return 0
        } catch let lost as Lost {
            let list = lost.partitions.map(String.init).joined(separator: ",")
            let which = lost.partitions.count == 1 ? "the consumer of partition" : "the consumers of partitions"
            let on = lost.servers.isEmpty ? "" : " on NATS server \(lost.servers.joined(separator: ", "))"
            let after = lost.partitions.map { "\($0)@\(positions[$0]!)" }.joined(separator: " ")
            tell("lost \(which) \(list)\(on); reading again after \(after)")
            unsubscribe(lost: Set(lost.partitions))
            try subscribeMissing()
            return 0
        } catch {
            try? resubscribe()
            throw error
        }
    }

    private func take(
        waitMilliseconds: Int64, clock: @escaping () -> Timestamp, refused: (MessageAppender.Refusal) -> Void
    ) throws -> Int? {
        // A quick pass over the partitions first; only when none had anything does a
        // pass wait, its wait shared by the partitions.
        let wait = max(1, waitMilliseconds / Int64(max(subscriptions.count, 1)))
        var first = try fetchPass(waitMilliseconds: quickWaitMilliseconds)
        if first.round.messages.isEmpty { first = try fetchPass(waitMilliseconds: wait) }
        guard !first.round.messages.isEmpty else { return nil }
        received += first.round.messages.count
        // What the stream holds for these partitions now: it sizes the transaction.
        let backlog = first.round.messages.count + partitions.reduce(0) { $0 + Int(lag[$1] ?? 0) }
        var more = first.more
        var stop: Error?
        var taken = first.round.messages.count
        let outcome = try appender.append(first: first.round, backlog: backlog, recordedAt: clock) {
            // Another round while the stream has more waiting: the transaction commits
            // once it has all there was, or is full. A failure (a gap, NATS) commits
            // what came before it and is thrown once that is stored.
            guard more, !stopping() else { return nil }
            do {
                // JetStream said more waits: a quick pass that finds nothing (a busy
                // server, or the answer to an earlier pull read first) is given the
                // step's wait before the transaction commits.
                var pass = try fetchPass(waitMilliseconds: quickWaitMilliseconds)
                if pass.round.messages.isEmpty { pass = try fetchPass(waitMilliseconds: wait) }
                more = pass.more
                received += pass.round.messages.count
                taken += pass.round.messages.count
                onRound()
                return pass.round.messages.isEmpty ? nil : pass.round
            } catch {
                stop = error
                return nil
            }
        }
        for p in outcome.positions { positions[p.partition] = p.sequence }
        summary.add(outcome.summary)
        outcome.refusals.forEach(refused)
        if let stop { throw stop }
        return taken
    }

    /// Fetches from each partition once, starting from a different one each time so
    /// that none waits for the others' backlog: the messages, the positions they reach,
    /// and whether the stream has more waiting for any of them.
    private func fetchPass(waitMilliseconds: Int64) throws -> (round: MessageAppender.Round, more: Bool) {
        var messages: [MessageAppender.Message] = []
        var reached: [Int: UInt64] = [:]
        var more = false
        let count = subscriptions.count
        let size = min(fetchSize, batchEvents ?? fetchSize)
        rotation = (rotation + 1) % max(count, 1)
        for k in 0..<count {
            let (p, subscription) = subscriptions[(rotation + k) % count]
            let fetched = try connection.fetch(subscription, count: size, waitMilliseconds: waitMilliseconds)
            if !fetched.isEmpty { heard[p] = StreamMain.monotonicSeconds() }
            for m in fetched {
                guard m.delivery == nextDelivery[p] else { throw Gap() }
                nextDelivery[p] = m.delivery + 1
                messages.append(MessageAppender.Message(data: m.data, partition: p, sequence: m.sequence))
                reached[p] = m.sequence
                lag[p] = m.pending
            }
            // What JetStream says is left after the last message (a fetch that came back
            // empty says nothing: it is not waited for).
            more = more || (fetched.last.map { $0.pending > 0 } ?? false)
        }
        let positions = reached.sorted { $0.key < $1.key }.map {
            StreamPosition(stream: stream, partition: $0.key, sequence: $0.value)
        }
        return (MessageAppender.Round(messages: messages, positions: positions), more)
    }
}

/// Where a partition's consumer lives: its name, and the server that holds it ("" when
/// JetStream does not say, as a server outside a cluster does not).
struct ConsumerPlacement {
    var name: String
    var server: String
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
    /// the server forgets it 10 minutes after its last pull. JetStream's answer is waited
    /// for 3 s: a server of the stream that is gone but not yet noticed may be given the
    /// consumer, and never answers (asking again places it anew).
    func pullSubscribe(stream: String, partition: Int, after: UInt64) throws -> OpaquePointer {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Config.DeliverPolicy = after == 0 ? js_DeliverAll : js_DeliverByStartSequence
        options.Config.OptStartSeq = after == 0 ? 0 : after + 1
        options.Config.AckPolicy = js_AckNone
        options.Config.InactiveThreshold = 600 * 1_000_000_000
        var wait = jsOptions()
        jsOptions_Init(&wait)
        wait.Wait = 3000
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = stream.withCString { name in
            options.Stream = name
            return js_PullSubscribe(
                &subscription, context, EventSubjects.subject(partition: partition), nil, &wait, &options, &code)
        }
        try check("subscribing to partition \(partition) of \(stream)", status, code)
        return subscription!
    }

    /// Whether the connection is up (not reconnecting, not closed).
    var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    /// What `read` takes from the state of `subscription`'s consumer on the server; nil
    /// when JetStream says it does not exist, or nothing answers for it within
    /// `waitMilliseconds` (its server is gone).
    private func consumerInfo<R>(
        _ subscription: OpaquePointer, waitMilliseconds: Int64, _ read: (jsConsumerInfo) -> R
    ) throws -> R? {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = waitMilliseconds
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let status = natsSubscription_GetConsumerInfo(&info, subscription, &options, &code)
        if status == NATS_NOT_FOUND || status == NATS_TIMEOUT { return nil }
        try check("asking for a consumer's state", status, code)
        defer { jsConsumerInfo_Destroy(info) }
        return info.map { read($0.pointee) }
    }

    /// Where the consumer of `subscription` lives; nil as for `consumerInfo`.
    func consumerPlacement(_ subscription: OpaquePointer, waitMilliseconds: Int64) throws -> ConsumerPlacement? {
        try consumerInfo(subscription, waitMilliseconds: waitMilliseconds) { i in
            ConsumerPlacement(
                name: i.Name.map { String(cString: $0) } ?? "",
                server: i.Cluster?.pointee.Leader.map { String(cString: $0) } ?? "")
        }
    }

    /// What `subscription`'s consumer on the server says of its deliveries: the messages
    /// it has not yet sent, and the number of the last one it sent (they are numbered
    /// 1, 2, 3…); nil as for `consumerInfo`.
    func delivery(
        _ subscription: OpaquePointer, waitMilliseconds: Int64
    ) throws -> (pending: UInt64, delivered: UInt64)? {
        try consumerInfo(subscription, waitMilliseconds: waitMilliseconds) { ($0.NumPending, $0.Delivered.Consumer) }
    }

    /// Deletes the consumer `name`, waiting `waitMilliseconds` at most for the answer;
    /// a failure is let go (the server forgets a consumer 10 minutes after its last pull).
    func deleteConsumer(stream: String, name: String, waitMilliseconds: Int64) {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = waitMilliseconds
        _ = js_DeleteConsumer(context, stream, name, &options, nil)
    }

    /// Up to `count` messages, as soon as some are there; none after `waitMilliseconds`.
    ///
    /// It may bring a few hundred more when messages are already waiting in the
    /// subscription (the late part of an answer that a fetch stopped waiting for), or for a
    /// `count` under 8. libnats 3.4 (`_fetch` in js.c) takes the waiting messages first,
    /// then asks the server for the rest of the batch and reads until it holds exactly that
    /// rest: with more than half the batch waiting, it reads on past the array it made for
    /// the batch and corrupts the heap. So the batch asked for is then at least twice what
    /// is waiting, with room for more arriving meanwhile.
    func fetch(_ subscription: OpaquePointer, count: Int, waitMilliseconds: Int64) throws -> [FetchedMessage] {
        var waiting: Int32 = 0
        _ = natsSubscription_GetPending(subscription, &waiting, nil)
        let batch = waiting > 0 || count < 8 ? max(count, 2 * Int(waiting) + 200) : count
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, subscription, Int32(batch), max(1, waitMilliseconds), &code)
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
