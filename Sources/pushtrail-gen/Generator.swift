#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A task in flight. When its thread has run its course (or it is completed or deleted) a
/// new task with a fresh id takes over the slot, so memory stays constant.
struct TaskSlot {
    var id: Int
    var due: Int32
    var residence: Int32
    var name: Int16
    var interval: Int16
    var events: Int16
    var budget: Int16
    var state: TaskState
    var renamed: Bool
    var announced: Bool
}

struct UserRecord {
    var name: Int16
    var devices: UInt8
    var premium: Bool
    /// Which devices are Android devices (bit n: device n), the others being iPhones.
    var android: UInt8 = 0
}

/// A household's home; every member gets the notifications of its tasks.
struct Residence {
    var firstUser: Int32
    var members: UInt8
    var name: Int32
}

/// The simulation: a discrete-event loop over task steps, deliveries, button responses and
/// state notices, folding each task through the state machine as it goes and writing every event as
/// it happens. Only per-task, per-user and per-residence records and the pending queue are
/// kept.
struct Generator {
    static let maxDevices = 3
    // Shares chosen so a stream is ~45% notifications, ~35% deliveries, ~20% actions.
    static let deliveryShare = 0.78
    static let responseShare = 0.36
    static let failedShare = 0.03
    /// Deliveries, opens and dismisses written a few lines late.
    static let deferShare = 0.02
    /// Deliveries written just before the notification they answer.
    static let earlyDeliveryShare = 0.012
    /// Android users who also have an iPhone: device 0 is the iPhone, device 1 an Android
    /// tablet, and both get every notification, so their threads hold both platforms.
    static let twoPlatformShare = 0.05
    /// `<22 chars>:APA91b<134 chars>`, the shape of an FCM registration token.
    static let fcmTokenLength = 163

    /// Mean time between a task's steps: 14 h, shortened when there are few tasks for
    /// many events so that a run spans about a year at most.
    private let stepGapMean: Double
    private let rate: Double
    private let target: Int
    private var rng: Xoshiro256
    private var out: ByteSink
    private let tag: UInt32
    private let tokenKey: UInt64
    private let uuidKey: UInt64
    private let androidShare: Double
    private let platformKey: UInt64
    /// The `%…` half of FCM message ids: the sender's, the same for every message.
    private let senderHash: UInt64

    private var pool = TextPool()
    private var text: UnsafeMutablePointer<UInt8>
    private var firstNames: [TextPool.Ref] = []
    private var loginNames: [TextPool.Ref] = []
    private var taskNames: [TextPool.Ref] = []
    private var taskRenames: [TextPool.Ref] = []
    private var homeNames: [TextPool.Ref] = []
    private var notes: [TextPool.Ref] = []

    private var tasks = Table<TaskSlot>([])
    private var users = Table<UserRecord>([])
    private var deviceGeneration = Table<UInt16>([])
    /// -1: healthy. n >= 0: APNs said 410 and n more sends go out before the token is replaced.
    private var deviceDead = Table<Int8>([])
    private var residences = Table<Residence>([])
    /// Per device: a length byte and the written `user`/`device` fields.
    private var fragments: UnsafeMutablePointer<UInt8>
    /// Room for an APNs token's fragment, or for an FCM token's (when there are Android users).
    private let fragmentStride: Int
    private var queue: PendingQueue

    private var lastAt: Int
    private var emitted = 0
    private var actionCount = 0
    private var deliveryCount = 0
    private var uuidCount: UInt64 = 0
    private var androidNotifications = 0
    private var nextTaskId = 1001
    private var lineStart = 0
    private var deferred: [[UInt8]] = Array(repeating: [], count: 8)
    private var deferredDue: [Int] = Array(repeating: -1, count: 8)
    private var deferredActive = 0

    init(options: Options, file: UnsafeMutablePointer<FILE>) {
        // Secondary findings (sends after a 410, 413 answers, reminders after a delete)
        // come on top of the primary ones; 0.82 brings the total near the asked fraction.
        rate = options.anomalies * 0.82
        target = options.events
        let runHash = options.runHash
        rng = Xoshiro256(seed: runHash)
        out = ByteSink(file: file)
        tag = options.runTag
        tokenKey = mix64(runHash ^ 0x6465_7669_6365_7321)
        uuidKey = mix64(runHash ^ 0x6E6F_7469_6669_6361)
        androidShare = options.androidShare
        platformKey = mix64(runHash ^ 0x706C_6174_666F_726D)
        senderHash = mix64(0x686F_6E65_7964_7565) >> 32
        fragmentStride = options.androidShare > 0 ? 256 : 128
        lastAt = options.start - 1
        let taskCount = options.taskCount
        let year = 365.0 * 86_400_000
        stepGapMean = min(14.0 * 3_600_000, max(60_000, 4.0 * Double(taskCount) * year / Double(max(1, target))))
        queue = PendingQueue(capacity: taskCount + 1024, origin: options.start)

        for name in Vocabulary.firstNames {
            firstNames.append(pool.add(name))
            loginNames.append(pool.add(name.lowercased()))
        }
        for (name, rename) in Vocabulary.tasks {
            taskNames.append(pool.add(name))
            taskRenames.append(pool.add(rename))
        }
        for place in Vocabulary.places {
            for kind in Vocabulary.homeKinds {
                homeNames.append(pool.add(place + " " + kind))
            }
        }
        for sentence in Vocabulary.noteSentences {
            notes.append(pool.add(sentence))
        }
        text = pool.base
        let fragmentBytes = options.userCount * Self.maxDevices * fragmentStride
        fragments = calloc(max(1, fragmentBytes), 1)!.bindMemory(to: UInt8.self, capacity: max(1, fragmentBytes))

        buildPeople(count: options.userCount)
        var initial: [TaskSlot] = []
        initial.reserveCapacity(taskCount)
        for _ in 0..<taskCount { initial.append(newTask(at: options.start)) }
        tasks = Table(initial)
        for slot in 0..<taskCount {
            let first = options.start + rng.below(Int(stepGapMean * 1.2))
            schedule(Pending(time: first, taskId: tasks[slot].id, slot: Int32(slot), kind: .step))
        }
    }

