import PushTrailModel

/// Lets appends that arrive together share one write transaction (group commit).
///
/// Each commit copies every page its transaction touched and waits for the disk, so
/// fewer, larger commits append faster. Bodies are filed in the recent tier
/// (`Store.write`'s `tiered`). Bodies that finish while another commit is under way wait for it,
/// then one of them commits all of them at once: each body is still stored whole or
/// not at all, in the order they queued, and each caller returns only once its events
/// are durable. A lone body commits at once, as without the group. A group takes up to
/// `maxEvents` events, since the transaction holds its dirty pages in memory until it
/// commits.
public final class GroupCommit: @unchecked Sendable {
    let store: Store
    private let monitor = Monitor()
    /// Bodies waiting for the next commit, in arrival order.
    private var queue: [Request] = []
    /// A caller is committing a group.
    private var committing = false

    final class Request {
        let events: [PendingEvent]
        let dictionary: RecordDictionary?
        var result: Result<[AppendOutcome], Error>?

        init(_ events: [PendingEvent], _ dictionary: RecordDictionary?) {
            self.events = events
            self.dictionary = dictionary
        }
    }

    private var commits = 0
    private var bodies = 0

    /// Groups committed (or refused) so far, and the bodies they held.
    public var counts: (commits: Int, bodies: Int) { monitor.locked { (commits, bodies) } }

    /// Events one group takes at most, unless its first body alone has more.
    let maxEvents: Int
    /// The dictionary the bodies' records are compressed with, shared by them all.
    public let dictionaries = DictionarySampler()

    public init(store: Store, maxEvents: Int = 15_000) {
        self.store = store
        self.maxEvents = maxEvents
    }

    /// Appends `events` (compressed with `dictionary`, if any) in a transaction shared
    /// with the bodies queued at the same time; their outcomes once it has committed.
    /// A refused commit throws for every body of its group.
    public func append(
        _ events: [PendingEvent], dictionary: RecordDictionary?, recordedAt clock: @escaping () -> Timestamp
    ) throws -> [AppendOutcome] {
        let request = Request(events, dictionary)
        monitor.lock()
        queue.append(request)
        while request.result == nil {
            guard !committing else {
                monitor.wait()
                continue
            }
            committing = true
            let group = takeGroup()
            monitor.unlock()
            let results = commit(group, clock)
            monitor.lock()
            for (member, result) in zip(group, results) { member.result = result }
            commits += 1
            bodies += group.count
            committing = false
            monitor.broadcast()
        }
        monitor.unlock()
        return try request.result!.get()
    }

    /// The queued bodies, from the first, up to `maxEvents` events (the first always):
    /// a transaction's dirty pages are held in memory until it commits.
    private func takeGroup() -> [Request] {
        var events = 0
        var count = 0
        while count < queue.count && (count == 0 || events + queue[count].events.count <= maxEvents) {
            events += queue[count].events.count
            count += 1
        }
        let group = Array(queue.prefix(count))
        queue.removeFirst(count)
        return group
    }

    private func commit(_ group: [Request], _ clock: @escaping () -> Timestamp) -> [Result<[AppendOutcome], Error>] {
        do {
            let outcomes = try store.write(recordedAt: clock, tiered: true) { writer in
                try group.map { try writer.append($0.events, dictionary: $0.dictionary) }
            }
            return outcomes.map { .success($0) }
        } catch {
            return group.map { _ in .failure(error) }
        }
    }
}
