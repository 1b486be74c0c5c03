import TestSupport
import Testing

@testable import PushTrailModel

/// Event builders and a fake `AuditContext` for the analyzer tests.
enum AnalyzerFixtures {
    static let device = "d0d0d0d0aaaabbbbccccddddeeeeffff00001111222233334444555566667777"
    static let otherDevice = "e1e1e1e1aaaabbbbccccddddeeeeffff00001111222233334444555566667777"

    /// A notification line. Everything in the payload is explicit so each test says
    /// exactly what it sends. `buttons: nil` leaves `button_types` out.
    static func notification(
        _ id: String, at: String = "2026-11-20T08:00:00Z", user: String = "u_ann", device: String? = nil,
        task: Int64? = 7, thread: String? = nil, category: String? = "TASK_ACTIONABLE",
        buttons: [String]? = nil, premium: Bool? = true, extra: String = ""
    ) throws -> Event {
        var aps = "\"alert\":{\"title\":\"Clean gutters\",\"body\":\"Due soon\"}"
        if let category { aps += ",\"category\":\"\(category)\"" }
        if let threadID = thread ?? task.map({ "task-\($0)" }) {
            aps += ",\"thread-id\":\"\(threadID)\""
        }
        var payload = "{\"aps\":{\(aps)}"
        if let task { payload += ",\"task_id\":\(task)" }
        if let buttons { payload += ",\"button_types\":[" + buttons.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        if let premium { payload += ",\"is_premium\":\(premium)" }
        payload += extra + "}"
        var line = "{\"type\":\"notification\",\"id\":\"\(id)\",\"at\":\"\(at)\",\"user\":\"\(user)\""
        if let device { line += ",\"device\":\"\(device)\"" }
        line += ",\"payload\":\(payload)}"
        return try decode(line)
    }

    static func action(
        _ id: String, _ kind: String, outcome: String = "ok", at: String = "2026-11-20T10:00:00Z", task: Int64 = 7,
        notification: String? = nil, changes: String? = nil
    ) throws -> Event {
        var line =
            "{\"type\":\"action\",\"id\":\"\(id)\",\"at\":\"\(at)\",\"user\":\"u_ann\",\"task_id\":\(task),"
            + "\"action\":\"\(kind)\",\"outcome\":\"\(outcome)\""
        if let notification { line += ",\"notification_id\":\"\(notification)\"" }
        if let changes { line += ",\"changes\":\(changes)" }
        return try decode(line + "}")
    }

    static func delivery(
        _ id: String, for notification: String, status: Int, reason: String? = nil, at: String = "2026-11-20T08:00:01Z"
    ) throws -> Event {
        var line =
            "{\"type\":\"delivery\",\"id\":\"\(id)\",\"at\":\"\(at)\",\"user\":\"u_ann\","
            + "\"notification_id\":\"\(notification)\",\"status\":\(status)"
        if let reason { line += ",\"reason\":\"\(reason)\"" }
        return try decode(line + "}")
    }

    static func decode(_ line: String) throws -> Event {
        var d = EventDecoder()
        return try d.decode(Array(line.utf8))
    }

    /// Answers with what it was given: notifications by (lowercased) id, and 410s by
    /// device. Like the store's contexts, it gives an unregistration only when it is
    /// strictly earlier (in `at`) than the position asked about, and records the asks.
    final class FakeContext: AuditContext {
        var notifications: [String: NotificationFacts] = [:]
        var unregistrations: [String: [Unregistration]] = [:]
        private(set) var asked: [(device: String, position: Position)] = []

        init(notifications: [NotificationFacts] = [], unregistrations: [(String, Unregistration)] = []) {
            for n in notifications { self.notifications[EventID.normalizedNotificationIDString(n.id)] = n }
            for (device, u) in unregistrations { self.unregistrations[device, default: []].append(u) }
        }

        func notification(_ id: String) -> NotificationFacts? { notifications[id] }

        func unregistration(device: String, before position: Position) -> Unregistration? {
            asked.append((device, position))
            return unregistrations[device]?.first { $0.at < position.at }
        }
    }

    /// A context that knows every notification among `events` (as the store would).
    static func context(knowing events: [Event], unregistrations: [(String, Unregistration)] = []) -> FakeContext {
        var facts: [NotificationFacts] = []
        for (i, e) in events.enumerated() {
            if let n = e.notification {
                facts.append(
                    NotificationFacts(id: e.id, seq: UInt64(i + 1), at: e.at, notification: n, device: e.device))
            }
        }
        return FakeContext(notifications: facts, unregistrations: unregistrations)
    }

    /// Feeds `events` in the order given with seq 1, 2, 3 …; returns every finding.
    static func findings(_ events: [Event], context: FakeContext? = nil) throws -> [Finding] {
        var analyzer = Analyzer(context: context ?? AnalyzerFixtures.context(knowing: events))
        var out: [Finding] = []
        for (i, e) in events.enumerated() { out += try analyzer.process(e, seq: UInt64(i + 1)).findings }
        return out
    }

    /// Feeds `(seq, event)` pairs in (at, seq) order, as every query does.
    static func findingsInTimelineOrder(_ events: [(UInt64, Event)]) throws -> [Finding] {
        let sorted = events.sorted { Position(at: $0.1.at, seq: $0.0) < Position(at: $1.1.at, seq: $1.0) }
        var analyzer = Analyzer(context: context(knowing: sorted.map(\.1)))
        return try sorted.flatMap { try analyzer.process($0.1, seq: $0.0).findings }
    }

    static func time(_ text: String) throws -> Timestamp {
        try #require(Timestamp.parseRFC3339(Array(text.utf8)))
    }

    static let actionable = ["edit", "complete", "cancel", "mark_in_progress"]
    static let inProgress = ["edit", "complete", "cancel"]
    static let cancelled = ["uncancel", "delete"]

    /// A notification id short enough (≤ 12 characters) to appear whole in messages.
    static let n1 = "n-0001"
    static let n2 = "n-0002"
}

@Suite("audit rules on hand-built event lists")
struct AnalyzerTests {
    typealias A = AnalyzerFixtures

