/// Something that will happen later in simulated time.
enum PendingKind: UInt8 {
    /// The task's next move: a reminder, an in-app action, or retirement.
    case step
    /// The APNs answer to a notification.
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
    var order: Int
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
    /// Response: the notification's category; state notice: the state it announces.
    var detail: UInt8 = 0
    /// Delivery: 1 when the payload was too large; response: the thread-id variant.
    var flag: UInt8 = 0
}

/// A binary min-heap on (time, order): items come out in simulated-time order, ties in
/// the order they were scheduled, so the run is deterministic.
struct PendingQueue {
    private var items: [Pending] = []

    init(capacity: Int) {
        items.reserveCapacity(capacity)
    }

    var isEmpty: Bool { items.isEmpty }

    @inline(__always)
    private static func precedes(_ a: Pending, _ b: Pending) -> Bool {
        a.time < b.time || (a.time == b.time && a.order < b.order)
    }

    mutating func push(_ item: Pending) {
        items.append(item)
        items.withUnsafeMutableBufferPointer { heap in
            var child = heap.count - 1
            let moving = heap[child]
            while child > 0 {
                let parent = (child - 1) >> 1
                if !Self.precedes(moving, heap[parent]) { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = moving
        }
    }

    mutating func pop() -> Pending? {
        guard let last = items.popLast() else { return nil }
        if items.isEmpty { return last }
        return items.withUnsafeMutableBufferPointer { heap in
            let top = heap[0]
            let count = heap.count
            var parent = 0
            while true {
                var child = 2 * parent + 1
                if child >= count { break }
                if child + 1 < count, Self.precedes(heap[child + 1], heap[child]) { child += 1 }
                if !Self.precedes(heap[child], last) { break }
                heap[parent] = heap[child]
                parent = child
            }
            heap[parent] = last
            return top
        }
    }
}
