import TestSupport
import Testing

@testable import PushTrailModel

extension AnalyzerFixtures {
    static let fcmToken = "fAkEiNsTaNcE0:APA91bFaKeToKeNfOrThEaNaLyZeRtEsTs0123456789abcdefghijklmnopqrstuvwxyz"

    /// An Android notification line: the FCM message's data map, every value a string
    /// unless `raw` adds members as written. `buttons` is the comma form; nil leaves it out.
    static func android(
        _ id: String, at: String = "2026-11-20T08:00:00Z", user: String = "u_ann", device: String? = nil,
        task: String? = "7", thread: String? = nil, category: String? = "TASK_ACTIONABLE", buttons: String? = nil,
        premium: String? = "true", raw: String = "", blocks: String = "", androidData: String? = nil
    ) throws -> Event {
        var data = ["\"title\":\"Clean gutters\"", "\"body\":\"Due soon\""]
        if let category { data.append("\"category\":\"\(category)\"") }
        if let threadID = thread ?? task.map({ "task-\($0)" }) { data.append("\"thread_id\":\"\(threadID)\"") }
        if let task { data.append("\"task_id\":\"\(task)\"") }
        if let buttons { data.append("\"button_types\":\"\(buttons)\"") }
        if let premium { data.append("\"is_premium\":\"\(premium)\"") }
        var payload = "{\"token\":\"\(device ?? fcmToken)\",\"data\":{" + data.joined(separator: ",") + raw + "}"
        if let androidData { payload += ",\"android\":{\"data\":\(androidData)}" }
        payload += blocks + "}"
        let line =
            "{\"type\":\"notification\",\"id\":\"\(id)\",\"at\":\"\(at)\",\"user\":\"\(user)\","
            + "\"platform\":\"android\",\"payload\":\(payload)}"
        return try decode(line)
    }

    static let androidActionable = "complete,cancel,mark_in_progress"
}

/// Each rule on Android, with a trigger and a near miss, and the iOS twin where the
/// platforms differ.
@Suite("audit rules on Android notifications")
struct AndroidAnalyzerTests {
    typealias A = AnalyzerFixtures

    @Test("category_state_mismatch: the same category table on Android")
    func categoryState() throws {
        let cancel = try A.action("act-c", "cancel", at: "2026-11-20T07:00:00Z")
        let wrong = try A.findings([cancel, try A.android(A.n1, buttons: A.androidActionable)])
        #expect(wrong.map(\.code) == [.categoryStateMismatch])
        let right = try A.findings([
            cancel, try A.android(A.n1, category: "TASK_CANCELLED", buttons: "uncancel,delete"),
        ])
        #expect(right.isEmpty)
    }

