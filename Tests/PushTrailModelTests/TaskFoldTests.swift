import TestSupport
import Testing

@testable import PushTrailModel

/// Builders for the task-fold tests: events decoded from NDJSON lines, folded in the
/// order given (the order a caller has already put into (at, seq) order).
enum FoldFixtures {
    static let taskID: Int64 = 7

    /// An action line for task 7. `changes` is raw JSON text.
    static func action(
        _ kind: String, outcome: String = "ok", id: String? = nil, at: String = "2026-11-20T10:00:00Z",
        changes: String? = nil
    ) throws -> Event {
        var line =
            "{\"type\":\"action\",\"id\":\"\(id ?? "act-\(kind)-\(outcome)")\",\"at\":\"\(at)\",\"user\":\"u_fold\","
            + "\"task_id\":\(taskID),\"action\":\"\(kind)\",\"outcome\":\"\(outcome)\""
        if let changes { line += ",\"changes\":\(changes)" }
        line += "}"
        var decoder = EventDecoder()
        return try decoder.decode(Array(line.utf8))
    }

    /// A notification for task 7; `custom` is raw JSON members added to the payload
    /// (e.g. `"task_name":"X","due_date":"2026-12-01"`).
    static func notification(
        id: String = "0f0f0f0f-0000-4000-8000-000000000001", at: String = "2026-11-20T08:00:00Z", custom: String = ""
    ) throws -> Event {
        let extra = custom.isEmpty ? "" : "," + custom
        let line =
            "{\"type\":\"notification\",\"id\":\"\(id)\",\"at\":\"\(at)\",\"user\":\"u_fold\","
            + "\"payload\":{\"aps\":{\"category\":\"TASK_ACTIONABLE\",\"thread-id\":\"task-7\"},"
            + "\"task_id\":\(taskID)\(extra)}}"
        var decoder = EventDecoder()
        return try decoder.decode(Array(line.utf8))
    }

    /// Folds `events` in order from a fresh task; returns the snapshot and each transition.
    static func fold(_ events: [Event], into start: TaskSnapshot = TaskSnapshot(taskID: taskID)) -> (
        TaskSnapshot, [Transition]
    ) {
        var snapshot = start
        var transitions: [Transition] = []
        for (i, e) in events.enumerated() {
            transitions.append(TaskFold.apply(e, seq: UInt64(i + 1), to: &snapshot))
        }
        return (snapshot, transitions)
    }

    /// Accepted actions that bring a new task into `state` along valid edges.
    static func path(to state: TaskState) throws -> [Event] {
        switch state {
        case .active: []
        case .inProgress: [try action("mark_in_progress", id: "setup-1")]
        case .completed: [try action("complete", id: "setup-1")]
        case .cancelled: [try action("cancel", id: "setup-1")]
        case .deleted: [try action("cancel", id: "setup-1"), try action("delete", id: "setup-2")]
        }
    }

    /// A task in `state`, reached along valid edges.
    static func task(in state: TaskState) throws -> TaskSnapshot {
        let (snapshot, transitions) = fold(try path(to: state))
        guard snapshot.state == state, transitions.allSatisfy({ !$0.invalid }) else {
            throw SetupFailed(
                description: "could not bring a task to \(state) along valid edges: got \(snapshot.state)")
        }
        return snapshot
    }

    struct SetupFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The state machine's table, written out independently of the code under test.
    static let validFrom: [ActionKind: Set<TaskState>] = [
        .markInProgress: [.active],
        .complete: [.active, .inProgress],
        .cancel: [.active, .inProgress],
        .uncancel: [.cancelled],
        .delete: [.cancelled],
        .edit: [.active, .inProgress],
    ]

    /// Where an accepted, non-recurring action takes a task by the state machine's table (valid or not).
    static func target(of action: ActionKind, from state: TaskState) -> TaskState {
        if state == .deleted { return .deleted }
        switch action {
        case .markInProgress: return .inProgress
        case .complete: return .completed
        case .cancel: return .cancelled
        case .uncancel: return .active
        case .delete: return .deleted
        case .edit, .open, .dismiss: return state
        }
    }

    /// One cell of the state × action matrix.
    struct Cell: Sendable, CustomTestStringConvertible {
        var from: TaskState
        var action: ActionKind
        var testDescription: String { "\(action.rawValue) from \(from)" }
    }

    static let stateChangingActions: [ActionKind] = [.markInProgress, .complete, .cancel, .uncancel, .delete, .edit]

    static let matrix: [Cell] = TaskState.allCases.flatMap { s in stateChangingActions.map { Cell(from: s, action: $0) }
    }
}

@Suite("task fold")
struct TaskFoldTests {
    typealias F = FoldFixtures

