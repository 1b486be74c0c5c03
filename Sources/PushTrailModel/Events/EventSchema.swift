/// The limits of an event's fields (docs/EVENTS.md), in one place: the decoder that
/// validates a line and the store's scanner that re-reads stored lines both check them
/// from here, so they cannot drift apart.
public enum EventSchema {
    /// The longest line accepted, in bytes (without its line break).
    public static let maxLineBytes = 64 * 1024
    /// `id`, and the `notification_id` of an action or delivery.
    public static let idBytes = 1...128
    public static let userBytes = 1...256
    /// `device`: a token (APNs' are 64 hex digits; FCM's are longer).
    public static let deviceBytes = 1...4096
    /// A notification's `aps.thread-id`, and an action's `thread_id`.
    public static let threadIDBytes = 1...255
    /// `topic` (`apns-topic`, the app's bundle id).
    public static let topicBytes = 1...255
    /// A delivery's `status` and an action's `http_status`.
    public static let httpStatuses: ClosedRange<Int64> = 100...599
}

/// An event as the store files it: what the lite decode (`EventDecoder.decodeForFiling`)
/// gives, having checked every rule of the line but kept only what the indexes and the
/// identity need. Display fields (texts, custom keys, changes) are not part of it, so
/// nothing can mistake one for an event whose fields are simply absent.
public struct FilingEvent: Sendable, Equatable {
    public var type: EventType
    public var id: String
    public var at: Timestamp
    public var user: String
    /// The device token, when given. Sensitive.
    public var device: String?
    /// The task the event names itself (a delivery's is its notification's).
    public var taskID: Int64?
    /// The thread the event names itself: a notification's or an action's.
    public var threadID: String?
    /// The (normalised) notification an action or delivery refers to.
    public var referencedNotificationID: String?
    /// A delivery that declares its device's token dead.
    public var declaresTokenDead: Bool

    public init(
        type: EventType, id: String, at: Timestamp, user: String, device: String?, taskID: Int64?, threadID: String?,
        referencedNotificationID: String?, declaresTokenDead: Bool
    ) {
        self.type = type
        self.id = id
        self.at = at
        self.user = user
        self.device = device
        self.taskID = taskID
        self.threadID = threadID
        self.referencedNotificationID = referencedNotificationID
        self.declaresTokenDead = declaresTokenDead
    }

    /// The key the event's id is unique under (see `Event.identityKey`).
    public var identityKey: [UInt8] {
        type == .notification ? EventID.normalizedNotificationID(id) : Array(id.utf8)
    }
}

extension Event {
    /// What the store files this event under.
    public var filing: FilingEvent {
        // One look at the body: each accessor switches over it and copies its payload.
        switch body {
        case .notification(let n):
            FilingEvent(
                type: .notification, id: id, at: at, user: user, device: device, taskID: n.taskID, threadID: n.threadID,
                referencedNotificationID: nil, declaresTokenDead: false)
        case .action(let a):
            FilingEvent(
                type: .action, id: id, at: at, user: user, device: device, taskID: a.taskID, threadID: a.threadID,
                referencedNotificationID: a.notificationID, declaresTokenDead: false)
        case .delivery(let d):
            FilingEvent(
                type: .delivery, id: id, at: at, user: user, device: device, taskID: nil, threadID: nil,
                referencedNotificationID: d.notificationID, declaresTokenDead: d.declaresTokenDead)
        }
    }
}
