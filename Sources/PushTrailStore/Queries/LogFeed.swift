import PushTrailModel

/// A store's `log`, read on a thread of its own a little ahead of the one taking it:
/// for a merge of several stores' logs that holds a few events of each, not each whole
/// log. The reading thread holds one read transaction from the first event to the last
/// (or until `cancel`), so the events are one snapshot's. Call `cancel` when done: it
/// ends the reading and lets the feed go.
public final class LogFeed: @unchecked Sendable {
    private let monitor = Monitor()
    private var buffered: [LoadedEvent] = []
    private var taken = 0
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    private var unbounded = false
    private let capacity: Int
    private var thread: WorkerThread?

    /// Starts reading `store`'s events matching `query` in timeline order (newest first
    /// with `reverse`), at most `capacity` ahead of `next()`.
    public init(store: Store, query: LogQuery, reverse: Bool, capacity: Int = 512) {
        self.capacity = max(1, capacity)
        let read: @Sendable () -> Void = { [self] in
            do {
                try store.read { reader in
                    try reader.log(query, reverse: reverse) { self.put($0) }
                }
            } catch {
                monitor.locked { failure = error }
            }
            monitor.locked { ended = true }
            monitor.broadcast()
        }
        let thread = WorkerThread(read)
        if thread.tryStart() {
            self.thread = thread
        } else {
            // No thread to be had: the whole log read here, held until taken.
            monitor.locked { unbounded = true }
            read()
        }
    }

    /// The next event, waiting for it; nil once the log has ended. Throws what stopped
    /// the reading, once the events read before it have been taken.
    public func next() throws -> LoadedEvent? {
        monitor.lock()
        defer { monitor.unlock() }
        while taken == buffered.count && !ended { monitor.wait() }
        guard taken < buffered.count else {
            if let failure { throw failure }
            return nil
        }
        let event = buffered[taken]
        taken += 1
        // Drop what was taken once it is half the buffer, keeping the copy short.
        if taken >= capacity / 2 {
            buffered.removeFirst(taken)
            taken = 0
            monitor.broadcast()
        }
        return event
    }

    /// Stops the reading (a reader that wants no more) and waits for its thread.
    public func cancel() {
        monitor.locked { cancelled = true }
        monitor.broadcast()
        thread?.join()
        thread = nil
    }

    /// Called on the reading thread with each event: waits while the buffer is full.
    private func put(_ event: LoadedEvent) -> Bool {
        monitor.lock()
        defer { monitor.unlock() }
        while buffered.count - taken >= capacity && !cancelled && !unbounded { monitor.wait() }
        guard !cancelled else { return false }
        buffered.append(event)
        monitor.broadcast()
        return true
    }
}
