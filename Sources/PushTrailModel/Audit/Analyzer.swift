/// The audit finding codes (docs/AUDIT.md), in the order reports list them.
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
    case tooManyActions = "too_many_actions"
    case fcmNotificationMessage = "fcm_notification_message"
    case fcmInvalidData = "fcm_invalid_data"

    public static func < (a: FindingCode, b: FindingCode) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One audit finding: what is wrong with which event, and the evidence for it.
///
/// The evidence is kept as values, not words: a device token stays whole in it, and
/// only `message(tokens:)` decides how it is shown.
public struct Finding: Equatable, Sendable {
    public var code: FindingCode
    public var seq: UInt64
    public var id: String
    public var taskID: Int64?
    public var at: Timestamp
    public var evidence: Evidence

    public init(code: FindingCode, seq: UInt64, id: String, taskID: Int64?, at: Timestamp, evidence: Evidence) {
        self.code = code
        self.seq = seq
        self.id = id
        self.taskID = taskID
        self.at = at
        self.evidence = evidence
    }

    /// The facts behind a finding, one case per kind of rule.
    public enum Evidence: Equatable, Sendable {
        /// A notification for a task that was deleted (by `deletion`, when known).
        case sentAfterDelete(taskID: Int64, deletion: StateChange?)
        /// A premium notification whose category is not the one for the task's state.
        case categoryForState(category: String?, taskID: Int64, state: TaskState, since: StateChange?, expected: String)
        /// `button_types` that differ, as a set, from the category's buttons on the platform.
        case buttonsForCategory(buttons: [String], category: String?, platform: Platform, expected: [String])
        /// A free user's notification with a premium category.
        case premiumCategoryForFreeUser(user: String, category: String?)
        /// A premium user's notification with the generic category.
        case genericCategoryForPremiumUser(user: String)
        /// A thread id that is not `task-{task_id}` (nil: none).
        case threadID(found: String?, taskID: Int64)
        /// A payload over the push service's limit.
        case payloadSize(bytes: Int, limit: Int, platform: Platform)
        /// A notification to a device whose token was declared dead earlier.
        case sentToDeadToken(device: String, sentAt: Timestamp, deadSince: Unregistration)
        /// An accepted action the state machine does not allow.
        case transition(action: ActionKind, outcome: Outcome, taskID: Int64, from: TaskState, to: TaskState)
        /// An accepted action on a task already deleted (by `deletion`, when known).
        case actionAfterDelete(action: ActionKind, outcome: Outcome, taskID: Int64, deletion: StateChange?)
        /// A press of a button the notification did not show.
        case notOffered(
            action: ActionKind, outcome: Outcome, notificationID: String, category: String?, platform: Platform,
            offered: [String])
        /// A push service answer other than 200.
        case deliveryRefused(notificationID: String, status: Int, reason: String?, platform: Platform)
        /// Android: more buttons listed than Android shows; `hidden` never appeared.
        case tooManyButtons(buttons: [String], hidden: [String])
        /// Android: a notification message (`blocks`), whose buttons never appear while
        /// the app is in the background.
        case notificationMessage(blocks: [String], buttons: [String])
        /// Android: data entries FCM refuses or drops.
        case invalidData([DataProblem])
        /// A finding another store made (a shard of a cluster): its message as that
        /// store wrote it, device tokens already shown as asked.
        case stated(String)
    }

