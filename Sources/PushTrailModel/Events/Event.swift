/// The three kinds of event the log records (docs/EVENTS.md).
public enum EventType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case notification = 1
    case action = 2
    case delivery = 3

    public var description: String {
        switch self {
        case .notification: "notification"
        case .action: "action"
        case .delivery: "delivery"
        }
    }

    /// The plural, for counts in prose.
    public var plural: String {
        switch self {
        case .notification: "notifications"
        case .action: "actions"
        case .delivery: "deliveries"
        }
    }

    public init?(name: String) {
        guard let type = EventType.allCases.first(where: { $0.description == name }) else { return nil }
        self = type
    }

    /// The type a name's UTF-8 bytes spell, compared where they lie.
    @inlinable package init?(utf8 b: UnsafeRawBufferPointer) {
        switch b.count {
        case 12
        where JSONText.memcmpEqual(b.baseAddress!, UnsafeRawPointer(("notification" as StaticString).utf8Start), 12):
            self = .notification
        case 6 where JSONText.memcmpEqual(b.baseAddress!, UnsafeRawPointer(("action" as StaticString).utf8Start), 6):
            self = .action
        case 8 where JSONText.memcmpEqual(b.baseAddress!, UnsafeRawPointer(("delivery" as StaticString).utf8Start), 8):
            self = .delivery
        default: return nil
        }
    }
}

/// What a user (or the app on their behalf) did with a notification or a task.
public enum ActionKind: String, Sendable, CaseIterable {
    case complete, cancel, uncancel, delete, edit, open, dismiss
    case markInProgress = "mark_in_progress"
}

/// What the server answered to an action.
public enum Outcome: String, Sendable, CaseIterable {
    /// The server applied it.
    case ok
    /// The server refused it (e.g. 409).
    case rejected
    /// An error; not applied.
    case failed
}

/// A JSON value kept as its text, for fields whose type the payload decides
/// (`residence_id` may be a number or a string; `changes` may hold anything).
public enum FieldValue: Equatable, Hashable, Sendable, CustomStringConvertible {
    case string(String)
    /// Any other JSON value, as its JSON text.
    case json(String)

    /// The value for a person to read: strings without quotes.
    public var description: String {
        switch self {
        case .string(let s): s
        case .json(let j): j
        }
    }
}

/// The push service a notification went through, and so the app that showed it.
public enum Platform: String, Sendable, CaseIterable, CustomStringConvertible {
    /// APNs, to the iOS app.
    case ios
    /// FCM, to the Android app.
    case android

    public var description: String { rawValue }

    /// The push service's name, for messages.
    public var service: String { self == .ios ? "APNs" : "FCM" }

    /// The push service's name as a possessive: "APNs'", "FCM's".
    public var servicePossessive: String { self == .ios ? "APNs'" : "FCM's" }
}

/// A payload the backend emitted, with the parts pushtrail reads from it.
public struct PushNotification: Sendable, Equatable {
    public var platform = Platform.ios
    /// iOS `aps.thread-id`; Android `thread_id` of the data map.
    public var threadID: String?
    public var category: String?
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var taskID: Int64?
    public var taskName: String?
    public var residenceID: FieldValue?
    public var residenceName: String?
    public var dueDate: FieldValue?
    public var notificationType: String?
    /// `button_types`, when the payload has them.
    public var buttons: [String]?
    /// `is_premium`; absent counts as premium.
    public var isPremium: Bool?
    /// `apns-topic`: the app's bundle id.
    public var topic: String?
    /// The payload's size as its push service counts it: for APNs the ingested bytes
    /// less whitespace outside strings; for FCM the bytes of the data keys and values
    /// and of the notification blocks' title and body.
    public var payloadSize: Int
    /// Android: the notification blocks the message has (`payload.notification`,
    /// `payload.android.notification`), which the system shows itself while the app is
    /// in the background, without its buttons.
    public var notificationBlocks: [String] = []
    /// Android: data entries FCM refuses or drops.
    public var dataProblems: [DataProblem] = []

    /// The largest payload APNs and FCM accept, in bytes as they count them (`payloadSize`).
    public static let payloadLimit = 4096
    /// The most action buttons Android shows on a notification.
    public static let androidButtonLimit = 3

    /// The buttons the user saw: on iOS the category's set (the app registers the
    /// buttons per category); on Android `button_types` in order, or the category's
    /// set without them, at most three.
    public var shownButtons: [String] {
        switch platform {
        case .ios: return Category.buttons(of: category).map(\.rawValue)
        case .android:
            let listed = buttons ?? Category.buttons(of: category, on: .android).map(\.rawValue)
            return Array(listed.prefix(PushNotification.androidButtonLimit))
        }
    }

    /// Android: the `button_types` past the three Android shows, which the user never
    /// saw (none on iOS, where the category decides the buttons).
    public var hiddenButtons: [String] {
        guard platform == .android, let listed = buttons else { return [] }
        return Array(listed.dropFirst(PushNotification.androidButtonLimit))
    }
}

/// A data entry of an Android message that FCM will not pass on as sent.
public struct DataProblem: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The value is not a string (its JSON kind): FCM refuses the send.
        case notString(String)
        /// A key FCM reserves: it refuses the send or drops the key.
        case reservedKey
    }

    /// The data map's path (`payload.data` or `payload.android.data`).
    public var map: String
    public var key: String
    public var kind: Kind

    public init(map: String, key: String, kind: Kind) {
        self.map = map
        self.key = key
        self.kind = kind
    }
}

