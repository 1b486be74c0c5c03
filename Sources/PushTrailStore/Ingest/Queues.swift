/// Batches numbered 0, 1, 2… by several producers, given to one consumer in that order:
/// the parsing threads' handoffs reach the writer in input order, whichever thread
/// decoded them. Beside it, `HandBackQueue` takes the writer's spent events back.
/// A producer waits while its batch is `capacity` or more ahead of the next one due,
/// so at most `capacity` wait here. `pop` returns nil once every producer has finished
/// and all they handed in has been taken.
final class OrderedQueue<Element: Sendable>: @unchecked Sendable {
    private let monitor = Monitor()
    private var waiting: [Int: Element] = [:]
    private var next = 0
    private let capacity: Int
    private var producers: Int
    private var cancelled = false

    init(capacity: Int, producers: Int) {
        self.capacity = capacity
        self.producers = producers
    }

    /// Blocks while `number` is too far ahead; false when the consumer has gone.
    func push(_ item: Element, number: Int) -> Bool {
        monitor.locked {
            while number >= next + capacity && !cancelled { monitor.wait() }
            guard !cancelled else { return false }
            waiting[number] = item
            monitor.broadcast()
            return true
        }
    }

    /// A producer has handed in everything it will.
    func producerFinished() {
        monitor.locked {
            producers -= 1
            monitor.broadcast()
        }
    }

    enum Poll {
        case item(Element)
        /// Nothing yet; more may come.
        case empty
        /// Every producer has finished, and all they handed in has been taken.
        case finished
    }

    /// Takes the next batch without waiting.
    func tryPop() -> Poll {
        monitor.locked {
            if let item = takeNext() { return .item(item) }
            return producers == 0 ? .finished : .empty
        }
    }

    func pop() -> Element? {
        monitor.locked {
            while true {
                if let item = takeNext() { return item }
                if producers == 0 || cancelled { return nil }
                monitor.wait()
            }
        }
    }

    /// The batch due next, if it is here; call with the lock held.
    private func takeNext() -> Element? {
        guard let item = waiting.removeValue(forKey: next) else { return nil }
        next += 1
        monitor.broadcast()  // a producer may wait for room
        return item
    }

    /// The consumer has gone.
    var isCancelled: Bool { monitor.locked { cancelled } }

    func cancel() {
        monitor.locked {
            cancelled = true
            waiting.removeAll()
            monitor.broadcast()
        }
    }
}

/// Items handed from one thread to others, taken without waiting (the writer hands
/// appended events back to the parsing threads, to be freed there).
final class HandBackQueue<Element: Sendable>: @unchecked Sendable {
    private let monitor = Monitor()
    private var items: [Element] = []

    func push(_ item: Element) {
        monitor.locked { items.append(item) }
    }

    /// The oldest item, or nil when there is none.
    func tryPop() -> Element? {
        monitor.locked { items.isEmpty ? nil : items.removeFirst() }
    }
}