    /// The finding in one line, device tokens as `tokens` shows them.
    public func message(tokens: (String) -> String) -> String {
        let short = Finding.short
        switch evidence {
        case .stated(let message):
            return message
        case .sentAfterDelete(let taskID, let deletion):
            return "notification \(short(id)) was sent for task \(taskID), which was deleted\(Finding.by(deletion))"
        case .categoryForState(let category, let taskID, let state, let since, let expected):
            return "notification \(short(id)) sent \(category ?? "no category") for task \(taskID), which was \(state)"
                + "\(Finding.by(since)); expected \(expected)"
        case .buttonsForCategory(let buttons, let category, let platform, let expected):
            return
                "notification \(short(id)) offered buttons [\(Finding.list(buttons))] but \(category ?? "no category") "
                + "has [\(Finding.list(expected))]" + (platform == .android ? " on Android" : "")
        case .premiumCategoryForFreeUser(let user, let category):
            return "notification \(short(id)) to free user \(user) (is_premium false) has "
                + (category.map { "category " + $0 } ?? "no category") + ", not \(Category.generic.rawValue)"
        case .genericCategoryForPremiumUser(let user):
            return "notification \(short(id)) to premium user \(user) has category \(Category.generic.rawValue)"
        case .threadID(let found, let taskID):
            let shown = found.map { "\"\($0)\"" } ?? "no thread-id"
            return "notification \(short(id)) has \(shown), expected \"task-\(taskID)\" for task \(taskID)"
        case .payloadSize(let bytes, let limit, let platform):
            return "notification \(short(id)) payload is \(bytes) bytes, over \(platform.servicePossessive) "
                + "\(limit)-byte limit"
        case .sentToDeadToken(let device, let sentAt, let gone):
            return
                "notification \(short(id)) was sent to device \(tokens(device)) at \(sentAt), after "
                + "\(gone.platform.service) answered \(gone.status) \(gone.reason) for it at \(gone.at) "
                + "(delivery \(short(gone.deliveryID)), seq \(gone.seq))"
        case .transition(let action, let outcome, let taskID, let from, let to):
            return
                "\(Finding.actionLabel(id, action, outcome)) took task \(taskID) from \(from) to \(to), "
                + "which the state machine does not allow"
        case .actionAfterDelete(let action, let outcome, let taskID, let deletion):
            return
                "\(Finding.actionLabel(id, action, outcome)) on task \(taskID), "
                + "which was deleted\(Finding.by(deletion)); it changed nothing"
        case .notOffered(let action, let outcome, let notificationID, let category, let platform, let offered):
            let shown =
                platform == .android
                ? "an Android notification that showed" : "whose category \(category ?? "(none)") offers"
            return "\(Finding.actionLabel(id, action, outcome)) pressed \(action.rawValue) on notification "
                + "\(short(notificationID)), \(shown) [\(Finding.list(offered))]"
        case .deliveryRefused(let notificationID, let status, let reason, let platform):
            return "delivery \(short(id)) for notification \(short(notificationID)): "
                + "\(platform.service) answered \(status)" + (reason.map { " " + $0 } ?? "")
        case .tooManyButtons(let buttons, let hidden):
            return "Android notification \(short(id)) lists \(buttons.count) buttons [\(Finding.list(buttons))]; "
                + "Android shows \(PushNotification.androidButtonLimit), "
                + "so the user never saw [\(Finding.list(hidden))]"
        case .notificationMessage(let blocks, let buttons):
            return "Android notification \(short(id)) has a \(Finding.list(blocks)) block: while the app is in the "
                + "background the system shows it without the app, so its buttons [\(Finding.list(buttons))] never "
                + "appear; send a data-only message"
        case .invalidData(let problems):
            let parts = problems.map { p in
                switch p.kind {
                case .notString(let kind):
                    "\(p.map).\(p.key) is \(kind == "array" || kind == "object" ? "an" : "a") \(kind), not a string"
                case .reservedKey: "\(p.map) key \"\(p.key)\" is reserved"
                }
            }
            return "Android notification \(short(id)): \(parts.joined(separator: "; ")); FCM refuses or drops such data"
        }
    }

    /// The message with device tokens masked, as human output and JSON show it.
    public var message: String { message(tokens: TokenMask.mask) }

    static func actionLabel(_ id: String, _ action: ActionKind, _ outcome: Outcome) -> String {
        "action " + short(id) + " (" + action.rawValue + ", " + outcome.rawValue + ")"
    }

