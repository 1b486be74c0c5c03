import Foundation

/// Runs `body` on a thread of its own (a dispatch queue's pool may be no wider than
/// the cores, and busy readers would starve the writers a test runs beside them).
public func onThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
}

/// Messages gathered from several threads: how many, and the first hundred.
public final class Messages: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    private var added = 0

    public init() {}

    public func add(_ message: String) {
        lock.withLock {
            added += 1
            if list.count < 100 { list.append(message) }
        }
    }
    public var messages: [String] { lock.withLock { list } }
    public var count: Int { lock.withLock { added } }
}