    private mutating func buildPeople(count: Int) {
        var people: [UserRecord] = []
        people.reserveCapacity(count)
        for _ in 0..<count {
            let roll = rng.below(100)
            let devices: UInt8 = roll < 70 ? 1 : roll < 95 ? 2 : 3
            people.append(
                UserRecord(
                    name: Int16(rng.below(firstNames.count)), devices: devices, premium: !rng.chance(0.2)))
        }
        users = Table(people)
        deviceGeneration = Table(repeating: 0, count: count * Self.maxDevices)
        deviceDead = Table(repeating: -1, count: count * Self.maxDevices)
        var homes: [Residence] = []
        // Households of 1-3 consecutive users, each with one or two homes.
        var first = 0
        while first < count {
            let roll = rng.below(100)
            let size = min(count - first, roll < 50 ? 1 : roll < 90 ? 2 : 3)
            let owned = rng.chance(0.35) ? 2 : 1
            for _ in 0..<owned {
                homes.append(
                    Residence(firstUser: Int32(first), members: UInt8(size), name: Int32(rng.below(homeNames.count))))
            }
            // A household is on one platform, drawn from hashes rather than the PRNG so that
            // an iOS-only stream is the same as before there were Android users.
            if androidShare > 0, unitHash(platformKey ^ UInt64(first)) < androidShare {
                for user in first..<first + size {
                    if unitHash(platformKey ^ 0x7477_6F21 ^ UInt64(user) << 32) < Self.twoPlatformShare {
                        users[user].devices = 2
                        users[user].android = 0b10
                    } else {
                        users[user].android = 0b111
                    }
                }
            }
            first += size
        }
        residences = Table(homes)
    }

    private mutating func newTask(at time: Int) -> TaskSlot {
        let id = nextTaskId
        nextTaskId += 1
        let today = CivilCalendar.day(ofMilliseconds: time)
        let intervals: [Int16] = [7, 7, 14, 30, 30, 90, 365]
        return TaskSlot(
            id: id,
            due: Int32(today + rng.between(0, 6)),
            residence: Int32(rng.below(residences.count)),
            name: Int16(rng.below(taskNames.count)),
            interval: rng.chance(0.4) ? intervals[rng.below(intervals.count)] : 0,
            events: 0,
            budget: Int16(rng.between(10, 20)),
            state: .active,
            renamed: false,
            announced: false)
    }

    private mutating func schedule(_ item: Pending) {
        queue.push(item)
    }

    // MARK: - The loop

    mutating func run() -> Bool {
        while emitted < target, let item = queue.pop() {
            switch item.kind {
            case .step: step(item)
            case .delivery: deliver(item)
            case .response: respond(item)
            case .stateNotice: announce(item)
            }
        }
        for index in deferred.indices where deferredDue[index] >= 0 {
            release(index)
        }
        out.flush()
        return !out.failed
    }

    /// The event time: never before the previous one, so the file is in time order except
    /// for the lines deliberately written out of order.
    @inline(__always)
    private mutating func stamp(_ time: Int) -> Int {
        let at = max(time, lastAt + 1)
        lastAt = at
        return at
    }

    @inline(__always)
    private func isLive(_ item: Pending) -> Bool {
        tasks[Int(item.slot)].id == item.taskId
    }

    private mutating func countEvent(slot: Int32, taskId: Int) {
        if tasks[Int(slot)].id == taskId { tasks[Int(slot)].events &+= 1 }
    }

    // MARK: - Task steps

