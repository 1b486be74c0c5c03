import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value shared between test threads, behind a lock.
private final class Shared<Value>: @unchecked Sendable {
    private let monitor = Monitor()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<R>(_ body: (inout Value) -> R) -> R { monitor.locked { body(&value) } }
    var current: Value { monitor.locked { value } }
}

@Suite("OrderedQueue: batches numbered by several parsing threads reach the writer in order")
struct OrderedQueueTests {
    @Test("three producers at uneven speeds: the consumer takes 0, 1, 2… and then the end")
    func deliversInNumberOrder() {
        let queue = OrderedQueue<Int>(capacity: 2, producers: 3)
        let counter = Shared(0)
        let refused = Shared(0)
        let threads = (0..<3).map { t in
            WorkerThread {
                while true {
                    let n = counter.update { n -> Int in
                        defer { n += 1 }
                        return n
                    }
                    guard n < 3000 else { break }
                    if n % (t + 2) == 0 { usleep(UInt32(n % 5) * 20) }  // the threads overtake each other
                    if !queue.push(n * 10, number: n) { refused.update { $0 += 1 } }
                }
                queue.producerFinished()
            }
        }
        for thread in threads { thread.start() }
        var taken: [Int] = []
        while let item = queue.pop() { taken.append(item) }
        for thread in threads { thread.join() }
        #expect(taken == (0..<3000).map { $0 * 10 })
        #expect(refused.current == 0)
        if case .finished = queue.tryPop() {} else { Issue.record("the queue is not finished after the last producer") }
    }

    @Test("a batch two or more ahead of the next one due waits until the consumer takes that one")
    func boundsWhatWaits() {
        let queue = OrderedQueue<Int>(capacity: 2, producers: 1)
        #expect(queue.push(1, number: 1))
        if case .empty = queue.tryPop() {} else { Issue.record("batch 1 was given before batch 0") }
        #expect(queue.push(0, number: 0))
        let pushed = Shared(false)
        let producer = WorkerThread {
            _ = queue.push(2, number: 2)
            pushed.update { $0 = true }
        }
        producer.start()
        usleep(100_000)
        #expect(!pushed.current)  // 0 and 1 wait: 2 is not let in
        #expect(queue.pop() == 0)
        producer.join()  // taking 0 lets 2 in
        #expect(pushed.current)
        #expect(queue.pop() == 1)
        #expect(queue.pop() == 2)
        queue.producerFinished()
        #expect(queue.pop() == nil)
    }

    @Test("cancelling wakes a waiting producer, which is told the consumer has gone")
    func cancelReleasesProducers() {
        let queue = OrderedQueue<Int>(capacity: 2, producers: 1)
        let accepted = Shared<Bool?>(nil)
        let producer = WorkerThread {
            let result = queue.push(5, number: 5)
            accepted.update { $0 = result }
        }
        producer.start()
        usleep(50_000)
        #expect(accepted.current == nil)
        queue.cancel()
        producer.join()
        #expect(accepted.current == false)
        #expect(queue.isCancelled)
        #expect(!queue.push(0, number: 0))
        #expect(queue.pop() == nil)
    }
}