/// A response to an action button (or an in-app action) and the server's answer.
public struct ActionResponse: Sendable, Equatable {
    public var taskID: Int64
    public var action: ActionKind
    public var outcome: Outcome
    /// The `apns-id` of the notification whose button was pressed (lowercased).
    public var notificationID: String?
    public var threadID: String?
    public var httpStatus: Int?
    public var error: String?
    /// `changes`, in the order given.
    public var changes: [(key: String, value: FieldValue)]

    public static func == (a: ActionResponse, b: ActionResponse) -> Bool {
        a.taskID == b.taskID && a.action == b.action && a.outcome == b.outcome
            && a.notificationID == b.notificationID && a.threadID == b.threadID
            && a.httpStatus == b.httpStatus && a.error == b.error
            && a.changes.map(\.key) == b.changes.map(\.key) && a.changes.map(\.value) == b.changes.map(\.value)
    }
}

/// The push service's answer to one send (APNs or FCM).
public struct Delivery: Sendable, Equatable {
    /// The id of the notification it answers (lowercased).
    public var notificationID: String
    public var status: Int
    /// APNs' `reason` or FCM's `errorCode`.
    public var reason: String?
    /// FCM's `name` for an accepted send.
    public var messageID: String?

    public init(notificationID: String, status: Int, reason: String?, messageID: String? = nil) {
        self.notificationID = notificationID
        self.status = status
        self.reason = reason
        self.messageID = messageID
    }

    /// Whether the answer declares the device token dead, so that later sends to that
    /// device are findings: APNs' 410 (Unregistered, ExpiredToken) or FCM's 404
    /// `UNREGISTERED`. (FCM's other 404s, and its 400 `INVALID_ARGUMENT`, whose detail
    /// alone says whether the token is at fault, do not.)
    public var declaresTokenDead: Bool { Delivery.declaresTokenDead(status: status, reason: reason) }

    public static func declaresTokenDead(status: Int, reason: String?) -> Bool {
        status == 410 || (status == 404 && reason == Delivery.fcmUnregistered)
    }

    /// FCM's error code for a token that is no longer registered.
    public static let fcmUnregistered = "UNREGISTERED"

    /// The push service that answered, as far as the answer itself says: FCM for its
    /// error codes (upper case with underscores) and message names, else APNs.
    public var impliedPlatform: Platform {
        if messageID != nil { return .android }
        guard let reason, !reason.isEmpty else { return .ios }
        return reason.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x5F } ? .android : .ios
    }
}

/// One event of the log, decoded and validated.
public struct Event: Sendable, Equatable {
    public enum Body: Sendable, Equatable {
        case notification(PushNotification)
        case action(ActionResponse)
        case delivery(Delivery)
    }

    /// The id as given.
    public var id: String
    public var at: Timestamp
    public var user: String
    /// The device token, when given. Sensitive: mask it in human output.
    public var device: String?
    public var body: Body

    public var type: EventType {
        switch body {
        case .notification: .notification
        case .action: .action
        case .delivery: .delivery
        }
    }

    /// The task the event is about, when it names one itself (a delivery's task is its
    /// notification's, resolved through the store).
    public var taskID: Int64? {
        switch body {
        case .notification(let n): n.taskID
        case .action(let a): a.taskID
        case .delivery: nil
        }
    }

    /// The thread the event names itself: a notification's `aps.thread-id` or an
    /// action's `thread_id`.
    public var threadID: String? {
        switch body {
        case .notification(let n): n.threadID
        case .action(let a): a.threadID
        case .delivery: nil
        }
    }

    /// The notification an action or delivery refers to.
    public var referencedNotificationID: String? {
        switch body {
        case .notification: nil
        case .action(let a): a.notificationID
        case .delivery(let d): d.notificationID
        }
    }

    public var notification: PushNotification? {
        if case .notification(let n) = body { return n }
        return nil
    }

    public var actionResponse: ActionResponse? {
        if case .action(let a) = body { return a }
        return nil
    }

    public var delivery: Delivery? {
        if case .delivery(let d) = body { return d }
        return nil
    }

    /// The key the event's id is unique under: notification ids (APNs UUIDs) compare
    /// case-insensitively, so they are lowercased.
    public var identityKey: [UInt8] {
        type == .notification ? EventID.normalizedNotificationID(id) : Array(id.utf8)
    }
}

/// Rules for event ids.
public enum EventID {
    /// A notification id as compared: ASCII-lowercased (APNs ids are UUIDs, which
    /// compare case-insensitively).
    public static func normalizedNotificationID(_ id: String) -> [UInt8] {
        var id = id
        return id.withUTF8 { utf8 in
            [UInt8](unsafeUninitializedCapacity: utf8.count) { out, count in
                for k in utf8.indices { out[k] = lowercased(utf8[k]) }
                count = utf8.count
            }
        }
    }

    /// An ASCII letter lowercased; any other byte as it is.
    @inlinable @inline(__always) package static func lowercased(_ c: UInt8) -> UInt8 { c &- 0x41 < 26 ? c | 0x20 : c }

    public static func normalizedNotificationIDString(_ id: String) -> String {
        // Most ids are already lowercase: then the string itself, not a copy.
        var id = id
        let hasUppercase = id.withUTF8 { utf8 in utf8.contains { $0 &- 0x41 < 26 } }
        guard hasUppercase else { return id }
        return String(decoding: normalizedNotificationID(id), as: UTF8.self)
    }
}