    private mutating func step(_ item: Pending) {
        let slot = Int(item.slot)
        let now = item.time
        let task = tasks[slot]
        if task.state == .deleted {
            // notification_after_delete: the backend forgot to stop the reminders.
            if rate > 0, rng.chance(min(1, rate * 8)) { sendToMembers(slot: slot, time: now, actor: -1) }
            renew(slot: slot, time: now)
            return
        }
        if task.state == .completed || task.events >= task.budget {
            renew(slot: slot, time: now)
            return
        }
        if !task.announced {
            sendToMembers(slot: slot, time: now, actor: -1)
            tasks[slot].announced = true
        } else {
            switch task.state {
            case .active:
                if rng.chance(0.55) {
                    sendToMembers(slot: slot, time: now, actor: -1)
                } else {
                    inApp(slot: slot, time: now)
                }
            case .inProgress:
                if rng.chance(0.45) {
                    sendToMembers(slot: slot, time: now, actor: -1)
                } else {
                    inApp(slot: slot, time: now)
                }
            case .cancelled:
                if !rng.chance(0.15) { inApp(slot: slot, time: now) }
            case .completed, .deleted:
                break
            }
        }
        let gap = 300_000 + rng.exponential(mean: stepGapMean)
        schedule(Pending(time: now + gap, taskId: task.id, slot: item.slot, kind: .step))
    }

    private mutating func renew(slot: Int, time: Int) {
        tasks[slot] = newTask(at: time)
        let first = time + rng.between(60_000, 6 * 3_600_000)
        schedule(Pending(time: first, taskId: tasks[slot].id, slot: Int32(slot), kind: .step))
    }

    /// An action taken in the app (no notification), by one of the residence's members.
    private mutating func inApp(slot: Int, time: Int) {
        guard emitted < target else { return }
        let task = tasks[slot]
        let home = residences[Int(task.residence)]
        let user = Int(home.firstUser) + rng.below(Int(home.members))
        let device = rng.below(Int(users[user].devices))
        var action: ActionKind
        if rate > 0, rng.chance(rate) {
            // invalid_transition: the server accepted what it should have refused.
            var choices: [ActionKind] = []
            for candidate in ActionKind.changing where !candidate.isValid(from: task.state) {
                choices.append(candidate)
            }
            action = choices[rng.below(choices.count)]
            perform(
                action, slot: slot, taskId: task.id, user: user, device: device, time: time, notification: nil,
                forceAccepted: true)
            return
        }
        let roll = rng.below(100)
        switch task.state {
        case .active:
            action = roll < 25 ? .markInProgress : roll < 60 ? .complete : roll < 80 ? .edit : .cancel
        case .inProgress:
            action = roll < 60 ? .complete : roll < 75 ? .edit : .cancel
        default:
            action = roll < 45 ? .uncancel : .delete
        }
        perform(
            action, slot: slot, taskId: task.id, user: user, device: device, time: time, notification: nil,
            forceAccepted: false)
    }

    // MARK: - Notifications

    /// Sends the task's current notification to every device of every member.
    private mutating func sendToMembers(slot: Int, time: Int, actor: Int) {
        let home = residences[Int(tasks[slot].residence)]
        var t = time
        for member in 0..<Int(home.members) {
            let user = Int(home.firstUser) + member
            let devices = Int(users[user].devices)
            let responder = rng.chance(Self.responseShare) ? rng.below(devices) : -1
            for device in 0..<devices {
                guard emitted < target else { return }
                t += rng.between(3, 400)
                notify(slot: slot, user: user, device: device, time: t, actor: actor, respond: device == responder)
            }
        }
    }