    @Test("a task is active before any action, and notifications alone do not move it")
    func initialState() throws {
        #expect(TaskSnapshot(taskID: 7).state == .active)
        #expect(TaskSnapshot(taskID: 7).fields.completions == 0)
        let (snapshot, transitions) = F.fold([
            try F.notification(custom: #""task_name":"Clean gutters""#),
            try F.notification(id: "0f0f0f0f-0000-4000-8000-000000000002", at: "2026-11-21T08:00:00Z"),
        ])
        #expect(snapshot.state == .active)
        #expect(snapshot.lastChange == nil)
        #expect(transitions.allSatisfy { $0.from == .active && $0.to == .active && !$0.invalid })
    }

    @Test(
        "every row of the state machine table: a valid accepted action takes the task where the table says, unflagged",
        arguments: FoldFixtures.matrix.filter { FoldFixtures.validFrom[$0.action]!.contains($0.from) })
    func validTransitions(_ cell: F.Cell) throws {
        let start = try F.task(in: cell.from)
        let (snapshot, transitions) = F.fold([try F.action(cell.action.rawValue, id: "act-under-test")], into: start)
        let t = try #require(transitions.first)
        #expect(t.from == cell.from)
        #expect(t.to == F.target(of: cell.action, from: cell.from))
        #expect(!t.invalid)
        #expect(snapshot.state == t.to)
        #expect(snapshot.fields.completions == start.fields.completions + (cell.action == .complete ? 1 : 0))
    }

    @Test("the valid rows, spelled out: mark_in_progress, complete, cancel, uncancel, delete, edit")
    func validRowsSpelledOut() throws {
        let rows: [(TaskState, String, TaskState)] = [
            (.active, "mark_in_progress", .inProgress),
            (.active, "complete", .completed), (.inProgress, "complete", .completed),
            (.active, "cancel", .cancelled), (.inProgress, "cancel", .cancelled),
            (.cancelled, "uncancel", .active),
            (.cancelled, "delete", .deleted),
            (.active, "edit", .active), (.inProgress, "edit", .inProgress),
        ]
        for (from, action, to) in rows {
            let (snapshot, transitions) = F.fold([try F.action(action)], into: try F.task(in: from))
            #expect(transitions == [Transition(from: from, to: to, invalid: false)], "\(action) from \(from)")
            #expect(snapshot.state == to, "\(action) from \(from)")
        }
    }

    @Test(
        "an accepted action not valid from the state still takes effect and is flagged invalid",
        arguments: FoldFixtures.matrix.filter {
            !FoldFixtures.validFrom[$0.action]!.contains($0.from) && $0.from != .deleted
        })
    func invalidTransitionsTakeEffect(_ cell: F.Cell) throws {
        let start = try F.task(in: cell.from)
        let (snapshot, transitions) = F.fold([try F.action(cell.action.rawValue, id: "act-under-test")], into: start)
        let t = try #require(transitions.first)
        #expect(t.invalid)
        #expect(t.from == cell.from)
        #expect(t.to == F.target(of: cell.action, from: cell.from))
        #expect(snapshot.state == t.to)
        #expect(snapshot.fields.completions == start.fields.completions + (cell.action == .complete ? 1 : 0))
    }

    @Test("delete from active gives deleted, flagged invalid")
    func deleteFromActive() throws {
        let (snapshot, transitions) = F.fold([try F.action("delete", id: "act-del")])
        #expect(transitions == [Transition(from: .active, to: .deleted, invalid: true)])
        #expect(snapshot.state == .deleted)
        #expect(snapshot.lastChange?.eventID == "act-del")
    }

    @Test("complete from cancelled gives completed with one more completion, flagged invalid")
    func completeFromCancelled() throws {
        let (snapshot, transitions) = F.fold([try F.action("cancel", id: "a1"), try F.action("complete", id: "a2")])
        #expect(transitions.map(\.invalid) == [false, true])
        #expect(transitions.last == Transition(from: .cancelled, to: .completed, invalid: true))
        #expect(snapshot.state == .completed)
        #expect(snapshot.fields.completions == 1)
    }

    @Test("an edit of a completed task applies its changes, flagged invalid, and the task stays completed")
    func editOfCompletedTask() throws {
        let (snapshot, transitions) = F.fold([
            try F.notification(custom: #""task_name":"Clean gutters","due_date":"2026-11-25""#),
            try F.action("complete", id: "a1"),
            try F.action("edit", id: "a2", changes: #"{"task_name":"Clean gutters twice","due_date":"2026-12-01"}"#),
        ])
        #expect(transitions.last == Transition(from: .completed, to: .completed, invalid: true))
        #expect(snapshot.state == .completed)
        #expect(snapshot.fields.taskName == "Clean gutters twice")
        #expect(snapshot.fields.dueDate == .string("2026-12-01"))
        #expect(snapshot.fields.completions == 1)
    }

    @Test(
        "deleted is terminal: accepted complete, uncancel, edit and the rest after it are flagged and change nothing",
        arguments: FoldFixtures.stateChangingActions)
    func deletedIsTerminal(_ action: ActionKind) throws {
        // A task with a completion and a due date, then cancelled and deleted.
        let setup = [
            try F.notification(
                custom:
                    #""task_name":"Clean gutters","residence_id":12,"residence_name":"Home","due_date":"2026-11-25""#),
            try F.action("complete", id: "s1", changes: #"{"next_due_date":"2026-12-25"}"#),
            try F.action("cancel", id: "s2"),
            try F.action("delete", id: "s3"),
        ]
        let (before, setupTransitions) = F.fold(setup)
        #expect(setupTransitions.allSatisfy { !$0.invalid })
        #expect(before.state == .deleted)
        #expect(before.fields.completions == 1)

        let changes: String? =
            switch action {
            case .complete: #"{"next_due_date":"2027-01-25","task_name":"Renamed"}"#
            case .edit: #"{"task_name":"Renamed","due_date":"2027-02-01","residence_name":"Cabin"}"#
            default: #"{"task_name":"Renamed"}"#
            }
        let (after, transitions) = F.fold([try F.action(action.rawValue, id: "late", changes: changes)], into: before)
        #expect(transitions == [Transition(from: .deleted, to: .deleted, invalid: true)])
        #expect(after.state == .deleted)
        #expect(after.fields == before.fields, "fields and completions must not change after delete")
        #expect(after.lastChange == before.lastChange)
    }

    @Test("open and dismiss after delete are not flagged")
    func openDismissAfterDelete() throws {
        let deleted = try F.task(in: .deleted)
        let (after, transitions) = F.fold(
            [try F.action("open", id: "o"), try F.action("dismiss", id: "d")], into: deleted)
        #expect(
            transitions == [
                Transition(from: .deleted, to: .deleted, invalid: false),
                Transition(from: .deleted, to: .deleted, invalid: false),
            ])
        #expect(after == deleted)
    }

    @Test(
        "rejected and failed actions change nothing and are not flagged, whatever the action and state",
        arguments: ["rejected", "failed"])
    func rejectedAndFailedChangeNothing(_ outcome: String) throws {
        for state in TaskState.allCases {
            let start = try F.task(in: state)
            for action in ActionKind.allCases {
                let changes: String? =
                    switch action {
                    case .complete: #"{"next_due_date":"2027-01-01"}"#
                    case .edit: #"{"task_name":"Should not apply","due_date":"2027-01-01"}"#
                    default: nil
                    }
                let (after, transitions) = F.fold(
                    [try F.action(action.rawValue, outcome: outcome, changes: changes)], into: start)
                #expect(
                    transitions == [Transition(from: state, to: state, invalid: false)],
                    "\(action) \(outcome) from \(state)")
                #expect(after == start, "\(action) \(outcome) from \(state)")
            }
        }
    }

    @Test("accepted open and dismiss never change the state, from any state", arguments: TaskState.allCases)
    func openDismissNeverChangeState(_ state: TaskState) throws {
        let start = try F.task(in: state)
        let (after, transitions) = F.fold(
            [try F.action("open", id: "o"), try F.action("dismiss", id: "d")], into: start)
        #expect(transitions.allSatisfy { $0 == Transition(from: state, to: state, invalid: false) })
        #expect(after == start)
    }

    @Test(
        "a recurring complete (changes.next_due_date) leaves the task active, adds a completion and moves the due date",
        arguments: [TaskState.active, .inProgress])
    func recurringComplete(_ from: TaskState) throws {
        let start = F.fold([try F.notification(custom: #""due_date":"2026-11-25""#)] + (try F.path(to: from))).0
        #expect(start.fields.dueDate == .string("2026-11-25"))
        let (after, transitions) = F.fold(
            [try F.action("complete", id: "rc", changes: #"{"next_due_date":"2026-12-25"}"#)], into: start)
        #expect(transitions == [Transition(from: from, to: .active, invalid: false)])
        #expect(after.state == .active)
        #expect(after.fields.completions == start.fields.completions + 1)
        #expect(after.fields.dueDate == .string("2026-12-25"))
        #expect(after.lastChange?.eventID == "rc")
    }

    @Test("recurring completes add up: each one counts and the last next_due_date wins")
    func recurringCompletesAddUp() throws {
        let (after, transitions) = F.fold([
            try F.action("complete", id: "w1", at: "2026-11-04T10:00:00Z", changes: #"{"next_due_date":"2026-11-11"}"#),
            try F.action("complete", id: "w2", at: "2026-11-11T10:00:00Z", changes: #"{"next_due_date":"2026-11-18"}"#),
            try F.action("complete", id: "w3", at: "2026-11-18T10:00:00Z", changes: #"{"next_due_date":"2026-11-25"}"#),
        ])
        #expect(transitions.allSatisfy { $0 == Transition(from: .active, to: .active, invalid: false) })
        #expect(after.state == .active)
        #expect(after.fields.completions == 3)
        #expect(after.fields.dueDate == .string("2026-11-25"))
    }

    @Test("a plain complete gives completed with one more completion; the due date is kept")
    func plainComplete() throws {
        let (after, transitions) = F.fold([
            try F.notification(custom: #""due_date":"2026-11-25""#), try F.action("complete", id: "c1"),
        ])
        #expect(transitions.last == Transition(from: .active, to: .completed, invalid: false))
        #expect(after.state == .completed)
        #expect(after.fields.completions == 1)
        #expect(after.fields.dueDate == .string("2026-11-25"))
        #expect(after.lastChange?.eventID == "c1")
    }

    @Test("fields are last-writer-wins over notifications' custom keys and accepted actions' changes")
    func fieldsLastWriterWins() throws {
        let events = [
            try F.notification(
                id: "0f0f0f0f-0000-4000-8000-000000000001", at: "2026-11-20T08:00:00Z",
                custom:
                    #""task_name":"Clean gutters","residence_id":12,"residence_name":"Home","due_date":"2026-11-25""#),
            try F.action(
                "edit", id: "e1", at: "2026-11-20T09:00:00Z",
                changes: #"{"task_name":"Clean gutters and drains","due_date":"2026-11-27","priority":"high"}"#),
        ]
        let (afterEdit, _) = F.fold(events)
        #expect(afterEdit.fields.taskName == "Clean gutters and drains")
        #expect(afterEdit.fields.dueDate == .string("2026-11-27"))
        #expect(afterEdit.fields.residenceID == .json("12"))
        #expect(afterEdit.fields.residenceName == "Home")

        // A later notification overwrites only the keys it carries.
        let later = try F.notification(
            id: "0f0f0f0f-0000-4000-8000-000000000002", at: "2026-11-21T08:00:00Z",
            custom: #""task_name":"Gutters (from payload)","residence_id":"r-12""#)
        let (afterNotification, _) = F.fold(events + [later])
        #expect(afterNotification.fields.taskName == "Gutters (from payload)")
        #expect(afterNotification.fields.residenceID == .string("r-12"))
        #expect(afterNotification.fields.residenceName == "Home")
        #expect(afterNotification.fields.dueDate == .string("2026-11-27"))

        // A rejected (and a failed) edit applies nothing; an accepted one after it does.
        let (final, _) = F.fold(
            events + [
                later,
                try F.action("edit", outcome: "rejected", id: "e2", changes: #"{"task_name":"Rejected name"}"#),
                try F.action("edit", outcome: "failed", id: "e3", changes: #"{"residence_name":"Failed"}"#),
                try F.action("edit", id: "e4", changes: #"{"residence_name":"Maple Street House"}"#),
            ])
        #expect(final.fields.taskName == "Gutters (from payload)")
        #expect(final.fields.residenceName == "Maple Street House")
        #expect(final.state == .active)
    }

    @Test("unknown keys in changes are ignored: the fields and the state stay as they were")
    func unknownChangeKeysIgnored() throws {
        let start = F.fold([try F.notification(custom: #""task_name":"Clean gutters","due_date":"2026-11-25""#)]).0
        let (after, transitions) = F.fold(
            [
                try F.action(
                    "edit", id: "e1", changes: #"{"priority":"high","assignee":{"id":3},"next_due_date":"2027-01-01"}"#)
            ],
            into: start)
        #expect(transitions == [Transition(from: .active, to: .active, invalid: false)])
        #expect(after.fields == start.fields)
    }

    @Test("the order given is the order folded: the same actions in another order end elsewhere")
    func orderMatters() throws {
        let cancel = try F.action("cancel", id: "a-cancel")
        let mark = try F.action("mark_in_progress", id: "a-mark")
        let (cancelThenMark, t1) = F.fold([cancel, mark])
        let (markThenCancel, t2) = F.fold([mark, cancel])
        #expect(cancelThenMark.state == .inProgress)
        #expect(t1.map(\.invalid) == [false, true])
        #expect(markThenCancel.state == .cancelled)
        #expect(t2.map(\.invalid) == [false, false])
    }
}
