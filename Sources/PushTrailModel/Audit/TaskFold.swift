/// The state of a task: what its accepted actions made it (docs/AUDIT.md, "Task states").
public enum TaskState: String, Sendable, CaseIterable, CustomStringConvertible {
    case active
    case inProgress = "in_progress"
    case completed
    case cancelled
    case deleted

    public var description: String { rawValue }

    /// The category a premium user's notification should carry in this state; nil for
    /// `deleted` (nothing should be sent).
    public var expectedCategory: Category? {
        switch self {
        case .active: .actionable
        case .inProgress: .inProgress
        case .cancelled: .cancelled
        case .completed: .completed
        case .deleted: nil
        }
    }
}

/// The notification categories the app registers, and the buttons each offers.
public enum Category: String, Sendable, CaseIterable {
    case actionable = "TASK_ACTIONABLE"
    case inProgress = "TASK_IN_PROGRESS"
    case cancelled = "TASK_CANCELLED"
    case completed = "TASK_COMPLETED"
    case generic = "TASK_NOTIFICATION_GENERIC"

    /// The action buttons the iOS app registers for the category, in order.
    public var buttons: [ActionKind] { buttons(on: .ios) }

    /// The action buttons the app shows for the category on `platform`, in order. The
    /// Android app shows at most three, so its `TASK_ACTIONABLE` leaves out edit (a tap
    /// on the body opens the task for editing).
    public func buttons(on platform: Platform) -> [ActionKind] {
        switch self {
        case .actionable:
            platform == .android
                ? [.complete, .cancel, .markInProgress] : [.edit, .complete, .cancel, .markInProgress]
        case .inProgress: [.edit, .complete, .cancel]
        case .cancelled: [.uncancel, .delete]
        case .completed, .generic: []
        }
    }

    /// The buttons a category name offers on `platform`: none for a category the app
    /// does not register.
    public static func buttons(of name: String?, on platform: Platform = .ios) -> [ActionKind] {
        name.flatMap(Category.init(rawValue:))?.buttons(on: platform) ?? []
    }
}

/// A task's fields: last writer wins, in timeline order, over notifications' custom
/// keys and accepted actions' `changes`.
public struct TaskFields: Equatable, Sendable {
    public var taskName: String?
    public var residenceID: FieldValue?
    public var residenceName: String?
    public var dueDate: FieldValue?
    /// Accepted `complete` actions that took effect.
    public var completions = 0

    public init() {}
}

/// What last moved a task's state, for messages ("cancelled at … by action …").
public struct StateChange: Equatable, Sendable {
    public var eventID: String
    public var seq: UInt64
    public var at: Timestamp
}

/// A task as the fold sees it at one point of its timeline.
public struct TaskSnapshot: Equatable, Sendable {
    public var taskID: Int64
    public var state: TaskState = .active
    public var fields = TaskFields()
    /// The accepted action that set the current state (nil while never changed).
    public var lastChange: StateChange?

    public init(taskID: Int64) { self.taskID = taskID }
}

/// The effect of one event on a task.
public struct Transition: Equatable, Sendable {
    public var from: TaskState
    public var to: TaskState
    /// An accepted action that the state machine does not allow from `from`.
    public var invalid: Bool

    public init(from: TaskState, to: TaskState, invalid: Bool) {
        self.from = from
        self.to = to
        self.invalid = invalid
    }
}

/// The task state machine as a pure fold: `apply` one event at a time, in (at, seq)
/// order, to a snapshot. No I/O, no clock, no errors: `task`, `thread`, `audit` and
/// any cache all use it, so they cannot disagree.
public enum TaskFold {
    /// Applies `event` (a notification or action about this task; anything else is
    /// ignored) to `task` and says what it did.
    @discardableResult
    public static func apply(_ event: Event, seq: UInt64, to task: inout TaskSnapshot) -> Transition {
        let from = task.state
        switch event.body {
        case .notification(let n):
            if let v = n.taskName { task.fields.taskName = v }
            if let v = n.residenceID { task.fields.residenceID = v }
            if let v = n.residenceName { task.fields.residenceName = v }
            if let v = n.dueDate { task.fields.dueDate = v }
            return Transition(from: from, to: from, invalid: false)
        case .delivery:
            return Transition(from: from, to: from, invalid: false)
        case .action(let a):
            guard a.outcome == .ok else { return Transition(from: from, to: from, invalid: false) }
            if a.action == .open || a.action == .dismiss { return Transition(from: from, to: from, invalid: false) }
            // Deleted is terminal: the server accepted something impossible; nothing changes.
            if from == .deleted { return Transition(from: from, to: from, invalid: true) }
            let valid: Bool
            var to = from
            switch a.action {
            case .markInProgress:
                valid = from == .active
                to = .inProgress
            case .complete:
                valid = from == .active || from == .inProgress
                task.fields.completions += 1
                if let next = a.changes.first(where: { $0.key == "next_due_date" })?.value {
                    to = .active
                    applyChanges(a.changes, to: &task.fields)
                    task.fields.dueDate = next
                } else {
                    to = .completed
                    applyChanges(a.changes, to: &task.fields)
                }
            case .cancel:
                valid = from == .active || from == .inProgress
                to = .cancelled
            case .uncancel:
                valid = from == .cancelled
                to = .active
            case .delete:
                valid = from == .cancelled
                to = .deleted
            case .edit:
                valid = from == .active || from == .inProgress
            case .open, .dismiss:
                valid = true
            }
            if a.action != .complete { applyChanges(a.changes, to: &task.fields) }
            task.state = to
            if to != from || a.action == .complete {
                task.lastChange = StateChange(eventID: event.id, seq: seq, at: event.at)
            }
            return Transition(from: from, to: to, invalid: !valid)
        }
    }

    /// Applies the task-field keys of `changes`; other keys stay in the history only.
    static func applyChanges(_ changes: [(key: String, value: FieldValue)], to fields: inout TaskFields) {
        for (key, value) in changes {
            switch key {
            case "task_name":
                if case .string(let s) = value { fields.taskName = s } else { fields.taskName = value.description }
            case "residence_id": fields.residenceID = value
            case "residence_name":
                if case .string(let s) = value {
                    fields.residenceName = s
                } else {
                    fields.residenceName = value.description
                }
            case "due_date": fields.dueDate = value
            default: break
            }
        }
    }
}
