/// A task's state and the rules of the fold, mirrored here so that a clean stream
/// never breaks them and an anomalous one breaks them on purpose.
enum TaskState: UInt8 {
    case active, inProgress, completed, cancelled, deleted

    /// The category a premium user should get in this state (none for `deleted`).
    var category: Category {
        switch self {
        case .active: return .actionable
        case .inProgress: return .inProgress
        case .completed: return .completed
        case .cancelled, .deleted: return .cancelled
        }
    }
}

enum Category: UInt8, CaseIterable {
    case actionable, inProgress, cancelled, completed, generic

    var name: StaticString {
        switch self {
        case .actionable: return "TASK_ACTIONABLE"
        case .inProgress: return "TASK_IN_PROGRESS"
        case .cancelled: return "TASK_CANCELLED"
        case .completed: return "TASK_COMPLETED"
        case .generic: return "TASK_NOTIFICATION_GENERIC"
        }
    }

    /// The category's buttons as a JSON array, in the app's order.
    var buttonsJSON: StaticString {
        switch self {
        case .actionable: return #"["edit","complete","cancel","mark_in_progress"]"#
        case .inProgress: return #"["edit","complete","cancel"]"#
        case .cancelled: return #"["uncancel","delete"]"#
        case .completed, .generic: return "[]"
        }
    }

    /// The buttons it offers, as a mask of `ActionKind` bits.
    var offered: UInt8 {
        switch self {
        case .actionable:
            return ActionKind.edit.bit | ActionKind.complete.bit | ActionKind.cancel.bit
                | ActionKind.markInProgress.bit
        case .inProgress: return ActionKind.edit.bit | ActionKind.complete.bit | ActionKind.cancel.bit
        case .cancelled: return ActionKind.uncancel.bit | ActionKind.delete.bit
        case .completed, .generic: return 0
        }
    }
}

enum ActionKind: UInt8 {
    case complete, cancel, uncancel, delete, markInProgress, edit, open, dismiss

    var bit: UInt8 { 1 << rawValue }

    var name: StaticString {
        switch self {
        case .complete: return "complete"
        case .cancel: return "cancel"
        case .uncancel: return "uncancel"
        case .delete: return "delete"
        case .markInProgress: return "mark_in_progress"
        case .edit: return "edit"
        case .open: return "open"
        case .dismiss: return "dismiss"
        }
    }

    /// Actions that can change a task (everything but `open` and `dismiss`).
    static let changing: [ActionKind] = [.complete, .cancel, .uncancel, .delete, .markInProgress, .edit]

    /// The state machine's "valid from".
    func isValid(from state: TaskState) -> Bool {
        switch self {
        case .open, .dismiss: return true
        case .markInProgress: return state == .active
        case .complete, .cancel, .edit: return state == .active || state == .inProgress
        case .uncancel, .delete: return state == .cancelled
        }
    }

    /// The state an accepted action leads to (the server's truth, valid or not).
    func target(from state: TaskState, recurring: Bool) -> TaskState {
        if state == .deleted { return .deleted }
        switch self {
        case .open, .dismiss, .edit: return state
        case .markInProgress: return .inProgress
        case .complete: return recurring ? .active : .completed
        case .cancel: return .cancelled
        case .uncancel: return .active
        case .delete: return .deleted
        }
    }

    /// The 409 message a server gives when the action does not fit the state.
    func refusal(in state: TaskState) -> StaticString {
        if state == .deleted { return "Task has been deleted" }
        switch self {
        case .complete:
            return state == .cancelled ? "Task is cancelled; restore it before completing" : "Task already completed"
        case .cancel: return "Task cannot be cancelled in its current state"
        case .uncancel: return "Task is not cancelled"
        case .delete: return "Only cancelled tasks can be deleted"
        case .markInProgress: return "Task cannot be started in its current state"
        case .edit: return "Task can no longer be edited"
        case .open, .dismiss: return "Conflict"
        }
    }
}

/// What a notification is about; with the recipient's plan it decides the category.
enum NotificationKind: UInt8 {
    case assigned, dueSoon, overdue, inProgress, completed, cancelled

    var premiumCategory: Category {
        switch self {
        case .assigned, .dueSoon, .overdue: return .actionable
        case .inProgress: return .inProgress
        case .completed: return .completed
        case .cancelled: return .cancelled
        }
    }

    var typeName: StaticString {
        switch self {
        case .assigned: return "task_assigned"
        case .dueSoon: return "task_due_soon"
        case .overdue: return "task_overdue"
        case .inProgress: return "task_in_progress"
        case .completed: return "task_completed"
        case .cancelled: return "task_cancelled"
        }
    }
}
