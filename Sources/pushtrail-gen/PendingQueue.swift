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

/// A 4-ary min-heap on (time, order) of 16-byte nodes pointing into a slab of items: items
/// come out in simulated-time order, ties in the order they were scheduled, so the run is
/// deterministic; the small nodes keep the sifts in cache.
struct PendingQueue {
    private struct Node {
        var time: Int
        var order: UInt32
        var ref: Int32
    }

    private var nodes: [Node] = []
    private var slab: [Pending] = []
    private var free: [Int32] = []
    private var order: UInt32 = 0

    init(capacity: Int) {
        nodes.reserveCapacity(capacity)
        slab.reserveCapacity(capacity)
    }

    @inline(__always)
    private static func precedes(_ a: Node, _ b: Node) -> Bool {
        a.time < b.time || (a.time == b.time && a.order < b.order)
    }

    mutating func push(_ item: Pending) {
        let ref: Int32
        if let reused = free.popLast() {
            ref = reused
            slab[Int(reused)] = item
        } else {
            ref = Int32(slab.count)
            slab.append(item)
        }
        order &+= 1
        nodes.append(Node(time: item.time, order: order, ref: ref))
        nodes.withUnsafeMutableBufferPointer { heap in
            var child = heap.count - 1
            let moving = heap[child]
            while child > 0 {
                let parent = (child - 1) >> 2
                if !Self.precedes(moving, heap[parent]) { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = moving
        }
    }

    mutating func pop() -> Pending? {
        guard let last = nodes.popLast() else { return nil }
        let top: Node
        if nodes.isEmpty {
            top = last
        } else {
            top = nodes.withUnsafeMutableBufferPointer { heap in
                let top = heap[0]
                let count = heap.count
                var parent = 0
                while true {
                    let first = 4 * parent + 1
                    if first >= count { break }
                    var best = first
                    let end = min(first + 4, count)
                    var child = first + 1
                    while child < end {
                        if Self.precedes(heap[child], heap[best]) { best = child }
                        child += 1
                    }
                    if !Self.precedes(heap[best], last) { break }
                    heap[parent] = heap[best]
                    parent = best
                }
                heap[parent] = last
                return top
            }
        }
        free.append(top.ref)
        return slab[Int(top.ref)]
    }
}
