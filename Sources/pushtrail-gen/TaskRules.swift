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

    /// The buttons it offers on Android, where at most three are shown: `TASK_ACTIONABLE`
    /// leaves `edit` to a tap on the body.
    var androidOffered: UInt8 {
        self == .actionable ? ActionKind.complete.bit | ActionKind.cancel.bit | ActionKind.markInProgress.bit : offered
    }

    /// The Android buttons as `data.button_types`, inside a JSON string: a JSON array, or
    /// the comma-separated form (`nil` for no buttons: the key is left out).
    func androidButtons(commaForm: Bool) -> StaticString? {
        switch (self, commaForm) {
        case (.actionable, false): return #"[\"complete\",\"cancel\",\"mark_in_progress\"]"#
        case (.actionable, true): return "complete,cancel,mark_in_progress"
        case (.inProgress, false): return #"[\"edit\",\"complete\",\"cancel\"]"#
        case (.inProgress, true): return "edit,complete,cancel"
        case (.cancelled, false): return #"[\"uncancel\",\"delete\"]"#
        case (.cancelled, true): return "uncancel,delete"
        case (.completed, false), (.generic, false): return "[]"
        case (.completed, true), (.generic, true): return nil
        }
    }

    /// The iOS four-button list sent to Android by mistake (`too_many_actions`).
    static func iosActionableOnAndroid(commaForm: Bool) -> StaticString {
        commaForm
            ? "edit,complete,cancel,mark_in_progress" : #"[\"edit\",\"complete\",\"cancel\",\"mark_in_progress\"]"#
    }

    /// The three buttons Android shows of that list.
    static let iosActionableShownOnAndroid = ActionKind.edit.bit | ActionKind.complete.bit | ActionKind.cancel.bit
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

/// The ways a backend gets an FCM message wrong that APNs has no counterpart for.
enum FCMFlaw: UInt8 {
    case none
    /// `too_many_actions`: the iOS four-button list, of which Android shows three.
    case tooManyActions
    /// `fcm_notification_message`: a `notification` block, so the system shows the message
    /// itself, without the app's buttons.
    case notificationMessage
    // `fcm_invalid_data`: a value that is not a string, or a reserved key.
    case integerTaskId
    case booleanPremium
    case fromKey
    case googleKey
    case collapseKey

    /// FCM answers the send with 400 `INVALID_ARGUMENT` (a `collapse_key` in the data is
    /// accepted, and overwritten).
    var isRefused: Bool {
        switch self {
        case .integerTaskId, .booleanPremium, .fromKey, .googleKey: return true
        case .none, .tooManyActions, .notificationMessage, .collapseKey: return false
        }
    }
}
