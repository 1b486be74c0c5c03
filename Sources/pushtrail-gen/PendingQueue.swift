/// Something that will happen later in simulated time.
enum PendingKind: UInt8 {
    /// The task's next move: a reminder, an in-app action, or retirement.
    case step
    /// The push service's answer to a notification (APNs or FCM).
    case delivery
    /// A user pressing a button (or tapping, or dismissing) on a notification.
    case response
    /// The backend telling a residence's members that a task changed state.
    case stateNotice
}

/// One scheduled item. Small and trivially copyable: the queue holds one step per task
/// slot plus the deliveries and responses in flight, never the events themselves.
struct Pending {
    var time: Int
    var taskId: Int
    /// The notification (deliveries and responses).
    var high: UInt64 = 0
    var low: UInt64 = 0
    var slot: Int32
    /// Recipient (delivery, response) or actor (state notice).
    var user: Int32 = -1
    var generation: UInt16 = 0
    var kind: PendingKind
    var device: UInt8 = 0
    /// Response: the buttons the notification showed (`ActionKind` bits); state notice: the
    /// state it announces.
    var detail: UInt8 = 0
    /// Delivery: 1 when the push service refuses the message (too large, or for FCM a
    /// non-string or reserved data key); response: the thread-id variant.
    var flag: UInt8 = 0
    /// Response: the system showed the notification itself, without its buttons (an FCM
    /// notification message).
    var buttonsHidden = false
}

/// A radix heap on the items' times: simulated time only moves forward (everything is
/// scheduled at or after the item being handled), so a monotone queue suffices. Pushes are
/// O(1) appends and pops move items between at most 65 arrays sequentially, which stays
/// cache-friendly with hundreds of thousands of items in flight. Items with equal times
/// come out in a fixed order, so the run is deterministic.
struct PendingQueue {
    private var buckets: [[Pending]]
    private var last: Int
    private(set) var count = 0

    init(capacity: Int, origin: Int) {
        buckets = Array(repeating: [], count: 65)
        buckets[64].reserveCapacity(capacity)
        last = origin
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func bucket(for time: Int) -> Int {
        let difference = UInt64(bitPattern: Int64(time ^ last))
        return difference == 0 ? 0 : 64 - difference.leadingZeroBitCount
    }

    mutating func push(_ item: Pending) {
        var item = item
        if item.time < last { item.time = last }
        buckets[bucket(for: item.time)].append(item)
        count += 1
    }

    mutating func pop() -> Pending? {
        guard count > 0 else { return nil }
        if buckets[0].isEmpty {
            var index = 1
            while buckets[index].isEmpty { index += 1 }
            var moving: [Pending] = []
            swap(&moving, &buckets[index])
            var smallest = Int.max
            for item in moving where item.time < smallest { smallest = item.time }
            last = smallest
            for item in moving {
                buckets[bucket(for: item.time)].append(item)
            }
            // Keep small buffers for reuse; give large ones back so that the peak sizes of
            // all 65 buckets do not add up.
            if moving.capacity <= 4096 {
                moving.removeAll(keepingCapacity: true)
                swap(&moving, &buckets[index])
            }
        }
        count -= 1
        return buckets[0].popLast()
    }
}
