import Foundation
import PushTrailModel
import PushTrailStore
import Testing

@testable import PushTrailStream

/// A real `nats-server` with JetStream on a loopback port chosen by the system, its
/// store in a temporary directory; stopped and removed at the end.
final class NATSServer {
    let process = Process()
    let dir: String
    let url: String

    static var installed: Bool { path != nil }
    static var path: String? {
        [
            "/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server",
            "/opt/homebrew/bin/nats-server",
        ]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init() throws {
        dir = NSTemporaryDirectory() + "pushtrail-nats-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: NATSServer.path!)
        process.arguments = ["-js", "-sd", dir + "/data", "-a", "127.0.0.1", "-p", "-1", "-l", dir + "/log"]
        try process.run()
        var port: String?
        for _ in 0..<200 where port == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let log = (try? String(contentsOfFile: dir + "/log", encoding: .utf8)) ?? ""
            if let range = log.range(of: "Listening for client connections on 127.0.0.1:") {
                port = String(log[range.upperBound...].prefix { $0.isNumber })
            }
        }
        guard let port else {
            process.terminate()
            process.waitUntilExit()
            throw CocoaError(.fileReadUnknown, userInfo: ["log": dir + "/log"])
        }
        url = "nats://127.0.0.1:\(port)"
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

@Suite("publish and consume through a real nats-server")
struct JetStreamTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var sampleLines: [String] {
        let text =
            (try? String(contentsOf: root.appendingPathComponent("Samples/events.ndjson"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    @Test("CRC-32 as zlib computes it, partitions, and partition lists")
    func partitions() {
        #expect(Partition.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Partition.crc32([]) == 0)
        #expect(Partition.of(taskID: 1102, count: 8) == Int(Partition.crc32(Array("1102".utf8)) % 8))
        #expect(Partition.of(taskID: -5, count: 1) == 0)
        #expect(Partition.parseList("0-3,6,2", count: 8) == [0, 1, 2, 3, 6])
        for bad in ["", "3-1", "8", "-1", "a", "1,,2", "0-"] {
            #expect(Partition.parseList(bad, count: 8) == nil, "\(bad)")
        }
    }

    func publish(_ lines: [String], to server: NATSServer, partitions: Int = 8) throws -> Publisher.Summary {
        let connection = try JetStreamConnection(servers: [server.url]) { _ in }
        try connection.ensureStream(EventSubjects.defaultStream, replicas: 1)
        let publisher = Publisher(connection: connection, partitions: partitions)
        var refused: [String] = []
        for (i, line) in lines.enumerated() {
            refused += try publisher.publish(Array(line.utf8), label: "line \(i + 1)").map(\.reason)
        }
        refused += try publisher.finish().map(\.reason)
        #expect(refused.isEmpty, "\(refused)")
        return publisher.summary
    }

    /// Steps until the consumer is caught up, as `consume --drain` does: a step that
    /// finds nothing on a busy machine is not the end.
    func drain(_ consumer: Consumer, refused: (MessageAppender.Refusal) -> Void = { _ in }) throws {
        while try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: refused) != nil
            || !consumer.caughtUp()
        {}
    }

    func consume(_ server: NATSServer, store: Store, partitions: [Int]) throws -> (IngestSummary, [UInt64]) {
        let connection = try JetStreamConnection(servers: [server.url]) { _ in }
        let consumer = try Consumer(
            connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: partitions)
        consumer.batchEvents = 37  // several transactions, cut mid-partition
        try drain(consumer)
        let last = try partitions.map {
            try connection.lastSequence(stream: EventSubjects.defaultStream, partition: $0)
        }
        return (consumer.summary, last)
    }

    @Test(
        "8 partitions in 2 stores: every event once, in partition order, positions at the ends; again: no change",
        .enabled(if: NATSServer.installed))
    func exactlyOnce() throws {
        let server = try NATSServer()
        let lines = Self.sampleLines
        let first = try publish(lines, to: server)
        #expect(first.published == lines.count && first.stored == lines.count && first.duplicates == 0)
        try withTemporaryStores { a, b in
            let (sa, lastA) = try consume(server, store: a, partitions: [0, 1, 2, 3])
            let (sb, lastB) = try consume(server, store: b, partitions: [4, 5, 6, 7])
            #expect(sa.appended + sb.appended == lines.count && sa.rejected == 0 && sb.rejected == 0)
            // Each store holds exactly the events of its partitions.
            var decoder = EventDecoder()
            var expected: [Int: [String]] = [:]
            var tasks: [String: Int64] = [:]
            for line in lines {
                let e = try decoder.decodeForFiling(Array(line.utf8)[...])
                if let t = e.taskID, e.type == .notification { tasks[EventID.normalizedNotificationIDString(e.id)] = t }
            }
            for line in lines {
                let e = try decoder.decodeForFiling(Array(line.utf8)[...])
                let task = e.taskID ?? tasks[EventID.normalizedNotificationIDString(e.referencedNotificationID ?? "")]!
                expected[Partition.of(taskID: task, count: 8), default: []].append(e.id)
            }
            for (store, owned, last) in [(a, [0, 1, 2, 3], lastA), (b, [4, 5, 6, 7], lastB)] {
                let ids = try store.read { reader in
                    try (1...reader.head().seq).map { try reader.event(seq: $0)!.decode().id }
                }
                let wanted = owned.flatMap { expected[$0] ?? [] }
                #expect(Set(ids) == Set(wanted) && ids.count == wanted.count)
                // Within a partition, the store's order is the stream's.
                for p in owned {
                    let streamOrder = try streamIDs(server, partition: p)
                    #expect(ids.filter { streamOrder.contains($0) } == streamOrder, "partition \(p)")
                }
                let positions = try store.read { reader in
                    try owned.map { try reader.streamSequence(stream: EventSubjects.defaultStream, partition: $0) }
                }
                #expect(positions == last)
                #expect(try store.verify().ok)
            }
            // The same events again: JetStream drops every one, the stores stay as they are.
            let again = try publish(lines, to: server)
            #expect(again.duplicates == lines.count && again.stored == 0)
            let heads = try [a, b].map { try $0.read { try $0.head() } }
            let (ra, _) = try consume(server, store: a, partitions: [0, 1, 2, 3])
            let (rb, _) = try consume(server, store: b, partitions: [4, 5, 6, 7])
            #expect(ra.read == 0 && rb.read == 0)
            #expect(try [a, b].map { try $0.read { try $0.head() } } == heads)
        }
    }

    @Test(
        "a bad message is rejected with its STREAM/PARTITION@SEQ, and consumption goes past it",
        .enabled(if: NATSServer.installed))
    func badMessage() throws {
        let server = try NATSServer()
        let connection = try JetStreamConnection(servers: [server.url]) { _ in }
        try connection.ensureStream(EventSubjects.defaultStream, replicas: 1)
        try connection.publishAsync(Array("{not json".utf8), subject: EventSubjects.subject(partition: 2), id: "bad-1")
        try connection.waitForAcks()
        _ = try publish(Array(Self.sampleLines.prefix(40)), to: server)
        try withTemporaryStores { store, _ in
            let consumer = try Consumer(
                connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: [2])
            var refusals: [MessageAppender.Refusal] = []
            try drain(consumer) { refusals.append($0) }
            #expect(refusals.count == 1 && refusals.first?.label == "PUSHTRAIL/2@1")
            #expect(consumer.positions[2] == (try connection.lastSequence(stream: "PUSHTRAIL", partition: 2)))
            #expect(consumer.summary.appended > 0)
        }
    }

    @Test(
        "messages lost on the way are read again: a gap in deliveries drops the pass and resubscribes",
        .enabled(if: NATSServer.installed))
    func gap() throws {
        let server = try NATSServer()
        let lines = Array(Self.sampleLines.prefix(120))
        _ = try publish(lines, to: server, partitions: 1)
        try withTemporaryStores { store, _ in
            let connection = try JetStreamConnection(servers: [server.url]) { _ in }
            let consumer = try Consumer(
                connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: [0])
            consumer.batchEvents = 10
            consumer.quickWaitMilliseconds = 300
            #expect(
                try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 10
            )
            // Take 10 deliveries away, as a dropped connection would: the next step sees the gap.
            let stolen = try connection.fetch(consumer.subscriptions[0].subscription, count: 10, waitMilliseconds: 300)
            #expect(stolen.count == 10)
            #expect(
                try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 0)
            try drain(consumer)
            let stored = try store.read { try $0.head().seq }
            #expect(stored == UInt64(lines.count) && consumer.summary.duplicates == 0)
            #expect(try store.verify().ok)
        }
    }

    @Test(
        "a gap in the middle of a transaction: the passes before it commit, the rest is read again",
        .enabled(if: NATSServer.installed))
    func gapMidTransaction() throws {
        let server = try NATSServer()
        let lines = Array(Self.sampleLines.prefix(120))
        _ = try publish(lines, to: server, partitions: 1)
        try withTemporaryStores { store, _ in
            let connection = try JetStreamConnection(servers: [server.url]) { _ in }
            let consumer = try Consumer(
                connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: [0])
            consumer.fetchSize = 10
            consumer.quickWaitMilliseconds = 300
            var passes = 0
            var kept = 0
            consumer.onRound = {
                passes += 1
                // After the second pass, deliveries go astray, 10 more messages following
                // them: the next pass sees the gap. (A fetch brings everything that waits,
                // so the stolen ones may be all there was: 10 more are published before.
                // And it may come back empty at once, on the answer to an earlier pull.)
                if passes == 1 {
                    kept = consumer.received
                    _ = try? self.publish(Array(Self.sampleLines.prefix(130)), to: server, partitions: 1)
                    var stolen = 0
                    for _ in 0..<5 where stolen == 0 {
                        stolen =
                            (try? connection.fetch(
                                consumer.subscriptions[0].subscription, count: 10, waitMilliseconds: 300))?.count ?? 0
                    }
                    #expect(stolen >= 1)
                    _ = try? self.publish(Array(Self.sampleLines.prefix(140)), to: server, partitions: 1)
                }
            }
            #expect(
                try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 0)
            #expect(kept >= 2 && kept < 120)
            #expect(try store.read { try $0.head().seq } == UInt64(kept) && consumer.positions[0] == UInt64(kept))
            consumer.onRound = {}
            try drain(consumer)
            let stored = try store.read { try $0.head().seq }
            #expect(stored == 140 && consumer.summary.duplicates == 0)
            #expect(try store.verify().ok)
        }
    }

    @Test(
        "a transaction takes passes while more waits: a backlog in the main databases, a trickle in the tier",
        .enabled(if: NATSServer.installed))
    func transactionSizes() throws {
        let server = try NATSServer()
        let lines = Array(Self.sampleLines.prefix(120))
        _ = try publish(lines, to: server, partitions: 1)
        try withTemporaryStores { large, small in
            let connection = try JetStreamConnection(servers: [server.url]) { _ in }
            func consumer(_ store: Store) throws -> Consumer {
                let c = try Consumer(
                    connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: [0])
                c.fetchSize = 10
                c.quickWaitMilliseconds = 300
                return c
            }
            let step = { (c: Consumer) in
                try c.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in })
            }
            // A backlog over the threshold: every pass in one transaction, in the main databases.
            let a = try consumer(large)
            a.appender.largeBacklog = 50
            var passes = 0
            a.onRound = { passes += 1 }
            let before = large.lastTransactionID
            #expect(try step(a) == 120)
            #expect(large.lastTransactionID == before + 1)
            // (A fetch may bring more than it asked for when messages already wait: at
            // least one pass after the first, as 10 a fetch cannot hold 120.)
            #expect(passes >= 1)
            #expect(try large.read { try $0.recentTierEvents() } == 0)
            #expect(try large.read { try $0.head().seq } == 120 && a.positions[0] == 120)
            #expect(try step(a) == nil)
            // Caught up, though the answers to the pulls that expired reach the
            // subscription after the fetches gave up (what `--drain` waits for).
            for _ in 0..<3 { #expect(try step(a) == nil) }
            Thread.sleep(forTimeInterval: 0.2)
            #expect(try a.caughtUp())
            // Under it: one transaction too, filed in the recent tier.
            let b = try consumer(small)
            #expect(try step(b) == 120)
            #expect(try small.read { try $0.recentTierEvents() } == 120)
        }
        // A transaction stops at its size, and at a stop request after the pass in hand.
        try withTemporaryStores { capped, stopped in
            let connection = try JetStreamConnection(servers: [server.url]) { _ in }
            let c = try Consumer(
                connection: connection, store: capped, stream: EventSubjects.defaultStream, partitions: [0])
            c.fetchSize = 10
            c.quickWaitMilliseconds = 300
            c.batchEvents = 30
            #expect(try c.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 30)
            let d = try Consumer(
                connection: connection, store: stopped, stream: EventSubjects.defaultStream, partitions: [0])
            d.fetchSize = 10
            d.quickWaitMilliseconds = 300
            d.stopping = { true }
            #expect(try d.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 10)
            #expect(try stopped.read { try $0.head().seq } == 10 && d.positions[0] == 10)
        }
    }