    @Test("buttons_category_mismatch: Android's TASK_ACTIONABLE is three buttons; iOS's is four")
    func buttonsForCategory() throws {
        #expect(try A.findings([try A.android(A.n1, buttons: A.androidActionable)]).isEmpty)
        // Order does not matter; the JSON-array form reads the same.
        #expect(try A.findings([try A.android(A.n1, buttons: "mark_in_progress,complete,cancel")]).isEmpty)
        let ios = try A.findings([try A.notification(A.n1, buttons: A.actionable)])
        #expect(ios.isEmpty)
        let iosThree = try A.findings([try A.notification(A.n1, buttons: ["complete", "cancel", "mark_in_progress"])])
        #expect(iosThree.map(\.code) == [.buttonsCategoryMismatch])
        let missing = try A.findings([try A.android(A.n1, buttons: "complete,cancel")])
        #expect(missing.map(\.code) == [.buttonsCategoryMismatch])
        #expect(
            missing.first?.message
                == "notification n-0001 offered buttons [complete, cancel] but TASK_ACTIONABLE has "
                + "[complete, cancel, mark_in_progress] on Android")
        // No button_types: the category's set is what is shown, nothing to compare.
        #expect(try A.findings([try A.android(A.n1)]).isEmpty)
    }

    @Test("too_many_actions: four buttons on Android name the one never seen; three are fine; iOS shows four")
    func tooManyActions() throws {
        let four = try A.findings([try A.android(A.n1, buttons: "edit,complete,cancel,mark_in_progress")])
        #expect(four.map(\.code) == [.buttonsCategoryMismatch, .tooManyActions])
        let f = try #require(four.last)
        #expect(f.evidence == .tooManyButtons(buttons: A.actionable, hidden: ["mark_in_progress"]))
        #expect(
            f.message
                == "Android notification n-0001 lists 4 buttons [edit, complete, cancel, mark_in_progress]; "
                + "Android shows 3, so the user never saw [mark_in_progress]")
        #expect(try A.findings([try A.android(A.n1, buttons: A.androidActionable)]).isEmpty)
        #expect(
            !(try A.findings([try A.notification(A.n1, buttons: A.actionable)]).contains { $0.code == .tooManyActions })
        )
    }

    @Test("fcm_notification_message: a notification block on a push with buttons; not on one without")
    func notificationMessage() throws {
        let block = ",\"notification\":{\"title\":\"Clean gutters\",\"body\":\"Due soon\"}"
        let flagged = try A.findings([try A.android(A.n1, buttons: A.androidActionable, blocks: block)])
        #expect(flagged.map(\.code) == [.fcmNotificationMessage])
        #expect(
            flagged.first?.evidence
                == .notificationMessage(
                    blocks: ["payload.notification"], buttons: ["complete", "cancel", "mark_in_progress"]))
        let androidBlock = ",\"android\":{\"notification\":{\"channel_id\":\"tasks\"}}"
        #expect(try A.findings([try A.android(A.n1, blocks: androidBlock)]).map(\.code) == [.fcmNotificationMessage])
        // A completed task's push offers no buttons: nothing lost, nothing flagged.
        let complete = try A.action("act-1", "complete", at: "2026-11-20T07:00:00Z")
        let quiet = try A.findings([complete, try A.android(A.n1, category: "TASK_COMPLETED", blocks: block)])
        #expect(quiet.isEmpty)
        #expect(try A.findings([try A.android(A.n1, buttons: A.androidActionable)]).isEmpty)
    }

    @Test("fcm_invalid_data: non-string values and reserved keys in either data map; strings are fine")
    func invalidData() throws {
        let typed = try A.findings([try A.android(A.n1, task: nil, thread: "task-7", raw: ",\"task_id\":7")])
        #expect(typed.map(\.code) == [.fcmInvalidData])
        #expect(typed.first?.taskID == 7)
        #expect(
            typed.first?.message
                == "Android notification n-0001: payload.data.task_id is a number, not a string; "
                + "FCM refuses or drops such data")
        let reserved = try A.findings([try A.android(A.n1, raw: ",\"google.c.a.e\":\"1\"")])
        #expect(
            reserved.first?.evidence
                == .invalidData([DataProblem(map: "payload.data", key: "google.c.a.e", kind: .reservedKey)]))
        // android.data replaces data for the fields, but both maps are checked.
        let nested = try A.findings([
            try A.android(
                A.n1,
                androidData:
                    "{\"task_id\":\"7\",\"thread_id\":\"task-7\",\"category\":\"TASK_ACTIONABLE\",\"is_premium\":true}")
        ])
        #expect(nested.map(\.code) == [.fcmInvalidData])
        #expect(
            nested.first?.evidence
                == .invalidData([
                    DataProblem(map: "payload.android.data", key: "is_premium", kind: .notString("boolean"))
                ]))
        #expect(try A.findings([try A.android(A.n1)]).isEmpty)
        // iOS payloads have typed values by design.
        #expect(try A.findings([try A.notification(A.n1)]).isEmpty)
    }

    @Test("premium_mismatch and thread_id_mismatch read is_premium and thread_id from the data map")
    func premiumAndThread() throws {
        let free = try A.findings([try A.android(A.n1, premium: "false")])
        #expect(free.map(\.code) == [.premiumMismatch])
        #expect(try A.findings([try A.android(A.n1, category: "TASK_NOTIFICATION_GENERIC", premium: "false")]).isEmpty)
        let thread = try A.findings([try A.android(A.n1, thread: "task-8")])
        #expect(thread.map(\.code) == [.threadIDMismatch])
        #expect(try A.findings([try A.android(A.n1, thread: "task-7")]).isEmpty)
    }

    @Test("action_not_offered: on Android the buttons shown (the first three), on iOS the category's set")
    func actionNotOffered() throws {
        // Four listed, three shown: mark_in_progress was never on screen.
        let four = try A.android(A.n1, buttons: "edit,complete,cancel,mark_in_progress")
        let pressed = try A.findings([four, try A.action("act-1", "mark_in_progress", notification: A.n1)])
        #expect(pressed.filter { $0.code == .actionNotOffered }.count == 1)
        #expect(
            pressed.last?.message
                == "action act-1 (mark_in_progress, ok) pressed mark_in_progress on notification n-0001, "
                + "an Android notification that showed [edit, complete, cancel]")
        let complete = try A.findings([four, try A.action("act-1", "complete", notification: A.n1)])
        #expect(!complete.contains { $0.code == .actionNotOffered })
        // Without button_types Android's TASK_ACTIONABLE has no edit; iOS's has.
        let edit = try A.findings([try A.android(A.n1), try A.action("act-1", "edit", notification: A.n1)])
        #expect(edit.map(\.code) == [.actionNotOffered])
        let iosEdit = try A.findings([try A.notification(A.n1), try A.action("act-1", "edit", notification: A.n1)])
        #expect(iosEdit.isEmpty)
        let open = try A.findings([try A.android(A.n1), try A.action("act-1", "open", notification: A.n1)])
        #expect(open.isEmpty)
    }

    @Test("notification_after_delete and invalid_transition: the fold is the same for both platforms")
    func foldRules() throws {
        let events = [
            try A.action("act-1", "cancel", at: "2026-11-20T06:00:00Z"),
            try A.action("act-2", "delete", at: "2026-11-20T07:00:00Z"),
            try A.android(A.n1, category: "TASK_CANCELLED", buttons: "uncancel,delete"),
            try A.action("act-3", "uncancel", at: "2026-11-20T09:00:00Z"),
        ]
        #expect(try A.findings(events).map(\.code) == [.notificationAfterDelete, .invalidTransition])
        #expect(try A.findings(Array(events.prefix(1))).isEmpty)
    }

    @Test("payload_too_large: FCM counts data keys and values; 4096 bytes pass, 4097 do not")
    func payloadSize() throws {
        let base = try #require(try A.android(A.n1, raw: ",\"pad\":\"\"").notification).payloadSize
        let fits = String(repeating: "x", count: 4096 - base)
        let ok = try A.android(A.n1, raw: ",\"pad\":\"\(fits)\"")
        #expect(ok.notification?.payloadSize == 4096)
        #expect(try A.findings([ok]).isEmpty)
        let over = try A.findings([try A.android(A.n1, raw: ",\"pad\":\"\(fits)x\"")])
        #expect(over.map(\.code) == [.payloadTooLarge])
        #expect(over.first?.message == "notification n-0001 payload is 4097 bytes, over FCM's 4096-byte limit")
        let apns = try A.findings([
            try A.notification(A.n1, extra: ",\"pad\":\"" + String(repeating: "x", count: 4096) + "\"")
        ])
        #expect(apns.first?.message.hasSuffix("bytes, over APNs' 4096-byte limit") == true, "\(apns)")
    }

    @Test("delivery_failed and sent_after_unregistered name FCM for FCM's answers")
    func fcmAnswers() throws {
        let first = try A.android(A.n1, at: "2026-11-20T08:00:00Z")
        let gone = try A.delivery("d-1", for: A.n1, status: 404, reason: "UNREGISTERED")
        let later = try A.android(A.n2, at: "2026-11-20T09:00:00Z")
        let unregistration = Unregistration(
            deliveryID: "d-1", seq: 2, at: gone.at, delivery: try #require(gone.delivery))
        #expect(unregistration.platform == .android && unregistration.status == 404)
        let context = A.context(knowing: [first, later], unregistrations: [(A.fcmToken, unregistration)])
        let findings = try A.findings([first, gone, later], context: context)
        #expect(findings.map(\.code) == [.deliveryFailed, .sentAfterUnregistered])
        #expect(findings.first?.message == "delivery d-1 for notification n-0001: FCM answered 404 UNREGISTERED")
        #expect(findings.last?.message.contains("after FCM answered 404 UNREGISTERED for it at") == true)
        // A 200 is fine; an iOS answer still says APNs.
        let ok = try A.findings([first, try A.delivery("d-2", for: A.n1, status: 200)])
        #expect(ok.isEmpty)
        let ios = try A.findings([
            try A.notification(A.n1), try A.delivery("d-3", for: A.n1, status: 410, reason: "Unregistered"),
        ])
        #expect(ios.first?.message == "delivery d-3 for notification n-0001: APNs answered 410 Unregistered")
    }
}
