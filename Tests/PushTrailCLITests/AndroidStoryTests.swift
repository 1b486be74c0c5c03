import Testing

/// The Android stories of Samples/STORIES.md (d to h), checked on the sample store the
/// way support would ask: thread, task and show.
@Suite("the sample's Android stories")
struct AndroidStoryTests {
    typealias R = ReplayFixtures

    /// The events of `thread` in the sample store, by id.
    static func thread(_ store: String, _ thread: String) throws -> [String: JSON] {
        var byID: [String: JSON] = [:]
        for e in R.elements(try R.json(store, ["thread", thread, "--json"])["events"]) {
            if let id = e["id"]?.string { byID[id] = e }
        }
        return byID
    }

    /// The codes of an event's findings, in order.
    static func codes(_ event: JSON?) -> [String] {
        R.elements(event?["findings"]).compactMap { $0["code"]?.string }
    }

    @Test("story d: the iOS four-button list sent to Android shows three; mark_in_progress is never seen")
    func noMarkInProgress() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = try Self.thread(store, "task-1301")
        let sent = try #require(events["57d84e5b-548b-4986-a627-9bc62d0e65fa"])
        #expect(sent["platform"] == .string("android"))
        #expect(R.elements(sent["buttons"]).compactMap(\.string) == ["edit", "complete", "cancel"])
        #expect(
            R.elements(sent["button_types"]).compactMap(\.string) == ["edit", "complete", "cancel", "mark_in_progress"])
        #expect(Self.codes(sent) == ["buttons_category_mismatch", "too_many_actions"])
        let hidden = R.elements(sent["findings"]).first { $0["code"] == .string("too_many_actions") }
        #expect(hidden?["message"]?.string?.hasSuffix("so the user never saw [mark_in_progress]") == true)
        // She started it in the app: in the task's history, not in the thread.
        #expect(events["act_0047"] == nil)
        let task = try R.json(store, ["task", "1301", "--json"])
        let started = R.elements(task["history"]).first { $0["id"] == .string("act_0047") }
        #expect(started?["action"] == .string("mark_in_progress"))
        #expect(started?["from"] == .string("active") && started?["to"] == .string("in_progress"))
        #expect(task["state"] == .string("completed"))
        #expect(Self.codes(events["act_0048"]).isEmpty, "the complete was on a button the next push showed")
    }

    @Test("story e: a notification block with buttons is flagged; the TASK_COMPLETED one, with no buttons, is not")
    func notificationMessage() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = try Self.thread(store, "task-1302")
        let overdue = try #require(events["994be680-ed7e-4653-8ce7-77e97f6882f5"])
        #expect(Self.codes(overdue) == ["fcm_notification_message"])
        // The text is the block's: the data map has none.
        #expect(overdue["title"] == .string("Overdue: Clean dishwasher filter"))
        #expect(overdue["body"] == .string("Clean dishwasher filter was due Sat, Nov 21 and is 2 days overdue."))
        let done = try #require(events["e9830432-7b40-4132-a97e-41267e166ade"])
        let raw = try R.json(store, ["show", "e9830432-7b40-4132-a97e-41267e166ade", "--json"])
        #expect(raw["event"]?["payload"]?["notification"]?["title"] == .string("Completed: Clean dishwasher filter"))
        #expect(done["category"] == .string("TASK_COMPLETED"))
        #expect(R.elements(done["buttons"]).isEmpty)
        #expect(Self.codes(done).isEmpty)
    }

    @Test("story f: FCM's 404 UNREGISTERED retires the old token; the two sends after it are flagged, the new one not")
    func unregisteredToken() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = try Self.thread(store, "task-1303")
        let late = events.values.filter { Self.codes($0).contains("sent_after_unregistered") }.compactMap {
            $0["id"]?.string
        }
        #expect(Set(late) == ["e54bdb9b-f0d0-426d-83ee-3dfbf6f70fd5", "5d4e0e63-93aa-40de-94a2-256cd1c34906"])
        for id in ["dlv_0073", "dlv_0074", "dlv_0075"] {
            #expect(events[id]?["status"] == .number("404"), "\(id)")
            #expect(events[id]?["reason"] == .string("UNREGISTERED"), "\(id)")
            #expect(Self.codes(events[id]) == ["delivery_failed"], "\(id)")
        }
        #expect(Self.codes(events["2416431e-719e-452d-aa69-6e3be4446481"]).isEmpty, "the first send was not late")
        #expect(Self.codes(events["b8cbdbf4-dc21-4f0d-baa8-bb8e172c1172"]).isEmpty, "the new install's token")
        #expect(Self.codes(events["dlv_0076"]).isEmpty)
        let message = R.elements(events["e54bdb9b-f0d0-426d-83ee-3dfbf6f70fd5"]?["findings"]).first?["message"]
        #expect(
            message?.string?.contains("after FCM answered 404 UNREGISTERED") == true, "\(String(describing: message))")
    }

    @Test("story g: one thread holds the iPhone's and the tablet's notifications, and the presses from both count")
    func twoPlatformsOneThread() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let list = R.elements(try R.json(store, ["thread", "task-1304", "--json"])["events"])
        let platforms = list.filter { $0["type"] == .string("notification") }.compactMap { $0["platform"]?.string }
        #expect(platforms == ["ios", "android", "ios", "android", "ios", "android"])
        #expect(list.allSatisfy { Self.codes($0).isEmpty }, "a clean thread")
        #expect(list.filter { $0["type"] == .string("delivery") }.allSatisfy { $0["status"] == .number("200") })
        let events = try Self.thread(store, "task-1304")
        #expect(
            R.elements(events["07e7d38f-f689-4b99-99fd-641d887bf33b"]?["buttons"]).compactMap(\.string)
                == ["edit", "complete", "cancel", "mark_in_progress"])
        #expect(
            R.elements(events["fd1b3207-a385-4ae9-82c3-f841c84dc346"]?["buttons"]).compactMap(\.string)
                == ["complete", "cancel", "mark_in_progress"])
        #expect(events["act_0052"]?["task_state"] == .string("in_progress"))
        #expect(events["act_0053"]?["task_state"] == .string("completed"))
        // Which device pressed: the tablet's FCM token, then the iPhone's APNs token.
        let tablet = try R.json(store, ["show", "act_0052", "--json"])["event"]?["device"]?.string
        let phone = try R.json(store, ["show", "act_0053", "--json"])["event"]?["device"]?.string
        #expect(tablet?.contains(":APA91b") == true)
        #expect(phone?.count == 64 && phone?.contains(":") == false)
        let task = try R.json(store, ["task", "1304", "--json"])
        #expect(task["state"] == .string("completed") && task["fields"]?["completions"] == .number("1"))
    }

    @Test("story h: data values of the iOS types are flagged, and FCM's 400 for that send is a failed delivery")
    func invalidData() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let events = try Self.thread(store, "task-1305")
        let refused = try #require(events["240a7ef4-a58a-4f06-a4d3-972beb99677c"])
        #expect(Self.codes(refused) == ["fcm_invalid_data"])
        let message = R.elements(refused["findings"]).first?["message"]?.string ?? ""
        #expect(message.contains("payload.data.task_id is a number"), "\(message)")
        #expect(message.contains("payload.data.is_premium is a boolean"), "\(message)")
        // Still read as those values: the task and the premium flag are known.
        #expect(refused["task_id"] == .number("1305") && refused["is_premium"] == .bool(true))
        #expect(events["dlv_0083"]?["reason"] == .string("INVALID_ARGUMENT"))
        #expect(Self.codes(events["dlv_0083"]) == ["delivery_failed"])
        #expect(Self.codes(events["0eed1c5a-7466-4976-b104-f9eef781378f"]).isEmpty, "the fixed send is clean")
        #expect(events["act_0054"]?["task_state"] == .string("completed"))
    }

    @Test("thread, task, log and show name each notification's platform, and the buttons an Android user never saw")
    func humanOutput() throws {
        let dir = try TempDir()
        let store = try AuditFixtures.sampleStore(dir)
        let thread = R.run(store, ["thread", "task-1304"])
        #expect(thread.status == 0)
        #expect(thread.stdout.contains("notification ios TASK_ACTIONABLE [edit, complete, cancel, mark_in_progress]"))
        #expect(thread.stdout.contains("notification android TASK_ACTIONABLE [complete, cancel, mark_in_progress]"))
        #expect(!thread.stdout.contains("not shown"), "a clean thread marks nothing")
        let task = R.run(store, ["task", "1301"])
        #expect(
            task.stdout.contains(
                "notification android TASK_ACTIONABLE [edit, complete, cancel] (not shown: mark_in_progress)"),
            "\(task.stdout)")
        let log = R.run(store, ["log", "--user", "u_gus", "--type", "notification"])
        let lines = log.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.first?.contains("(a notification message: no buttons while the app is in the background)") == true)
        #expect(lines.last?.contains("TASK_COMPLETED (no buttons) \"Completed: Clean dishwasher filter\"") == true)
        let show = R.run(store, ["show", "fd1b3207-a385-4ae9-82c3-f841c84dc346"])
        #expect(show.stdout.contains("  platform  android\n"), "\(show.stdout)")
        // A delivery says which service answered: the one its notification went through.
        #expect(R.run(store, ["show", "dlv_0073"]).stdout.contains("  answer    FCM 404 UNREGISTERED\n"))
        #expect(R.run(store, ["show", "dlv_0077"]).stdout.contains("  answer    APNs 200 accepted\n"))
        #expect(R.run(store, ["show", "dlv_0078"]).stdout.contains("  answer    FCM 200 accepted\n"))
    }
}
