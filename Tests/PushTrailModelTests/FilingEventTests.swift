import TestSupport
import Testing

@testable import PushTrailModel

@Suite("The lite decode: what the store files an event under")
struct FilingEventTests {
    static let lines: [EventLine] = [
        Fixture.notification, Fixture.notification.with("device", #""tok-1""#), Fixture.action,
        Fixture.action.with("notification_id", jsonString(Fixture.notificationID)).with("thread_id", #""task-7""#),
        Fixture.delivery, Fixture.delivery.with("status", "410").with("device", #""tok-2""#),
    ]

    @Test("it gives what the full decode's filing gives, for every type")
    func sameAsFull() throws {
        var decoder = EventDecoder()
        for line in Self.lines {
            let lite = try decoder.decodeForFiling(line.bytes)
            let full = try decoder.decode(line.bytes)
            #expect(lite == full.filing, "\(line)")
            #expect(lite.identityKey == full.identityKey)
        }
    }

    @Test("a 410 declares its token dead and names its notification, lowercased; a 200 does not")
    func deadToken() throws {
        var decoder = EventDecoder()
        let gone = try decoder.decodeForFiling(Fixture.delivery.with("status", "410").bytes)
        #expect(gone.declaresTokenDead)
        #expect(gone.referencedNotificationID == Fixture.notificationID.lowercased())
        #expect(!(try decoder.decodeForFiling(Fixture.delivery.bytes)).declaresTokenDead)
    }

    @Test("it refuses every line the full decode refuses, with the same reason")
    func sameRules() {
        var decoder = EventDecoder()
        let bad: [EventLine] = [
            Fixture.notification.with("id", #""""#), Fixture.notification.without("payload"),
            Fixture.action.with("outcome", #""maybe""#), Fixture.delivery.with("status", "99"),
            Fixture.notification.with(
                "user", jsonString(String(repeating: "u", count: EventSchema.userBytes.upperBound + 1))),
            Fixture.notification.with("payload", #"{"aps":{},"task_id":"x"}"#),
        ]
        for line in bad {
            var liteReason: String?
            var fullReason: String?
            do { _ = try decoder.decodeForFiling(line.bytes) } catch { liteReason = error.reason }
            do { _ = try decoder.decode(line.bytes) } catch { fullReason = error.reason }
            #expect(liteReason != nil, "\(line)")
            #expect(liteReason == fullReason, "\(line)")
        }
    }
}
