/// The audit finding codes (SPEC §6), in the order the SPEC lists them.
public enum FindingCode: String, Sendable, CaseIterable, Comparable {
    case categoryStateMismatch = "category_state_mismatch"
    case buttonsCategoryMismatch = "buttons_category_mismatch"
    case premiumMismatch = "premium_mismatch"
    case threadIDMismatch = "thread_id_mismatch"
    case invalidTransition = "invalid_transition"
    case actionNotOffered = "action_not_offered"
    case notificationAfterDelete = "notification_after_delete"
    case payloadTooLarge = "payload_too_large"
    case deliveryFailed = "delivery_failed"
    case sentAfterUnregistered = "sent_after_unregistered"

    public static func < (a: FindingCode, b: FindingCode) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One audit finding: what is wrong with which event, with the evidence in one line.
public struct Finding: Equatable, Sendable {
    public var code: FindingCode
    public var seq: UInt64
    public var id: String
    public var taskID: Int64?
    public var at: Timestamp
    public var message: String
}

/// What the analyzer needs to know beyond the events it is fed: the notifications
/// that actions and deliveries refer to, and when devices were unregistered.
public protocol AuditContext {
    /// The notification with this (normalised) id, wherever it is in the timeline.
    func notification(_ id: String) -> NotificationFacts?
    /// The earliest 410 delivery (Unregistered / ExpiredToken) for a notification to
    /// `device` strictly before `position`, if any.
    func unregistration(device: String, before position: Position) -> Unregistration?
}

/// The parts of a notification that rules about other events need.
public struct NotificationFacts: Sendable, Equatable {
    public var id: String
    public var seq: UInt64
    public var at: Timestamp
    public var category: String?
    public var taskID: Int64?
    public var device: String?
    public var threadID: String?

    public init(id: String, seq: UInt64, at: Timestamp, notification: PushNotification, device: String?) {
        self.id = id
        self.seq = seq
        self.at = at
        self.category = notification.category
        self.taskID = notification.taskID
        self.device = device
        self.threadID = notification.threadID
    }
}

/// A 410 answer that marks a device token as gone.
public struct Unregistration: Sendable, Equatable {
    public var deliveryID: String
    public var seq: UInt64
    public var at: Timestamp
    public var reason: String
}

/// What the analyzer says about one event.
public struct Analysis: Sendable {
    /// The task the event belongs to (a delivery's is its notification's).
    public var taskID: Int64?
    /// The task's state after the event.
    public var stateAfter: TaskState?
    /// For an action: the state before and after.
    public var transition: Transition?
    public var findings: [Finding]
}

/// Runs the task fold and the audit rules over events fed in (at, seq) order.
///
/// One analyzer serves `task` (fed one task's events), `thread` (fed the events of the
/// thread's tasks and the thread's deliveries) and `audit` (fed everything), so a
/// finding reads the same wherever it is shown.
public struct Analyzer {
    private var table = TaskTable()
    /// The snapshots of the tasks met so far, by id.
    public var tasks: [Int64: TaskSnapshot] { table.all }
    let context: any AuditContext
    /// Mask device tokens in messages.
    let maskTokens: (String) -> String

    public init(context: any AuditContext, maskTokens: @escaping (String) -> String) {
        self.context = context
        self.maskTokens = maskTokens
    }

    /// The snapshot of `taskID` as of the last event fed.
    public func task(_ taskID: Int64) -> TaskSnapshot { table[taskID] ?? TaskSnapshot(taskID: taskID) }