    private mutating func newUUID() -> (UInt64, UInt64) {
        uuidCount += 1
        let high = (rng.next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000
        // The low half is a bijection of a counter, so ids are unique by construction.
        let mask: UInt64 = (1 << 62) - 1
        var x = (uuidCount &+ uuidKey) & mask
        x = (x &* 0x9E37_79B9_7F4A_7C15) & mask
        x ^= x >> 29
        x = (x &* 0xBF58_476D_1CE4_E5B9) & mask
        x ^= x >> 32
        return (high, x | 0x8000_0000_0000_0000)
    }

    /// Whether the user's `device` is an Android device (an FCM token) rather than an iPhone.
    @inline(__always)
    private func isAndroid(user: Int, device: Int) -> Bool {
        users[user].android & (1 << device) != 0
    }

    private mutating func notify(slot: Int, user: Int, device: Int, time: Int, actor: Int, respond: Bool) {
        let deviceIndex = user * Self.maxDevices + device
        if deviceDead[deviceIndex] >= 0 {
            // Sends after a 410 or an UNREGISTERED (sent_after_unregistered), then the app
            // re-registers.
            if deviceDead[deviceIndex] == 0 {
                deviceGeneration[deviceIndex] &+= 1
                deviceDead[deviceIndex] = -1
            } else {
                deviceDead[deviceIndex] -= 1
            }
        }
        let generation = deviceGeneration[deviceIndex]
        let task = tasks[slot]
        let at = stamp(time)
        let today = CivilCalendar.day(ofMilliseconds: at)

        let kind: NotificationKind
        switch task.state {
        case .active, .deleted:
            kind = !task.announced ? .assigned : today > Int(task.due) ? .overdue : .dueSoon
        case .inProgress: kind = .inProgress
        case .completed: kind = .completed
        case .cancelled: kind = .cancelled
        }
        let android = isAndroid(user: user, device: device)
        let premium = users[user].premium
        var category: Category = premium ? kind.premiumCategory : .generic
        var buttons = category
        var premiumFlag = premium
        var threadVariant: UInt8 = 0
        var oversized = false
        var flaw = FCMFlaw.none
        if rate > 0, task.state != .deleted, rng.chance(rate) {
            switch rng.below(android ? 8 : 5) {
            case 0:  // category_state_mismatch
                let right = kind.premiumCategory
                let others: [Category] = [.actionable, .inProgress, .cancelled, .completed].filter { $0 != right }
                category = others[rng.below(others.count)]
                buttons = category
                premiumFlag = true
            case 1:  // buttons_category_mismatch
                let offered = android ? category.androidOffered : category.offered
                let others: [Category] = [.actionable, .inProgress, .cancelled, .completed].filter {
                    (android ? $0.androidOffered : $0.offered) != offered
                }
                buttons = others[rng.below(others.count)]
            case 2:  // premium_mismatch
                if rng.chance(0.5) {
                    category = kind.premiumCategory
                    buttons = category
                    premiumFlag = false
                } else {
                    category = .generic
                    buttons = .generic
                    premiumFlag = true
                }
            case 3:  // thread_id_mismatch
                threadVariant = UInt8(rng.between(1, 3))
            case 4:  // payload_too_large
                oversized = true
            case 5 where category == .actionable:  // too_many_actions (Android only, as below)
                flaw = .tooManyActions
            case 6 where category.androidOffered != 0:  // fcm_notification_message
                flaw = .notificationMessage
            default:  // fcm_invalid_data
                flaw = FCMFlaw(rawValue: UInt8(rng.between(3, 7)))!
            }
        }
        let (high, low) = newUUID()
        // A send the push service refuses: APNs answers 413, FCM 400.
        let refused = oversized || flaw.isRefused

        // The push service's answer: usually about a second later, now and then logged
        // before the send.
        if refused ? rng.chance(0.9) : rng.chance(Self.deliveryShare) {
            let deliveryAt = at + rng.between(250, 1900)
            if !refused, rng.chance(Self.earlyDeliveryShare), emitted + 1 < target {
                writeDelivery(
                    at: deliveryAt, user: user, device: device, generation: generation, high: high, low: low,
                    status: 200, reason: nil)
                countEvent(slot: Int32(slot), taskId: task.id)
            } else {
                schedule(
                    Pending(
                        time: deliveryAt, taskId: task.id, high: high, low: low, slot: Int32(slot),
                        user: Int32(user), generation: generation, kind: .delivery, device: UInt8(device),
                        flag: refused ? 1 : 0))
            }
        }

        begin()
        out.raw(#"{"type":"notification","id":""#)
        out.uuid(high, low)
        out.raw(#"","at":""#)
        out.timestamp(at)
        writeUserAndDevice(user: user, device: device, generation: generation)
        let message = Message(
            kind: kind, category: category, buttons: buttons, premium: premiumFlag, threadVariant: threadVariant,
            oversized: oversized, flaw: flaw, user: user, actor: actor, today: today,
            name: task.renamed ? taskRenames[Int(task.name)] : taskNames[Int(task.name)],
            home: homeNames[Int(residences[Int(task.residence)].name)])
        if android {
            writeFCMMessage(message, task: task)
        } else {
            writeAPNsPayload(message, task: task)
        }
        finish(deferrable: false)
        tasks[slot].events &+= 1

        // The buttons it offers: on iOS the category's; on Android the first three of
        // button_types (though a notification message shows none of them).
        let shown: UInt8
        if !android {
            shown = category.offered
        } else if flaw == .tooManyActions {
            shown = Category.iosActionableShownOnAndroid
        } else {
            shown = buttons.androidOffered
        }
        // A message FCM refused never reached the device (iOS keeps its old behaviour).
        if respond, !(android && refused) {
            let delay = 20_000 + rng.exponential(mean: 2 * 3_600_000)
            schedule(
                Pending(
                    time: at + delay, taskId: task.id, high: high, low: low, slot: Int32(slot),
                    user: Int32(user), generation: generation, kind: .response, device: UInt8(device),
                    detail: shown, flag: threadVariant, buttonsHidden: flaw == .notificationMessage))
        }
    }

    /// What a notification says and how it breaks the rules: the part both platforms share.
    private struct Message {
        var kind: NotificationKind
        var category: Category
        var buttons: Category
        var premium: Bool
        var threadVariant: UInt8
        var oversized: Bool
        var flaw: FCMFlaw
        var user: Int
        var actor: Int
        var today: Int
        var name: TextPool.Ref
        var home: TextPool.Ref
    }

    /// `,"topic":…,"payload":{"aps":…,…custom keys}}`: the APNs request as sent.
    @inline(__always)
    private mutating func writeAPNsPayload(_ message: Message, task: TaskSlot) {
        out.raw(
            #"""
            ,"topic":"com.tt.honeyDue.honeyDueDev","push_type":"alert","priority":10,\#
            "payload":{"aps":{"alert":{"title":"
            """#
        )
        writeAlert(message, task: task)
        out.raw(#""},"sound":"default","badge":"#)
        out.int(rng.below(10) < 8 ? 1 : rng.between(2, 5))
        out.raw(#","category":""#)
        out.raw(message.category.name)
        out.raw(#"","mutable-content":1,"thread-id":""#)
        writeThread(variant: message.threadVariant, taskId: task.id)
        out.raw(#""},"task_id":"#)
        out.int(task.id)
        out.raw(#","task_name":""#)
        out.text(message.name, in: text)
        out.raw(#"","residence_id":"#)
        out.int(Int(task.residence) + 10)
        out.raw(#","residence_name":""#)
        out.text(message.home, in: text)
        out.raw(#"","due_date":""#)
        out.isoDate(Int(task.due))
        if message.oversized { writeNotes(length: rng.between(3600, 5600)) }
        out.raw(#"","notification_type":""#)
        writeTypeName(message)
        out.raw(#"","button_types":"#)
        out.raw(message.buttons.buttonsJSON)
        out.raw(message.premium ? #","is_premium":true}}"# : #","is_premium":false}}"#)
    }

    /// `,"platform":"android",…,"payload":{"token":…,"data":{…},"android":{…}}}`: the FCM
    /// HTTP v1 message as sent, a data-only message whose values are all strings (unless
    /// `flaw` says otherwise). Expects the device token to have just been written.
    private mutating func writeFCMMessage(_ message: Message, task: TaskSlot) {
        let token = out.base + out.count - 1 - Self.fcmTokenLength
        out.raw(#","platform":"android","project":"honeydue-prod","payload":{"token":""#)
        out.bytes(token, Self.fcmTokenLength)
        out.byte(34)
        let flaw = message.flaw
        if flaw == .notificationMessage {
            out.raw(#","notification":{"title":""#)
            writeTitle(message, task: task)
            out.raw(#"","body":""#)
            writeBody(message, task: task)
            out.raw(#""}"#)
        }
        if flaw == .integerTaskId {
            out.raw(#","data":{"task_id":"#)
            out.int(task.id)
            out.raw(#","task_name":""#)
        } else {
            out.raw(#","data":{"task_id":""#)
            out.int(task.id)
            out.raw(#"","task_name":""#)
        }
        out.text(message.name, in: text)
        out.raw(#"","residence_id":""#)
        out.int(Int(task.residence) + 10)
        out.raw(#"","residence_name":""#)
        out.text(message.home, in: text)
        out.raw(#"","due_date":""#)
        out.isoDate(Int(task.due))
        // FCM counts the data's keys and values, not the JSON around them.
        if message.oversized { writeNotes(length: rng.between(4000, 5800)) }
        out.raw(#"","notification_type":""#)
        writeTypeName(message)
        out.raw(#"","category":""#)
        out.raw(message.category.name)
        out.raw(#"","thread_id":""#)
        writeThread(variant: message.threadVariant, taskId: task.id)
        out.raw(#"","title":""#)
        writeAlert(message, task: task)
        if flaw == .booleanPremium {
            out.raw(message.premium ? #"","is_premium":true"# : #"","is_premium":false"#)
        } else {
            out.raw(message.premium ? #"","is_premium":"true""# : #"","is_premium":"false""#)
        }
        // The backend's two spellings of the list, in turn.
        androidNotifications &+= 1
        let commaForm = androidNotifications & 1 == 0
        let list: StaticString?
        if flaw == .tooManyActions {
            list = Category.iosActionableOnAndroid(commaForm: commaForm)
        } else if let spelled = message.buttons.androidButtons(commaForm: commaForm) {
            list = spelled
        } else {
            // No buttons: left out, unless the category has some (then it is a mismatch).
            list = message.category.androidOffered == 0 ? nil : "[]"
        }
        if let list {
            out.raw(#","button_types":""#)
            out.raw(list)
            out.byte(34)
        }
        switch flaw {
        case .fromKey: out.raw(#","from":"honeydue-backend""#)
        case .googleKey: out.raw(#","google.c.a.c_l":"task_reminder""#)
        case .collapseKey:
            out.raw(#","collapse_key":"task-"#)
            out.int(task.id)
            out.byte(34)
        default: break
        }
        out.raw(#"},"android":{"priority":"HIGH","ttl":"86400s","restricted_package_name":"com.tt.honeydue"}}}"#)
    }

    @inline(__always)
    private mutating func writeTypeName(_ message: Message) {
        if message.category == .generic { out.raw("task_generic") } else { out.raw(message.kind.typeName) }
    }

    /// `TITLE","subtitle":"SUBTITLE","body":"BODY`: the alert's text, as the app words it.
    @inline(__always)
    private mutating func writeAlert(_ message: Message, task: TaskSlot) {
        writeTitle(message, task: task)
        out.raw(#"","subtitle":""#)
        if message.category == .generic {
            out.raw("honeyDue")
        } else {
            out.text(message.home, in: text)
        }
        out.raw(#"","body":""#)
        writeBody(message, task: task)
    }

    @inline(__always)
    private mutating func writeTitle(_ message: Message, task: TaskSlot) {
        if message.category == .generic {
            out.raw("Task reminder")
            return
        }
        switch message.kind {
        case .assigned: out.raw("New task: ")
        case .dueSoon: out.raw("Due soon: ")
        case .overdue: out.raw("Overdue: ")
        case .inProgress: out.raw("In progress: ")
        case .completed: out.raw("Completed: ")
        case .cancelled: out.raw("Cancelled: ")
        }
        out.text(message.name, in: text)
    }

    @inline(__always)
    private mutating func writeBody(_ message: Message, task: TaskSlot) {
        let name = message.name
        let due = Int(task.due)
        let today = message.today
        if message.category == .generic {
            switch message.kind {
            case .assigned: out.raw("You have a new task.")
            case .dueSoon: out.raw(today == due ? "You have a task due today." : "You have a task due soon.")
            case .overdue: out.raw("You have an overdue task.")
            default: out.raw("A task was updated.")
            }
            out.raw(" Open honeyDue to see the details.")
            return
        }
        let actor = message.actor
        let user = message.user
        let who = actor >= 0 ? firstNames[Int(users[actor].name)] : firstNames[Int(users[user].name)]
        switch message.kind {
        case .assigned:
            out.text(firstNames[Int(users[user].name)], in: text)
            out.raw(", this task was added to ")
            out.text(message.home, in: text)
            out.raw(", due ")
            out.displayDate(due)
            out.byte(46)
        case .dueSoon:
            out.text(name, in: text)
            if today == due {
                out.raw(" is due today")
            } else {
                out.raw(" is due ")
                out.displayDate(due)
            }
            out.raw(". Mark it done, start it, or reschedule.")
        case .overdue:
            out.text(name, in: text)
            out.raw(" was due ")
            out.displayDate(due)
            out.raw(" and is ")
            out.int(today - due)
            out.raw(today - due == 1 ? " day overdue." : " days overdue.")
        case .inProgress:
            if actor >= 0 {
                out.text(who, in: text)
                out.raw(" started this task.")
            } else {
                out.text(name, in: text)
                out.raw(" is underway.")
            }
            out.raw(" Mark it complete when it's done.")
        case .completed:
            out.text(who, in: text)
            out.raw(" marked this task complete on ")
            out.displayDate(today)
            out.byte(46)
        case .cancelled:
            out.text(who, in: text)
            out.raw(" cancelled this task. You can restore it or delete it.")
        }
    }

    /// `","task_notes":"…`: a custom key of about `length` bytes, for `payload_too_large`.
    private mutating func writeNotes(length: Int) {
        out.raw(#"","task_notes":""#)
        let goal = out.count + length
        var sentence = rng.below(notes.count)
        while out.count < goal {
            out.text(notes[sentence], in: text)
            sentence = (sentence + 1) % notes.count
        }
    }

    private mutating func writeThread(variant: UInt8, taskId: Int) {
        switch variant {
        case 0:
            out.raw("task-")
            out.int(taskId)
        case 1:
            out.raw("task_")
            out.int(taskId)
        case 2:
            out.raw("task-")
            out.int(taskId)
            out.raw("-reminders")
        default:
            out.raw("Task-")
            out.int(taskId)
        }
    }

    /// Writes `","user":"…","device":"…"` (the token depends on the device's generation,
    /// which changes when the app re-registers after a 410). Cached per device: two bytes
    /// of generation + 1, a length byte, then the bytes.
    private mutating func writeUserAndDevice(user: Int, device: Int, generation: UInt16) {
        let entry = fragments + (user * Self.maxDevices + device) * fragmentStride
        let stored = UInt16(entry[0]) | UInt16(entry[1]) << 8
        if stored == generation &+ 1 {
            out.bytes(entry + 3, Int(entry[2]))
            return
        }
        let start = out.count
        out.raw(#"","user":"u_"#)
        out.text(loginNames[Int(users[user].name)], in: text)
        out.byte(95)
        out.int(user + 1)
        out.raw(#"","device":""#)
        var h = mix64(tokenKey ^ (UInt64(user) << 24 | UInt64(device) << 16 | UInt64(generation)))
        if isAndroid(user: user, device: device) {
            writeFCMToken(seed: h)
        } else {
            out.hex(h, digits: 16)
            for _ in 0..<3 {
                h = mix64(h ^ 0xA076_1D64_78BD_642F)
                out.hex(h, digits: 16)
            }
        }
        out.byte(34)
        let length = out.count - start
        if length <= fragmentStride - 3, generation != UInt16.max {
            entry[0] = UInt8(truncatingIfNeeded: generation &+ 1)
            entry[1] = UInt8(truncatingIfNeeded: (generation &+ 1) >> 8)
            entry[2] = UInt8(length)
            (entry + 3).update(from: out.base + start, count: length)
        }
    }

    /// An FCM registration token: an instance id, `:APA91b`, then the registration
    /// proper, all URL-safe base64 (`fcmTokenLength` bytes).
    private mutating func writeFCMToken(seed: UInt64) {
        var h = mix64(seed ^ 0x4643_4D21_746F_6B65)
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        alphabet.withUTF8Buffer { letters in
            for index in 0..<(Self.fcmTokenLength - 7) {
                if index == 22 { out.raw(":APA91b") }
                let sixBits = index % 10
                if sixBits == 0, index > 0 { h = mix64(h ^ 0xA076_1D64_78BD_642F) }
                out.byte(letters[Int((h >> (6 * UInt64(sixBits))) & 63)])
            }
        }
    }

    // MARK: - Deliveries

    /// The answer of APNs or, for an Android device, of FCM (its `errorCode` as reason).
    private mutating func deliver(_ item: Pending) {
        let user = Int(item.user)
        let device = Int(item.device)
        let android = isAndroid(user: user, device: device)
        var status = 200
        var reason: StaticString?
        var unregistered = false
        if item.flag == 1 {
            (status, reason) = android ? (400, "INVALID_ARGUMENT") : (413, "PayloadTooLarge")
        } else if rate > 0, rng.chance(rate) {
            // delivery_failed; a dead token also sets up sent_after_unregistered.
            switch rng.below(20) {
            case 0..<5:
                (status, reason) = android ? (404, "UNREGISTERED") : (410, "Unregistered")
                unregistered = true
            case 5..<10:
                (status, reason) = android ? (400, "INVALID_ARGUMENT") : (400, "BadDeviceToken")
            case 10..<13:
                (status, reason) = android ? (429, "QUOTA_EXCEEDED") : (429, "TooManyRequests")
            case 13..<17:
                (status, reason) = android ? (500, "INTERNAL") : (500, "InternalServerError")
            default:
                (status, reason) = android ? (503, "UNAVAILABLE") : (503, "ServiceUnavailable")
            }
        }
        if unregistered {
            let index = user * Self.maxDevices + device
            if deviceGeneration[index] == item.generation, deviceDead[index] < 0 {
                deviceDead[index] = rng.chance(0.7) ? 1 : 2
            }
        }
        writeDelivery(
            at: stamp(item.time), user: user, device: device, generation: item.generation, high: item.high,
            low: item.low, status: status, reason: reason)
        countEvent(slot: item.slot, taskId: item.taskId)
    }

    private mutating func writeDelivery(
        at: Int, user: Int, device: Int, generation: UInt16, high: UInt64, low: UInt64, status: Int,
        reason: StaticString?
    ) {
        deliveryCount += 1
        begin()
        out.raw(#"{"type":"delivery","id":"d-"#)
        out.hex(UInt64(tag), digits: 8)
        out.byte(45)
        out.int(deliveryCount)
        out.raw(#"","at":""#)
        out.timestamp(at)
        writeUserAndDevice(user: user, device: device, generation: generation)
        out.raw(#","notification_id":""#)
        out.uuid(high, low)
        out.raw(#"","status":"#)
        out.int(status)
        if status == 200, isAndroid(user: user, device: device) {
            // FCM's name for the message: `0:` microseconds since the epoch, `%`, the sender.
            out.raw(#","message_id":"projects/honeydue-prod/messages/0:"#)
            out.int(at * 1000 + deliveryCount % 1000)
            out.byte(37)
            out.hex(senderHash, digits: 8)
            out.hex(senderHash, digits: 8)
            out.byte(34)
        }
        if let reason {
            out.raw(#","reason":""#)
            out.raw(reason)
            out.byte(34)
        }
        out.byte(125)
        finish(deferrable: status == 200)
    }

    // MARK: - Actions

    /// A user acting on a notification they received.
    private mutating func respond(_ item: Pending) {
        let slot = Int(item.slot)
        let live = isLive(item)
        // The buttons the notification offers, and those the user could see.
        let offered = item.detail
        let pressable = item.buttonsHidden ? 0 : offered
        let state = live ? tasks[slot].state : .completed
        var action: ActionKind = .open
        if live, rate > 0, rng.chance(rate) {
            // action_not_offered: a button the notification did not offer.
            var valid: [ActionKind] = []
            var other: [ActionKind] = []
            for candidate in ActionKind.changing where candidate.bit & offered == 0 {
                if candidate.isValid(from: state) { valid.append(candidate) } else { other.append(candidate) }
            }
            action = valid.isEmpty ? other[rng.below(other.count)] : valid[rng.below(valid.count)]
        } else {
            // Weighted choice among the buttons in sight, a tap on the body, or a dismiss.
            let weights: [Int] = [30, 10, 30, 25, 20, 6, 20, 15]  // by ActionKind raw value
            var total = 0
            for raw in 0..<8 where raw >= 6 || pressable & (1 << raw) != 0 { total += weights[raw] }
            var pick = rng.below(total)
            for raw in 0..<8 where raw >= 6 || pressable & (1 << raw) != 0 {
                if pick < weights[raw] {
                    action = ActionKind(rawValue: UInt8(raw))!
                    break
                }
                pick -= weights[raw]
            }
        }
        perform(
            action, slot: slot, taskId: item.taskId, user: Int(item.user), device: Int(item.device),
            time: item.time, notification: item, forceAccepted: false, live: live)
    }

    private enum Outcome {
        case ok, rejected, failed
    }

    /// Writes one action event and, when the server accepted it, applies it to the task.
    private mutating func perform(
        _ action: ActionKind, slot: Int, taskId: Int, user: Int, device: Int, time: Int, notification: Pending?,
        forceAccepted: Bool, live: Bool = true
    ) {
        guard emitted < target else { return }
        let task = tasks[slot]
        let state = live ? task.state : .completed
        let outcome: Outcome
        if action == .open || action == .dismiss || forceAccepted {
            outcome = .ok
        } else if !live || !action.isValid(from: state) {
            outcome = .rejected
        } else {
            outcome = rng.chance(Self.failedShare) ? .failed : .ok
        }
        let at = stamp(time)
        let today = CivilCalendar.day(ofMilliseconds: at)
        let generation = deviceGeneration[user * Self.maxDevices + device]

        // Changes carried by edits and by completing a recurring task.
        var newDue = Int(task.due)
        var rename = false
        var hasNextDue = false
        if live, action == .edit {
            rename = rng.chance(0.5)
            newDue = max(Int(task.due), today) + rng.between(1, 14)
        } else if live, action == .complete, task.interval > 0 {
            hasNextDue = true
            let interval = Int(task.interval)
            newDue = Int(task.due) + interval
            while newDue <= today { newDue += interval }
        }

        actionCount += 1
        begin()
        out.raw(#"{"type":"action","id":"a-"#)
        out.hex(UInt64(tag), digits: 8)
        out.byte(45)
        out.int(actionCount)
        out.raw(#"","at":""#)
        out.timestamp(at)
        writeUserAndDevice(user: user, device: device, generation: generation)
        out.raw(#","task_id":"#)
        out.int(taskId)
        out.raw(#","action":""#)
        out.raw(action.name)
        switch outcome {
        case .ok: out.raw(#"","outcome":"ok""#)
        case .rejected: out.raw(#"","outcome":"rejected""#)
        case .failed: out.raw(#"","outcome":"failed""#)
        }
        if let notification {
            out.raw(#","notification_id":""#)
            out.uuid(notification.high, notification.low)
            out.raw(#"","thread_id":""#)
            writeThread(variant: notification.flag, taskId: taskId)
            out.byte(34)
        }
        switch outcome {
        case .ok:
            out.raw(#","http_status":200"#)
        case .rejected:
            if live {
                out.raw(#","http_status":409,"error":""#)
                out.raw(action.refusal(in: state))
            } else {
                out.raw(#","http_status":404,"error":"Task not found"#)
            }
            out.byte(34)
        case .failed:
            if rng.chance(0.5) {
                out.raw(#","http_status":500,"error":"Internal Server Error""#)
            } else {
                out.raw(#","error":"NSURLErrorDomain -1009: The Internet connection appears to be offline.""#)
            }
        }
        if live, action == .edit {
            out.raw(#","changes":{"#)
            if rename {
                out.raw(#""task_name":""#)
                out.text(task.renamed ? taskNames[Int(task.name)] : taskRenames[Int(task.name)], in: text)
                out.raw(#"","#)
            }
            out.raw(#""due_date":""#)
            out.isoDate(newDue)
            out.raw(#""}"#)
        } else if hasNextDue {
            out.raw(#","changes":{"next_due_date":""#)
            out.isoDate(newDue)
            out.raw(#""}"#)
        }
        out.byte(125)
        finish(deferrable: action == .open || action == .dismiss)
        if live { tasks[slot].events &+= 1 }

        guard live, outcome == .ok, state != .deleted else { return }
        let next = action.target(from: state, recurring: hasNextDue)
        if action == .edit {
            if rename { tasks[slot].renamed.toggle() }
            tasks[slot].due = Int32(newDue)
        } else if hasNextDue {
            tasks[slot].due = Int32(newDue)
        }
        tasks[slot].state = next
        if next != state, next == .inProgress || next == .completed || next == .cancelled {
            schedule(
                Pending(
                    time: at + rng.between(800, 6000), taskId: taskId, slot: Int32(slot),
                    user: Int32(user), kind: .stateNotice, detail: next.rawValue))
        }
    }

    /// The backend's notice that a task changed state, unless it changed again meanwhile.
    private mutating func announce(_ item: Pending) {
        let slot = Int(item.slot)
        guard isLive(item), tasks[slot].state.rawValue == item.detail else { return }
        sendToMembers(slot: slot, time: item.time, actor: Int(item.user))
    }

    // MARK: - Lines

    @inline(__always)
    private mutating func begin() {
        lineStart = out.count
    }

    /// Ends a line. A few deliveries, opens and dismisses are held back and written a
    /// few lines later, as a log fed by several processes would have them.
    private mutating func finish(deferrable: Bool) {
        out.byte(10)
        emitted += 1
        if deferrable, deferredActive < deferred.count, rng.chance(Self.deferShare) {
            let index = deferredDue.firstIndex(of: -1)!
            deferred[index] = Array(UnsafeBufferPointer(start: out.base + lineStart, count: out.count - lineStart))
            deferredDue[index] = rng.between(1, 12)
            deferredActive += 1
            out.count = lineStart
            return
        }
        if deferredActive > 0 {
            for index in deferred.indices where deferredDue[index] >= 0 {
                deferredDue[index] -= 1
                if deferredDue[index] == 0 { release(index) }
            }
        }
        out.flushIfFull()
    }

    private mutating func release(_ index: Int) {
        deferred[index].withUnsafeBufferPointer { line in
            out.bytes(line.baseAddress!, line.count)
        }
        deferredDue[index] = -1
        deferredActive -= 1
    }
}
