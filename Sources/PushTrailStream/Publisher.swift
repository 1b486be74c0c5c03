import CNats
import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Publishes event lines to JetStream as the backend should: each line as one message
/// on `pushtrail.events.<partition>` with `Nats-Msg-Id: <event id>`, many in flight at
/// once, and waits for every acknowledgement of a batch before going on.
public final class Publisher {
    let connection: JetStreamConnection
    let partitions: Int
    private let acks: Acks
    /// The task of each notification published so far (by normalised id): a delivery
    /// goes to its notification's partition.
    private var notificationTasks: [String: Int64] = [:]
    private var decoder = EventDecoder()
    private var inFlight = 0
    /// Messages in flight before the acknowledgements are waited for.
    static let batch = 10_000

    /// JetStream's answers to the messages in flight, counted on the library's thread.
    final class Acks: @unchecked Sendable {
        private let monitor = Monitor()
        var stored = 0
        var duplicates = 0
        var failures: [String] = []

        func locked<R>(_ body: () -> R) -> R { monitor.locked(body) }
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var read = 0
        public var published = 0
        public var stored = 0
        public var duplicates = 0
        public var rejected = 0
        public var failed = 0
    }

    public private(set) var summary = Summary()

    public init(connection: JetStreamConnection, partitions: Int) {
        self.connection = connection
        self.partitions = partitions
        acks = connection.acks
    }

    /// Events that refer to a notification not seen yet (a delivery can come before
    /// it), by the notification's normalised id: published once it comes.
    private var waiting: [String: [(content: [UInt8], id: String, label: String)]] = [:]
    /// The notifications waited for, in the order the first of their events came.
    private var waitingOrder: [String] = []
    private var waitingCount = 0
    /// Events held back at most: past it, the oldest notification's are refused.
    static let maxWaiting = 100_000

    /// Publishes one input line (`content`, without its line break; `label` names it, as
    /// FILE:LINE); the lines refused, each with its label and reason (an event held back
    /// until its notification comes is neither published nor refused yet).
    public func publish(_ content: [UInt8], label: String) throws -> [(label: String, reason: String)] {
        summary.read += 1
        let event: FilingEvent
        do {
            event = try decoder.decodeForFiling(content[...])
        } catch {
            summary.rejected += 1
            return [(label, InvalidEvent.from(error).reason)]
        }
        if let task = event.taskID {
            try send(content, id: event.id, task: task)
            if event.type == .notification {
                let key = EventID.normalizedNotificationIDString(event.id)
                notificationTasks[key] = task
                for held in waiting.removeValue(forKey: key) ?? [] {
                    waitingCount -= 1
                    try send(held.content, id: held.id, task: task)
                }
            }
            return []
        }
        guard let ref = event.referencedNotificationID else {
            summary.rejected += 1
            return [(label, "it names no task and no notification, so it has no partition")]
        }
        let key = EventID.normalizedNotificationIDString(ref)
        if let task = notificationTasks[key] {
            try send(content, id: event.id, task: task)
            return []
        }
        if waiting[key] == nil { waitingOrder.append(key) }
        waiting[key, default: []].append((content, event.id, label))
        waitingCount += 1
        var refused: [(label: String, reason: String)] = []
        while waitingCount > Publisher.maxWaiting, !waitingOrder.isEmpty {
            refused += refuse(waitingOrder.removeFirst())
        }
        return refused
    }

    /// Refuses the events still waiting for their notification, at the end of the input.
    public func finish() throws -> [(label: String, reason: String)] {
        let refused = waitingOrder.flatMap { refuse($0) }
        waitingOrder = []
        try flush()
        return refused
    }

    private func refuse(_ key: String) -> [(label: String, reason: String)] {
        let held = waiting.removeValue(forKey: key) ?? []
        waitingCount -= held.count
        summary.rejected += held.count
        return held.map {
            ($0.label, "its notification \(key) is not in this input, so its task and partition are not known")
        }
    }

    private func send(_ content: [UInt8], id: String, task: Int64) throws {
        let partition = Partition.of(taskID: task, count: partitions)
        try connection.publishAsync(content, subject: EventSubjects.subject(partition: partition), id: id)
        summary.published += 1
        inFlight += 1
        if inFlight >= Publisher.batch { try flush() }
    }

    /// Waits for every acknowledgement of the messages in flight.
    public func flush() throws {
        guard inFlight > 0 else { return }
        try connection.waitForAcks()
        inFlight = 0
        acks.locked {
            summary.stored = acks.stored
            summary.duplicates = acks.duplicates
            summary.failed = acks.failures.count
        }
    }

    /// The first failures JetStream answered (at most `limit`).
    public func failures(limit: Int = 5) -> [String] { acks.locked { Array(acks.failures.prefix(limit)) } }
}

extension JetStreamConnection {
    /// Publishes `data` on `subject` with `id` as its `Nats-Msg-Id`, without waiting.
    func publishAsync(_ data: [UInt8], subject: String, id: String) throws {
        var message: OpaquePointer?
        try check(
            "making a message",
            data.withUnsafeBytes {
                natsMsg_Create(
                    &message, subject, nil, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count))
            })
        defer { natsMsg_Destroy(message) }  // nil once the library took it
        try check("setting Nats-Msg-Id", natsMsgHeader_Set(message, pushtrail_nats_msg_id, id))
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = 30_000
        try check("publishing to \(subject)", js_PublishMsgAsync(context, &message, &options))
    }

    /// Waits until JetStream has answered every message published (at most 2 minutes).
    func waitForAcks() throws {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = 120_000
        try check("waiting for JetStream's acknowledgements", js_PublishAsyncComplete(context, &options))
    }
}