    /// Feeds one event; returns its task, the task's state after it and its findings.
    public mutating func process(_ event: Event, seq: UInt64) -> Analysis {
        let position = Position(at: event.at, seq: seq)
        var findings: [Finding] = []
        func flag(_ code: FindingCode, _ task: Int64?, _ message: String) {
            findings.append(Finding(code: code, seq: seq, id: event.id, taskID: task, at: event.at, message: message))
        }
        // Messages are built only for findings, which few events have.
        func shortID() -> String { Analyzer.short(event.id) }
        switch event.body {
        case .notification(let n):
            let taskID = n.taskID
            var snapshot = taskID.map { task($0) }
            func label() -> String { "notification " + shortID() }
            let premium = n.isPremium != false
            let category = n.category
            let shownCategory = category ?? "no category"
            if let snap = snapshot {
                if snap.state == .deleted {
                    flag(.notificationAfterDelete, taskID, "\(label()) was sent for task \(snap.taskID), which was deleted\(Analyzer.by(snap.lastChange))")
                } else if premium, category != Category.generic.rawValue, let expected = snap.state.expectedCategory,
                    category != expected.rawValue
                {
                    flag(.categoryStateMismatch, taskID,
                         "\(label()) sent \(shownCategory) for task \(snap.taskID), which was \(snap.state)\(Analyzer.by(snap.lastChange)); expected \(expected.rawValue)")
                }
            }
            if let buttons = n.buttons {
                let expected = Category.buttons(of: category).map(\.rawValue)
                if !Analyzer.sameElements(buttons, expected) {
                    flag(.buttonsCategoryMismatch, taskID,
                         "\(label()) offered buttons [\(Analyzer.list(buttons))] but \(shownCategory) has [\(Analyzer.list(expected))]")
                }
            }
            if !premium && category != Category.generic.rawValue {
                flag(.premiumMismatch, taskID, "\(label()) to free user \(event.user) (is_premium false) has category \(shownCategory), not \(Category.generic.rawValue)")
            } else if premium && category == Category.generic.rawValue {
                flag(.premiumMismatch, taskID, "\(label()) to premium user \(event.user) has category \(Category.generic.rawValue)")
            }
            if let taskID, n.threadID != "task-" + String(taskID) {
                let shown = n.threadID.map { "\"\($0)\"" } ?? "no thread-id"
                flag(.threadIDMismatch, taskID, "\(label()) has \(shown), expected \"task-\(taskID)\" for task \(taskID)")
            }
            if n.payloadSize > 4096 {
                flag(.payloadTooLarge, taskID, "\(label()) payload is \(n.payloadSize) bytes, over APNs' 4096-byte limit")
            }
            if let device = event.device, let gone = context.unregistration(device: device, before: position) {
                flag(.sentAfterUnregistered, taskID,
                     "\(label()) was sent to device \(maskTokens(device)) at \(event.at), after APNs answered 410 \(gone.reason) for it at \(gone.at) (delivery \(Analyzer.short(gone.deliveryID)), seq \(gone.seq))")
            }
            if var snap = snapshot {
                TaskFold.apply(event, seq: seq, to: &snap)
                table.store(snap)
                snapshot = snap
            }
            return Analysis(taskID: taskID, stateAfter: snapshot?.state, transition: nil, findings: findings)

        case .action(let a):
            var snap = task(a.taskID)
            let transition = TaskFold.apply(event, seq: seq, to: &snap)
            table.store(snap)
            func label() -> String { "action " + shortID() + " (" + a.action.rawValue + ", " + a.outcome.rawValue + ")" }
            if transition.invalid {
                if transition.from == .deleted {
                    flag(.invalidTransition, a.taskID,
                         "\(label()) on task \(a.taskID), which was deleted\(Analyzer.by(snap.lastChange)); it changed nothing")
                } else {
                    flag(.invalidTransition, a.taskID,
                         "\(label()) took task \(a.taskID) from \(transition.from) to \(transition.to), which the state machine does not allow")
                }
            }
            if let ref = a.notificationID, let facts = context.notification(ref), !Category.offers(facts.category, a.action) {
                let offered = Category.buttons(of: facts.category).map(\.rawValue)
                flag(.actionNotOffered, a.taskID,
                     "\(label()) pressed \(a.action.rawValue) on notification \(Analyzer.short(facts.id)), whose category \(facts.category ?? "(none)") offers [\(Analyzer.list(offered))]")
            }
            return Analysis(taskID: a.taskID, stateAfter: snap.state, transition: transition, findings: findings)

        case .delivery(let d):
            let facts = context.notification(d.notificationID)
            let taskID = facts?.taskID
            if d.status != 200 {
                flag(.deliveryFailed, taskID,
                     "delivery \(shortID()) for notification \(Analyzer.short(d.notificationID)): APNs answered \(d.status)\(d.reason.map { " " + $0 } ?? "")")
            }
            return Analysis(taskID: taskID, stateAfter: taskID.map { task($0).state }, transition: nil, findings: findings)
        }
    }

    /// " at T by action X (seq N)" when known.
    static func by(_ change: StateChange?) -> String {
        guard let change else { return "" }
        return " at \(change.at) by action \(short(change.eventID)) (seq \(change.seq))"
    }

    /// Whether `a` and `b` hold the same strings, ignoring order and repeats (what
    /// `Set(a) == Set(b)` says, without a `Set`: see `TaskTable`).
    static func sameElements(_ a: [String], _ b: [String]) -> Bool {
        a.allSatisfy { b.contains($0) } && b.allSatisfy { a.contains($0) }
    }

    /// "a, b, c". By hand: joined(separator:) runs unspecialised, and its first call
    /// costs a runtime conformance scan.
    static func list(_ items: [String]) -> String {
        var out = ""
        for (i, item) in items.enumerated() {
            if i > 0 { out += ", " }
            out += item
        }
        return out
    }

    /// Long ids (UUIDs) cut to their first 8 characters for messages.
    static func short(_ id: String) -> String {
        id.count > 12 ? String(id.prefix(8)) + "…" : id
    }

}

/// The analyzer's task snapshots by id: a short array searched in order while few
/// tasks are known (a `task` or `thread` query meets one or two), a dictionary past
/// that (an audit of the whole log). A short query so never instantiates the
/// dictionary's generic metadata, which for a new key type costs the Swift runtime a
/// scan of every protocol conformance in the binary (about 0.1M instructions).
struct TaskTable {
    private var few: [TaskSnapshot] = []
    private var many: [Int64: TaskSnapshot] = [:]
    static let fewLimit = 16

    subscript(taskID: Int64) -> TaskSnapshot? {
        if many.isEmpty {
            for snapshot in few where snapshot.taskID == taskID { return snapshot }
            return nil
        }
        return many[taskID]
    }

    /// Files `snapshot` under its task id, replacing the one there.
    mutating func store(_ snapshot: TaskSnapshot) {
        if many.isEmpty {
            for i in few.indices where few[i].taskID == snapshot.taskID {
                few[i] = snapshot
                return
            }
            if few.count < TaskTable.fewLimit {
                few.append(snapshot)
                return
            }
            for s in few { many[s.taskID] = s }
            few = []
        }
        many[snapshot.taskID] = snapshot
    }

    var all: [Int64: TaskSnapshot] {
        if !many.isEmpty { return many }
        var out: [Int64: TaskSnapshot] = [:]
        for s in few { out[s.taskID] = s }
        return out
    }
}