    // MARK: category_state_mismatch

    @Test(
        "category_state_mismatch: TASK_ACTIONABLE for a cancelled task names the state, action and expected category"
    )
    func categoryStateMismatch() throws {
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
            try A.notification(A.n1, at: "2026-11-20T08:00:00Z", buttons: A.actionable),
        ])
        #expect(findings.map(\.code) == [.categoryStateMismatch])
        let f = try #require(findings.first)
        #expect(f.seq == 2)
        #expect(f.id == A.n1)
        #expect(f.taskID == 7)
        #expect(try f.at == (A.time("2026-11-20T08:00:00Z")))
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("TASK_ACTIONABLE"))
        #expect(f.message.contains("cancelled"))
        #expect(f.message.contains("TASK_CANCELLED"))
        #expect(f.message.contains("act-c"))
    }

    @Test(
        "a premium notification whose category matches the task's state is fine, in every state that may be notified",
        arguments: [
            ([String](), "TASK_ACTIONABLE", AnalyzerFixtures.actionable),
            (["mark_in_progress"], "TASK_IN_PROGRESS", AnalyzerFixtures.inProgress),
            (["cancel"], "TASK_CANCELLED", AnalyzerFixtures.cancelled),
            (["complete"], "TASK_COMPLETED", [String]()),
        ])
    func matchingCategoryIsFine(_ actions: [String], _ category: String, _ buttons: [String]) throws {
        var events = try actions.enumerated().map {
            try A.action("a\($0.offset)", $0.element, at: "2026-11-20T07:00:00Z")
        }
        events.append(try A.notification(A.n1, category: category, buttons: buttons))
        #expect(try A.findings(events).isEmpty)
    }

    @Test("a long (UUID) id is shortened in the message but the finding keeps the whole id")
    func longIDInMessage() throws {
        let id = "2C3728F5-AC04-4973-862A-20422BDAE4B1"
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"), try A.notification(id, buttons: A.actionable),
        ])
        let f = try #require(findings.first)
        #expect(f.id == id)
        #expect(f.message.contains("2C3728F5"))
    }

    // MARK: buttons_category_mismatch

    @Test("buttons_category_mismatch: TASK_IN_PROGRESS offering mark_in_progress names both button lists")
    func buttonsCategoryMismatch() throws {
        let findings = try A.findings([
            try A.action("act-m", "mark_in_progress", at: "2026-11-20T07:00:00Z"),
            try A.notification(A.n1, category: "TASK_IN_PROGRESS", buttons: A.actionable),
        ])
        #expect(findings.map(\.code) == [.buttonsCategoryMismatch])
        let f = try #require(findings.first)
        #expect(f.seq == 2)
        #expect(f.id == A.n1)
        #expect(f.taskID == 7)
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("mark_in_progress"))
        #expect(f.message.contains("TASK_IN_PROGRESS"))
    }

    @Test(
        "button_types equal to the category's set in another order (or repeated) are fine; absent ones are not checked"
    )
    func buttonsAsASet() throws {
        #expect(
            try A.findings([A.notification(A.n1, buttons: ["mark_in_progress", "cancel", "complete", "edit"])]).isEmpty)
        #expect(
            try A.findings([
                A.notification(A.n1, buttons: ["cancel", "edit", "complete", "mark_in_progress", "cancel"])
            ]).isEmpty)
        #expect(try A.findings([A.notification(A.n1, buttons: nil)]).isEmpty)
        // A missing button is a mismatch too.
        #expect(
            try A.findings([A.notification(A.n1, buttons: ["edit", "complete", "cancel"])]).map(\.code) == [
                .buttonsCategoryMismatch
            ])
    }

    // MARK: premium_mismatch

    @Test(
        "premium_mismatch: a free user (is_premium false) sent TASK_ACTIONABLE; the message names the user and category"
    )
    func premiumMismatchFreeUser() throws {
        let findings = try A.findings([
            try A.notification(A.n1, user: "u_carlos", buttons: A.actionable, premium: false)
        ])
        #expect(findings.map(\.code) == [.premiumMismatch])
        let f = try #require(findings.first)
        #expect(f.seq == 1)
        #expect(f.id == A.n1)
        #expect(f.taskID == 7)
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("u_carlos"))
        #expect(f.message.contains("TASK_ACTIONABLE"))
    }

    @Test(
        "premium_mismatch: a premium user sent TASK_NOTIFICATION_GENERIC is that finding only, not a category mismatch"
    )
    func premiumMismatchGenericForPremium() throws {
        for premium in [true, nil] as [Bool?] {
            let findings = try A.findings([
                try A.notification(
                    A.n1, user: "u_ben", category: "TASK_NOTIFICATION_GENERIC", buttons: [], premium: premium)
            ])
            #expect(findings.map(\.code) == [.premiumMismatch], "is_premium \(String(describing: premium))")
            #expect(findings.first?.message.contains("u_ben") == true)
            #expect(findings.first?.message.contains("TASK_NOTIFICATION_GENERIC") == true)
        }
    }

    @Test(
        "a generic notification with no buttons for a free user is fine, whatever the task's state",
        arguments: [[], ["mark_in_progress"], ["cancel"], ["complete"]] as [[String]])
    func genericForFreeUserIsFine(_ actions: [String]) throws {
        var events = try actions.enumerated().map {
            try A.action("a\($0.offset)", $0.element, at: "2026-11-20T07:00:00Z")
        }
        events.append(
            try A.notification(
                A.n1, user: "u_carlos", category: "TASK_NOTIFICATION_GENERIC", buttons: [], premium: false))
        #expect(try A.findings(events).isEmpty)
    }

    // MARK: thread_id_mismatch

    @Test("thread_id_mismatch: thread-id residence-12 for task 7 names the thread-id and the expected one")
    func threadIDMismatch() throws {
        let findings = try A.findings([try A.notification(A.n1, thread: "residence-12")])
        #expect(findings.map(\.code) == [.threadIDMismatch])
        let f = try #require(findings.first)
        #expect(f.seq == 1)
        #expect(f.id == A.n1)
        #expect(f.taskID == 7)
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("residence-12"))
        #expect(f.message.contains("task-7"))
    }

    @Test("thread-id task-N is fine; a missing thread-id is a mismatch")
    func threadIDNearMiss() throws {
        #expect(try A.findings([A.notification(A.n1, thread: "task-7")]).isEmpty)
        let missing = try A.decode(
            #"{"type":"notification","id":"n-0009","at":"2026-11-20T08:00:00Z","user":"u_ann","#
                + #""payload":{"aps":{"category":"TASK_ACTIONABLE"},"task_id":7}}"#
        )
        #expect(try A.findings([missing]).map(\.code) == [.threadIDMismatch])
        #expect(try A.findings([A.notification(A.n1, thread: "task-70")]).map(\.code) == [.threadIDMismatch])
    }

    // MARK: invalid_transition

    @Test("invalid_transition: an accepted delete on an active task names the action and the states")
    func invalidTransition() throws {
        let findings = try A.findings([try A.notification(A.n1), try A.action("act-del", "delete")])
        #expect(findings.map(\.code) == [.invalidTransition])
        let f = try #require(findings.first)
        #expect(f.seq == 2)
        #expect(f.id == "act-del")
        #expect(f.taskID == 7)
        #expect(try f.at == (A.time("2026-11-20T10:00:00Z")))
        #expect(f.message.contains("act-del"))
        #expect(f.message.contains("delete"))
        #expect(f.message.contains("active"))
        #expect(f.message.contains("deleted"))
    }

    @Test("invalid_transition after delete names the deleting action")
    func invalidAfterDelete() throws {
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
            try A.action("act-d", "delete", at: "2026-11-20T08:00:00Z"),
            try A.action("act-late", "uncancel", at: "2026-11-20T09:00:00Z"),
        ])
        #expect(findings.map(\.code) == [.invalidTransition])
        #expect(findings.first?.id == "act-late")
        #expect(findings.first?.seq == 3)
        #expect(findings.first?.message.contains("act-d") == true)
        #expect(findings.first?.message.contains("deleted") == true)
    }

    @Test("a rejected action on a cancelled task is not invalid_transition, and open or dismiss after delete is fine")
    func invalidTransitionNearMisses() throws {
        #expect(
            try A.findings([
                A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
                A.action("act-x", "complete", outcome: "rejected", at: "2026-11-20T08:00:00Z"),
                A.action("act-y", "mark_in_progress", outcome: "failed", at: "2026-11-20T08:30:00Z"),
            ]).isEmpty)
        #expect(
            try A.findings([
                A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
                A.action("act-d", "delete", at: "2026-11-20T08:00:00Z"),
                A.action("act-o", "open", at: "2026-11-20T09:00:00Z"),
                A.action("act-s", "dismiss", at: "2026-11-20T09:01:00Z"),
            ]).isEmpty)
    }

    // MARK: action_not_offered

    @Test(
        "action_not_offered: complete on TASK_CANCELLED after uncancel names the action, notification and category"
    )
    func actionNotOffered() throws {
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
            try A.notification(A.n1, at: "2026-11-20T08:00:00Z", category: "TASK_CANCELLED", buttons: A.cancelled),
            try A.action("act-u", "uncancel", at: "2026-11-20T09:00:00Z", notification: A.n1),
            try A.action("act-x", "complete", at: "2026-11-20T10:00:00Z", notification: A.n1),
        ])
        #expect(findings.map(\.code) == [.actionNotOffered], "the transition itself (active → completed) is valid")
        let f = try #require(findings.first)
        #expect(f.seq == 4)
        #expect(f.id == "act-x")
        #expect(f.taskID == 7)
        #expect(f.message.contains("act-x"))
        #expect(f.message.contains("complete"))
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("TASK_CANCELLED"))
    }

    @Test("action_not_offered finds its notification case-insensitively")
    func actionNotOfferedCaseInsensitive() throws {
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
            try A.notification("N-ABCD", at: "2026-11-20T08:00:00Z", category: "TASK_CANCELLED", buttons: A.cancelled),
            try A.action("act-u", "uncancel", at: "2026-11-20T09:00:00Z", notification: "n-abcd"),
            try A.action("act-x", "complete", at: "2026-11-20T10:00:00Z", notification: "n-AbCd"),
        ])
        #expect(findings.map(\.code) == [.actionNotOffered])
        #expect(findings.first?.id == "act-x")
    }

    @Test(
        "an action naming an unknown notification isn't action_not_offered; open, dismiss on TASK_COMPLETED are offered"
    )
    func actionNotOfferedNearMisses() throws {
        #expect(try A.findings([A.action("act-x", "complete", notification: "nowhere-1")]).isEmpty)
        let completed = [
            try A.action("act-c", "complete", at: "2026-11-20T07:00:00Z"),
            try A.notification(A.n1, at: "2026-11-20T08:00:00Z", category: "TASK_COMPLETED", buttons: []),
        ]
        #expect(
            try A.findings(
                completed + [
                    A.action("act-o", "open", at: "2026-11-20T09:00:00Z", notification: A.n1),
                    A.action("act-s", "dismiss", at: "2026-11-20T09:01:00Z", notification: A.n1),
                ]
            ).isEmpty)
        // Buttons the category does offer are fine too.
        #expect(
            try A.findings([
                A.notification(A.n1, buttons: A.actionable),
                A.action("act-m", "mark_in_progress", notification: A.n1),
            ]).isEmpty)
    }

    // MARK: notification_after_delete

    @Test(
        "notification_after_delete: a notification for a deleted task names the deleting action, no category mismatch"
    )
    func notificationAfterDelete() throws {
        let findings = try A.findings([
            try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
            try A.action("act-d", "delete", at: "2026-11-20T07:30:00Z"),
            try A.notification(A.n1, at: "2026-11-20T08:00:00Z", buttons: A.actionable),
        ])
        #expect(findings.map(\.code) == [.notificationAfterDelete])
        let f = try #require(findings.first)
        #expect(f.seq == 3)
        #expect(f.id == A.n1)
        #expect(f.taskID == 7)
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("deleted"))
        #expect(f.message.contains("act-d"))
    }

    @Test("a notification for a cancelled (not deleted) task, with its category, is fine")
    func notificationAfterCancelIsFine() throws {
        #expect(
            try A.findings([
                A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z"),
                A.notification(A.n1, at: "2026-11-20T08:00:00Z", category: "TASK_CANCELLED", buttons: A.cancelled),
            ]).isEmpty)
    }

    // MARK: payload_too_large

    /// A notification whose payload is exactly `size` bytes once the whitespace
    /// outside strings is removed; the line itself has extra spaces and newlines-free
    /// padding outside strings, and spaces inside a string (which count).
    static func payload(ofCompactSize size: Int) throws -> Event {
        let head = #"{"aps":{"alert":"a b","category":"TASK_ACTIONABLE","thread-id":"task-7"},"task_id":7,"pad":""#
        let tail = #""}"#
        let padding = size - head.utf8.count - tail.utf8.count
        let compact = head + String(repeating: "x", count: padding) + tail
        try #require(compact.utf8.count == size)
        let spaced =
            #"{ "aps" : { "alert" : "a b" , "category" : "TASK_ACTIONABLE" ,"# + "\t\r\n"
            + #""thread-id" : "task-7" } , "task_id" : 7 , "pad" : ""#
            + String(repeating: "x", count: padding) + "\" }"
        return try A.decode(
            #"{"type":"notification","id":"n-0001","at":"2026-11-20T08:00:00Z","user":"u_ann","payload": "# + spaced
                + "}")
    }

    @Test(
        "payload_too_large: 4097 compact bytes flagged with the size, 4096 not (whitespace outside strings not counted)"
    )
    func payloadTooLarge() throws {
        #expect(try A.findings([AnalyzerTests.payload(ofCompactSize: 4096)]).isEmpty)
        let findings = try A.findings([try AnalyzerTests.payload(ofCompactSize: 4097)])
        #expect(findings.map(\.code) == [.payloadTooLarge])
        let f = try #require(findings.first)
        #expect(f.seq == 1)
        #expect(f.id == "n-0001")
        #expect(f.taskID == 7)
        #expect(f.message.contains("n-0001"))
        #expect(f.message.contains("4097"))
        #expect(f.message.contains("4096"))
    }

    // MARK: delivery_failed

    @Test(
        "delivery_failed: a 410 names the delivery, notification, status and reason, with the notification's task"
    )
    func deliveryFailed() throws {
        let findings = try A.findings([
            try A.notification(A.n1, device: A.device, buttons: A.actionable),
            try A.delivery("dlv-1", for: A.n1, status: 410, reason: "Unregistered"),
        ])
        #expect(findings.map(\.code) == [.deliveryFailed])
        let f = try #require(findings.first)
        #expect(f.seq == 2)
        #expect(f.id == "dlv-1")
        #expect(f.taskID == 7)
        #expect(try f.at == (A.time("2026-11-20T08:00:01Z")))
        #expect(f.message.contains("dlv-1"))
        #expect(f.message.contains(A.n1))
        #expect(f.message.contains("410"))
        #expect(f.message.contains("Unregistered"))
    }

    @Test("a 200 delivery is fine; a failed delivery for an unknown notification is flagged without a task")
    func deliveryNearMiss() throws {
        #expect(
            try A.findings([
                A.notification(A.n1, buttons: A.actionable), A.delivery("dlv-1", for: A.n1, status: 200),
            ]).isEmpty)
        let orphan = try A.findings([
            try A.delivery("dlv-2", for: "nowhere-1", status: 500, reason: "InternalServerError")
        ])
        #expect(orphan.map(\.code) == [.deliveryFailed])
        #expect(orphan.first?.taskID == nil)
    }

    // MARK: sent_after_unregistered

    @Test(
        "sent_after_unregistered: a notification to a device after its 410 names the masked device, delivery and reason"
    )
    func sentAfterUnregistered() throws {
        let gone = Unregistration(
            deliveryID: "dlv-gone", seq: 2, at: try A.time("2026-11-20T08:00:01Z"), reason: "Unregistered")
        let events = [
            try A.notification(A.n1, at: "2026-11-20T08:00:00Z", device: A.device, buttons: A.actionable),
            try A.delivery("dlv-gone", for: A.n1, status: 410, reason: "Unregistered"),
            try A.notification(A.n2, at: "2026-11-21T08:00:00Z", device: A.device, buttons: A.actionable),
        ]
        let context = A.context(knowing: events, unregistrations: [(A.device, gone)])
        let findings = try A.findings(events, context: context)
        #expect(findings.map(\.code) == [.deliveryFailed, .sentAfterUnregistered])
        let f = try #require(findings.last)
        #expect(f.seq == 3)
        #expect(f.id == A.n2)
        #expect(f.taskID == 7)
        // The evidence keeps the token whole; only the rendering decides how it shows.
        guard case .sentToDeadToken(let device, _, let deadSince) = f.evidence else {
            Issue.record("evidence is \(f.evidence)")
            return
        }
        #expect(device == A.device)
        #expect(deadSince == gone)
        let message = f.message(tokens: { "MASK[\($0.prefix(4))]" })
        #expect(message.contains(A.n2))
        #expect(message.contains("dlv-gone"))
        #expect(message.contains("Unregistered"))
        #expect(message.contains("MASK[d0d0]"))
        #expect(!message.contains(A.device))
        #expect(f.message.contains(TokenMask.mask(A.device)) && !f.message.contains(A.device))
        #expect(!f.message.contains(A.device), "device tokens are masked in messages")
        // The analyzer asks about the notification's own device and position.
        #expect(context.asked.last?.device == A.device)
        #expect(try context.asked.last?.position == Position(at: A.time("2026-11-21T08:00:00Z"), seq: 3))
    }

    @Test("a notification at exactly the 410's time is not sent_after_unregistered; one microsecond later is")
    func sentAfterUnregisteredIsStrict() throws {
        let gone = Unregistration(
            deliveryID: "dlv-gone", seq: 2, at: try A.time("2026-11-20T09:00:00Z"), reason: "ExpiredToken")
        func run(_ at: String, device: String = A.device) throws -> [FindingCode] {
            let events = [try A.notification(A.n2, at: at, device: device, buttons: A.actionable)]
            return try A.findings(events, context: A.context(knowing: events, unregistrations: [(A.device, gone)])).map(
                \.code)
        }
        #expect(try run("2026-11-20T09:00:00Z") == [])
        #expect(try run("2026-11-20T09:00:00.000001Z") == [.sentAfterUnregistered])
        #expect(try run("2026-11-20T09:00:00.000001Z", device: A.otherDevice) == [], "another device is not affected")
        // A notification without a device cannot be judged.
        let noDevice = [try A.notification(A.n2, at: "2026-11-21T00:00:00Z", buttons: A.actionable)]
        #expect(
            try A.findings(noDevice, context: A.context(knowing: noDevice, unregistrations: [(A.device, gone)])).isEmpty
        )
    }

    // MARK: order

    @Test("positions order by (at, seq): a tie in at is resolved by seq")
    func positionOrder() throws {
        let t = try A.time("2026-11-20T09:00:00Z")
        let earlier = Timestamp(microseconds: t.microseconds - 1)
        #expect(Position(at: t, seq: 2) < Position(at: t, seq: 3))
        #expect(Position(at: earlier, seq: 9) < Position(at: t, seq: 1))
        #expect(!(Position(at: t, seq: 3) < Position(at: t, seq: 3)))
    }

    @Test("with a cancel and a notification at the same at, the lower seq comes first and decides the finding")
    func tiesResolvedBySeq() throws {
        let cancel = try A.action("act-c", "cancel", at: "2026-11-20T09:00:00Z")
        let notification = try A.notification(A.n1, at: "2026-11-20T09:00:00Z", buttons: A.actionable)
        // Cancel stored first: the notification sees a cancelled task.
        #expect(
            try A.findingsInTimelineOrder([(2, notification), (1, cancel)]).map(\.code) == [.categoryStateMismatch])
        // Notification stored first: it saw an active task.
        #expect(try A.findingsInTimelineOrder([(2, cancel), (1, notification)]).isEmpty)
        // An earlier at wins over a lower seq.
        let earlyNotification = try A.notification(A.n1, at: "2026-11-20T08:59:59.999999Z", buttons: A.actionable)
        #expect(try A.findingsInTimelineOrder([(1, cancel), (2, earlyNotification)]).isEmpty)
    }

    @Test("a clean story (notify, start, complete, notify completed, deliveries ok) has no finding")
    func cleanStory() throws {
        #expect(
            try A.findings([
                A.notification(A.n1, at: "2026-11-20T08:00:00Z", device: A.device, buttons: A.actionable),
                A.delivery("dlv-1", for: A.n1, status: 200, at: "2026-11-20T08:00:01Z"),
                A.action("act-m", "mark_in_progress", at: "2026-11-20T09:00:00Z", notification: A.n1),
                A.action("act-x", "complete", at: "2026-11-20T10:00:00Z"),
                A.notification(
                    A.n2, at: "2026-11-20T11:00:00Z", device: A.device, category: "TASK_COMPLETED", buttons: []),
            ]).isEmpty)
    }
}

@Suite("audit messages read as sentences")
struct AnalyzerWordingTests {
    @Test("a free user's notification without a category says it has none")
    func freeUserWithoutCategory() throws {
        let free = try AnalyzerFixtures.notification(AnalyzerFixtures.n1, category: nil, premium: false)
        let f = try #require(try AnalyzerFixtures.findings([free]).first { $0.code == .premiumMismatch })
        let expected = "(is_premium false) has no category, not TASK_NOTIFICATION_GENERIC"
        #expect(f.message.hasSuffix(expected), "\(f.message)")
    }
}
