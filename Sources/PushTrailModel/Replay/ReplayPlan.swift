/// The schedule of a simulator replay: a thread's timeline cut into one step per
/// notification, each with how long to wait before pushing it and the other events
/// (actions, deliveries) that happened since the previous one.
///
/// A pure function of the timeline and the options, so the timing can be checked
/// exactly without sleeping. `Item` is whatever the caller replays (`TimelineEntry` in
/// the command, plain values in tests).
public struct ReplayPlan<Item> {
    public struct Step {
        /// The notification to push.
        public var notification: Item
        /// How long to wait before pushing it, in microseconds: the real gap divided by
        /// the speed (to the nearest microsecond), at most the cap. 0 for the first.
        public var waitMicroseconds: Int64
        /// The real time since the previous notification, in microseconds (0 for the first).
        public var gapMicroseconds: Int64
        /// Whether the cap shortened the wait.
        public var capped: Bool
        /// The other events since the previous notification (for the first step, every
        /// event before it), in timeline order: shown before the wait.
        public var before: [Item]
    }

    public var steps: [Step]
    /// The events after the last notification.
    public var after: [Item]

    /// Plans `timeline`, which must be in (at, seq) order.
    ///
    /// - Parameters:
    ///   - speed: how many times faster than real time (> 0).
    ///   - maxWaitMicroseconds: the longest wait; nil for no cap.
    public init(
        _ timeline: [Item], at: (Item) -> Timestamp, isNotification: (Item) -> Bool,
        speed: Double = 1, maxWaitMicroseconds: Int64? = nil
    ) {
        precondition(speed > 0 && speed.isFinite, "speed must be a positive number")
        steps = []
        var pending: [Item] = []
        var previous: Timestamp?
        for item in timeline {
            guard isNotification(item) else {
                pending.append(item)
                continue
            }
            let gap = previous.map { max(0, at(item).microseconds - $0.microseconds) } ?? 0
            // In Double, clamped before converting: a tiny speed must not overflow Int64.
            let scaled = min((Double(gap) / speed).rounded(), Double(Int64.max / 2))
            var wait = Int64(scaled)
            var capped = false
            if let cap = maxWaitMicroseconds, wait > cap {
                wait = cap
                capped = true
            }
            steps.append(
                Step(notification: item, waitMicroseconds: wait, gapMicroseconds: gap, capped: capped, before: pending))
            pending = []
            previous = at(item)
        }
        after = pending
    }
}
