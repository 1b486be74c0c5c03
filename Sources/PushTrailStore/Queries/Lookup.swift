import PushTrailModel

/// What a search term names in a store: any of an event, a task, a thread and a user
/// (a term can name several: "1102" may be a task and a user).
public struct NamedThings: Equatable, Sendable {
    /// The event with this id (a notification's in any case), or at `@SEQ`.
    public var event: UInt64?
    /// The task with this number, when the store has an event of it.
    public var task: Int64?
    /// A thread of this id has events.
    public var thread = false
    /// A user of this id has events.
    public var user = false

    public var count: Int { (event == nil ? 0 : 1) + (task == nil ? 0 : 1) + (thread ? 1 : 0) + (user ? 1 : 0) }
}

extension StoreReader {
    /// What `term` names here, found through the indexes (no scan).
    public func named(_ term: String) throws -> NamedThings {
        var found = NamedThings()
        if term.hasPrefix("@"), let seq = UInt64(term.dropFirst()) {
            if try event(seq: seq) != nil { found.event = seq }
            return found
        }
        found.event = try seq(forID: term)
        if let t = Int64(term), term.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            try !seqs(.tasks, key: Layout.taskKey(t)).isEmpty
        {
            found.task = t
        }
        found.thread = try !seqs(.threads, key: Array(term.utf8)).isEmpty
        found.user = try !seqs(.users, key: Array(term.utf8)).isEmpty
        return found
    }
}