    /// " at T by action X (seq N)" when known.
    static func by(_ change: StateChange?) -> String {
        guard let change else { return "" }
        return " at \(change.at) by action \(short(change.eventID)) (seq \(change.seq))"
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

/// Device tokens are secrets: what people see of one is its ends.
public enum TokenMask {
    public static func mask(_ token: String) -> String {
        // Tokens are hex. In ASCII without CR (CR LF is one Character) a Character is
        // a byte, so the bytes can be cut instead of breaking the text into Characters.
        if token.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
            let count = token.utf8.count
            guard count > 12 else { return String(repeating: "•", count: max(count, 4)) }
            let utf8 = token.utf8
            return String(token[..<utf8.index(utf8.startIndex, offsetBy: 4)]) + "…"
                + String(token[utf8.index(utf8.endIndex, offsetBy: -4)...])
        }
        let chars = Array(token)
        guard chars.count > 12 else { return String(repeating: "•", count: max(chars.count, 4)) }
        return String(chars.prefix(4)) + "…" + String(chars.suffix(4))
    }
}

/// What the analyzer needs to know beyond the events it is fed: the notifications
/// that actions and deliveries refer to, and when devices were unregistered.
public protocol AuditContext {
    /// The notification with this (normalised) id, wherever it is in the timeline; nil
    /// when the store has none. A store that cannot be read throws: a rule must never
    /// mistake damage for absence.
    func notification(_ id: String) throws -> NotificationFacts?
    /// The earliest 410 delivery (Unregistered / ExpiredToken) for a notification to
    /// `device` strictly before `position`, if any.
    func unregistration(device: String, before position: Position) throws -> Unregistration?
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
    public var platform: Platform
    /// The buttons the user saw (`PushNotification.shownButtons`).
    public var shownButtons: [String]

    public init(id: String, seq: UInt64, at: Timestamp, notification: PushNotification, device: String?) {
        self.id = id
        self.seq = seq
        self.at = at
        self.category = notification.category
        self.taskID = notification.taskID
        self.device = device
        self.threadID = notification.threadID
        self.platform = notification.platform
        self.shownButtons = notification.shownButtons
    }

    /// Whether the notification let the user do `action`: one of its buttons, or
    /// `open` and `dismiss`, which are always possible.
    public func offers(_ action: ActionKind) -> Bool {
        action == .open || action == .dismiss || shownButtons.contains(action.rawValue)
    }
}

/// An answer that marks a device token as gone: APNs' 410, FCM's 404 `UNREGISTERED`.
public struct Unregistration: Sendable, Equatable {
    public var deliveryID: String
    public var seq: UInt64
    public var at: Timestamp
    public var status: Int
    public var reason: String

    public init(deliveryID: String, seq: UInt64, at: Timestamp, status: Int = 410, reason: String) {
        self.deliveryID = deliveryID
        self.seq = seq
        self.at = at
        self.status = status
        self.reason = reason
    }

    /// The unregistration `delivery` (event `deliveryID`, at `seq`) declares.
    public init(deliveryID: String, seq: UInt64, at: Timestamp, delivery: Delivery) {
        self.init(
            deliveryID: deliveryID, seq: seq, at: at, status: delivery.status, reason: delivery.reason ?? "Unregistered"
        )
    }

    /// The push service that declared it.
    public var platform: Platform { reason == Delivery.fcmUnregistered ? .android : .ios }
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

    public init(context: any AuditContext) {
        self.context = context
    }

    /// The snapshot of `taskID` as of the last event fed.
    public func task(_ taskID: Int64) -> TaskSnapshot { table[taskID] ?? TaskSnapshot(taskID: taskID) }

