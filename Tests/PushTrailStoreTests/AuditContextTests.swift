import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// The audit contexts answer the rules' lookups from the store; a stored event they
/// cannot read back is an error, never "not found".
@Suite("Audit contexts on a damaged store")
struct AuditContextTests {
    /// The shared timeline (a notification to `tok-1` at seq 1, an action and a delivery
    /// naming it) plus a 410 for it at seq 5; then the JSON of event `damaged` broken in
    /// place, its header and hash kept.
    func damagedStore(_ damaged: UInt64, _ body: (StoreReader) throws -> Void) throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let gone = Fixture.delivery.with("id", #""dlv-410""#).with("status", "410")
                .with("at", #""2026-11-29T11:00:00Z""#)
            #expect(try store.append([pendingEvent(gone)], recordedAt: fixedClock) == [.appended(5)])
            try store.writeTransaction { txn in
                let key = Layout.bigEndian(damaged)
                var value = try #require(try store.events.get(key, in: txn)).map { $0 }
                try #require(value[Layout.eventHeaderSize] == UInt8(ascii: "{"))
                value[Layout.eventHeaderSize] = UInt8(ascii: "x")
                _ = try store.events.put(key, value, in: txn)
            }
            try store.read(body)
        }
    }

    func expectDamaged(_ seq: UInt64, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try body() }
        guard case .damaged(let found, _)? = error else {
            Issue.record(
                "expected event seq \(seq) damaged, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(found == seq, sourceLocation: sourceLocation)
    }

    @Test("a task or thread report's context throws for a damaged notification it looks up")
    func indexedNotification() throws {
        try damagedStore(1) { reader in
            let context = IndexedAuditContext(reader: reader, horizon: nil)
            expectDamaged(1) { _ = try context.notification(Fixture.notificationID.lowercased()) }
        }
    }

    @Test("a task or thread report's context throws for a damaged 410 it collects for a device")
    func indexedUnregistration() throws {
        try damagedStore(5) { reader in
            let context = IndexedAuditContext(reader: reader, horizon: nil)
            let later = Position(at: try instant("2026-11-30T00:00:00Z"), seq: 9)
            expectDamaged(5) { _ = try context.unregistration(device: "tok-1", before: later) }
        }
    }

    @Test("the whole-store pass's context throws for a damaged notification, looked up or learnt from a 410")
    func streaming() throws {
        try damagedStore(1) { reader in
            let context = StreamingAuditContext(reader: reader, horizon: nil)
            expectDamaged(1) { _ = try context.notification(Fixture.notificationID.lowercased()) }
            let delivery = try #require(try reader.event(seq: 5))
            let fresh = StreamingAuditContext(reader: reader, horizon: nil)
            expectDamaged(1) { try fresh.observe(LoadedEvent(stored: delivery, event: try delivery.decode())) }
        }
    }

    @Test("the same lookups on the undamaged store find the notification and the 410")
    func intact() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            try store.read { reader in
                let context = IndexedAuditContext(reader: reader, horizon: nil)
                let facts = try context.notification(Fixture.notificationID.lowercased())
                #expect(facts?.seq == 1)
                #expect(facts?.device == "tok-1")
                #expect(
                    try StreamingAuditContext(reader: reader, horizon: nil)
                        .notification(Fixture.notificationID.lowercased())?.seq == 1)
            }
        }
    }
}