    @Test(
        "a consumer the server no longer has is noticed once its partition is silent, said, and replaced",
        .enabled(if: NATSServer.installed))
    func lostConsumer() throws {
        let server = try NATSServer()
        let lines = Array(Self.sampleLines.prefix(120))
        _ = try publish(lines, to: server, partitions: 1)
        try withTemporaryStores { store, _ in
            let connection = try JetStreamConnection(servers: [server.url]) { _ in }
            let consumer = try Consumer(
                connection: connection, store: store, stream: EventSubjects.defaultStream, partitions: [0])
            consumer.batchEvents = 40
            consumer.silenceSeconds = 0
            var said: [String] = []
            consumer.tell = { said.append($0) }
            #expect(
                try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 40
            )
            // The server forgets the consumer, as when the server holding it goes.
            let placement = try #require(
                try connection.consumerPlacement(consumer.subscriptions[0].subscription, waitMilliseconds: 2000))
            connection.deleteConsumer(stream: EventSubjects.defaultStream, name: placement.name, waitMilliseconds: 2000)
            #expect(
                try consumer.step(waitMilliseconds: 300, clock: { Timestamp(microseconds: 1) }, refused: { _ in }) == 0)
            let on = placement.server.isEmpty ? "" : " on NATS server \(placement.server)"
            #expect(said == ["lost the consumer of partition 0\(on); reading again after 0@40"])
            try drain(consumer)
            let stored = try store.read { try $0.head().seq }
            #expect(stored == UInt64(lines.count) && consumer.summary.duplicates == 0 && said.count == 1)
            #expect(try store.verify().ok)
        }
    }

    /// The ids of `partition`'s messages, in stream order.
    func streamIDs(_ server: NATSServer, partition: Int) throws -> [String] {
        let connection = try JetStreamConnection(servers: [server.url]) { _ in }
        let subscription = try connection.pullSubscribe(
            stream: EventSubjects.defaultStream, partition: partition, after: 0)
        var decoder = EventDecoder()
        var ids: [String] = []
        while true {
            let batch = try connection.fetch(subscription, count: 500, waitMilliseconds: 300)
            if batch.isEmpty { break }
            ids += try batch.map { try decoder.decodeForFiling($0.data[...]).id }
        }
        return ids
    }

    func withTemporaryStores(_ body: (Store, Store) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "pushtrail-consume-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try Store(path: dir + "/a", create: true)
        let b = try Store(path: dir + "/b", create: true)
        try body(a, b)
    }
}