    /// Feeds one event; returns its task, the task's state after it and its findings.
    /// Throws only what the context throws (a store it cannot read).
    public mutating func process(_ event: Event, seq: UInt64) throws -> Analysis {
        let position = Position(at: event.at, seq: seq)
        var findings: [Finding] = []
        func flag(_ code: FindingCode, _ task: Int64?, _ evidence: Finding.Evidence) {
            findings.append(Finding(code: code, seq: seq, id: event.id, taskID: task, at: event.at, evidence: evidence))
        }
        switch event.body {
        case .notification(let n):
            let taskID = n.taskID
            var snapshot = taskID.map { task($0) }
            let premium = n.isPremium != false
            let category = n.category
            if let snap = snapshot {
                if snap.state == .deleted {
                    flag(
                        .notificationAfterDelete, taskID,
                        .sentAfterDelete(taskID: snap.taskID, deletion: snap.lastChange))
                } else if premium, category != Category.generic.rawValue, let expected = snap.state.expectedCategory,
                    category != expected.rawValue
                {
                    flag(
                        .categoryStateMismatch, taskID,
                        .categoryForState(
                            category: category, taskID: snap.taskID, state: snap.state, since: snap.lastChange,
                            expected: expected.rawValue))
                }
            }
            if let buttons = n.buttons {
                let expected = Category.buttons(of: category, on: n.platform).map(\.rawValue)
                if !Analyzer.sameElements(buttons, expected) {
                    flag(
                        .buttonsCategoryMismatch, taskID,
                        .buttonsForCategory(
                            buttons: buttons, category: category, platform: n.platform, expected: expected))
                }
            }
            if !premium && category != Category.generic.rawValue {
                flag(.premiumMismatch, taskID, .premiumCategoryForFreeUser(user: event.user, category: category))
            } else if premium && category == Category.generic.rawValue {
                flag(.premiumMismatch, taskID, .genericCategoryForPremiumUser(user: event.user))
            }
            if let taskID, n.threadID != "task-" + String(taskID) {
                flag(.threadIDMismatch, taskID, .threadID(found: n.threadID, taskID: taskID))
            }
            if n.payloadSize > PushNotification.payloadLimit {
                flag(
                    .payloadTooLarge, taskID,
                    .payloadSize(bytes: n.payloadSize, limit: PushNotification.payloadLimit, platform: n.platform))
            }
            if let device = event.device, let gone = try context.unregistration(device: device, before: position) {
                flag(
                    .sentAfterUnregistered, taskID, .sentToDeadToken(device: device, sentAt: event.at, deadSince: gone))
            }
            if n.platform == .android {
                let hidden = n.hiddenButtons
                if !hidden.isEmpty {
                    flag(.tooManyActions, taskID, .tooManyButtons(buttons: n.buttons ?? [], hidden: hidden))
                }
                let shown = n.shownButtons
                if !n.notificationBlocks.isEmpty, !shown.isEmpty {
                    flag(
                        .fcmNotificationMessage, taskID,
                        .notificationMessage(blocks: n.notificationBlocks, buttons: shown))
                }
                if !n.dataProblems.isEmpty {
                    flag(.fcmInvalidData, taskID, .invalidData(n.dataProblems))
                }
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
            if transition.invalid {
                if transition.from == .deleted {
                    flag(
                        .invalidTransition, a.taskID,
                        .actionAfterDelete(
                            action: a.action, outcome: a.outcome, taskID: a.taskID, deletion: snap.lastChange))
                } else {
                    flag(
                        .invalidTransition, a.taskID,
                        .transition(
                            action: a.action, outcome: a.outcome, taskID: a.taskID, from: transition.from,
                            to: transition.to))
                }
            }
            if let ref = a.notificationID, let facts = try context.notification(ref), !facts.offers(a.action) {
                flag(
                    .actionNotOffered, a.taskID,
                    .notOffered(
                        action: a.action, outcome: a.outcome, notificationID: facts.id, category: facts.category,
                        platform: facts.platform, offered: facts.shownButtons))
            }
            return Analysis(taskID: a.taskID, stateAfter: snap.state, transition: transition, findings: findings)

        case .delivery(let d):
            let facts = try context.notification(d.notificationID)
            let taskID = facts?.taskID
            if d.status != 200 {
                flag(
                    .deliveryFailed, taskID,
                    .deliveryRefused(
                        notificationID: d.notificationID, status: d.status, reason: d.reason,
                        platform: facts?.platform ?? d.impliedPlatform))
            }
            return Analysis(
                taskID: taskID, stateAfter: taskID.map { task($0).state }, transition: nil, findings: findings)
        }
    }

    /// Whether `a` and `b` hold the same strings, ignoring order and repeats (what
    /// `Set(a) == Set(b)` says, without a `Set`: see `TaskTable`).
    static func sameElements(_ a: [String], _ b: [String]) -> Bool {
        a.allSatisfy { b.contains($0) } && b.allSatisfy { a.contains($0) }
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
