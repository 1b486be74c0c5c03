import Foundation
import LMDBKit
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// The fixed time every test append is recorded at: tests never read the wall clock.
let recordedAt = utcSeconds(1_800_000_000, micros: 42)
let fixedClock: @Sendable () -> Timestamp = { recordedAt }

func pendingEvent(_ line: EventLine) throws -> PendingEvent {
    PendingEvent(event: try decodeEvent(line), raw: line.bytes)
}

func pendingEvent(raw text: String) throws -> PendingEvent {
    let raw = Array(text.utf8)
    return PendingEvent(event: try decodeEvent(raw), raw: raw)
}

/// Runs `body` with a new store in a temporary directory.
func withStore<R>(_ body: (Store, String) throws -> R) throws -> R {
    try withTemporaryDirectory { dir throws in
        let path = dir + "/store"
        let store = try Store(path: path, create: true)
        return try body(store, path)
    }
}

private func be64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }

/// A signed time as the store orders it: sign bit flipped, big-endian.
private func orderedBE(_ t: Timestamp) -> [UInt8] { be64(UInt64(bitPattern: t.microseconds) ^ 0x8000_0000_0000_0000) }

/// The timeline the store tests share, appended in this order (seq 1…4) with `at`
/// deliberately out of order.
enum Timeline {
    static let notification = Fixture.notification.with("device", #""tok-1""#)  // 10:00, task 7
    static let action = Fixture.action  // 09:00, task 7
        .with("at", #""2026-11-29T09:00:00Z""#)
        .with("notification_id", jsonString(Fixture.notificationID))
        .with("thread_id", #""task-7""#)
    static let delivery = Fixture.delivery.with("at", #""2026-11-29T09:30:00Z""#)
    static let otherUser = Fixture.action  // 09:00 again, task 8
        .with("id", #""act-2""#).with("at", #""2026-11-29T09:00:00Z""#)
        .with("user", #""user-2""#).with("task_id", "8")

    static let lines = [notification, action, delivery, otherUser]

    static func at(_ text: String) throws -> Timestamp { try instant("2026-11-29T\(text):00Z") }
}

/// Appends the shared timeline, one transaction per event.
func appendTimeline(_ store: Store) throws {
    for (i, line) in Timeline.lines.enumerated() {
        #expect(try store.append([pendingEvent(line)], recordedAt: fixedClock) == [.appended(UInt64(i + 1))])
    }
}

@Suite("SHA-256")
struct SHA256Tests {
    @Test("digests match the FIPS 180-2 test vectors")
    func vectors() {
        func hex(_ s: String) -> String { Array(s.utf8).withUnsafeBytes { SHA256.hex(SHA256.digest($0)) } }
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("the digest of parts is the digest of their concatenation")
    func parts() {
        let whole = Array("abc".utf8).withUnsafeBytes { SHA256.digest($0) }
        let parts = Array("a".utf8).withUnsafeBytes { a in
            Array("".utf8).withUnsafeBytes { e in Array("bc".utf8).withUnsafeBytes { bc in SHA256.digest(a, e, bc) } }
        }
        #expect(parts == whole)
    }
}

@Suite("Store")
struct StoreTests {
    @Test("a new store is empty, with the empty chain head")
    func emptyStore() throws {
        try withStore { store, _ throws in
            try store.read { reader throws in
                #expect(try reader.head() == .empty)
                #expect(try reader.head().hex == String(repeating: "0", count: 64))
                #expect(try reader.counts() == [.notification: 0, .action: 0, .delivery: 0])
                #expect(try reader.event(seq: 1) == nil)
                #expect(try reader.positions(.time, key: Layout.timeKey).isEmpty)
            }
            let report = try store.verify()
            #expect(report.ok)
            #expect(report.events == 0)
            #expect(report.head == .empty)
        }
    }

    @Test("appended events read back by seq exactly as ingested")
    func readBySeq() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            try store.read { reader throws in
                for (i, line) in Timeline.lines.enumerated() {
                    let stored = try #require(try reader.event(seq: UInt64(i + 1)))
                    let event = try decodeEvent(line)
                    #expect(stored.seq == UInt64(i + 1))
                    #expect(stored.raw == line.bytes)
                    #expect(stored.type == event.type)
                    #expect(stored.at == event.at)
                    #expect(stored.recordedAt == recordedAt)
                    #expect(stored.position == Position(at: event.at, seq: UInt64(i + 1)))
                    #expect(try stored.decode() == event)
                }
                #expect(try reader.event(seq: 0) == nil)
                #expect(try reader.event(seq: 5) == nil)
            }
        }
    }

    @Test("an event is found by its id, a notification's case-insensitively")
    func readByID() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            try store.read { reader throws in
                #expect(try reader.seq(forID: Fixture.notificationID) == 1)
                #expect(try reader.seq(forID: Fixture.notificationID.lowercased()) == 1)
                #expect(try reader.seq(forID: "0b9E5C36-3a4b-4C5D-8e6f-708192A3B4C5") == 1)
                #expect(try reader.seq(forID: "act-1") == 2)
                #expect(try reader.seq(forID: "del-1") == 3)
                #expect(try reader.seq(forID: "act-2") == 4)
                // Only notification ids ignore case.
                #expect(try reader.seq(forID: "ACT-1") == nil)
                #expect(try reader.seq(forID: "Del-1") == nil)
                #expect(try reader.seq(forID: "unknown") == nil)
            }
        }
    }

    @Test("events are visited in seq order from any seq")
    func forEachEvent() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let all = try store.read { reader throws in
                var seqs: [UInt64] = []
                try reader.forEachEvent {
                    seqs.append($0.seq)
                    return true
                }
                return seqs
            }
            #expect(all == [1, 2, 3, 4])
            let fromTwoStoppingAtThree = try store.read { reader throws in
                var seqs: [UInt64] = []
                try reader.forEachEvent(from: 2) {
                    seqs.append($0.seq)
                    return $0.seq < 3
                }
                return seqs
            }
            #expect(fromTwoStoppingAtThree == [2, 3])
        }
    }

    @Test("each index lists its events in (at, seq) order, whatever the append order")
    func positionsInTimelineOrder() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let nine = try Timeline.at("09:00")
            let nineThirty = try Timeline.at("09:30")
            let ten = try Timeline.at("10:00")
            try store.read { reader throws in
                #expect(
                    try reader.positions(.time, key: Layout.timeKey) == [
                        Position(at: nine, seq: 2), Position(at: nine, seq: 4), Position(at: nineThirty, seq: 3),
                        Position(at: ten, seq: 1),
                    ])
                #expect(
                    try reader.positions(.users, key: Array("user-1".utf8)) == [
                        Position(at: nine, seq: 2), Position(at: nineThirty, seq: 3), Position(at: ten, seq: 1),
                    ])
                #expect(
                    try reader.positions(.tasks, key: Layout.taskKey(7)) == [
                        Position(at: nine, seq: 2), Position(at: ten, seq: 1),
                    ])
                #expect(
                    try reader.positions(.threads, key: Array("task-7".utf8)) == [
                        Position(at: nine, seq: 2), Position(at: ten, seq: 1),
                    ])
                #expect(
                    try reader.positions(.refs, key: Array(Fixture.notificationID.lowercased().utf8)) == [
                        Position(at: nine, seq: 2), Position(at: nineThirty, seq: 3),
                    ])
                #expect(try reader.positions(.users, key: Array("nobody".utf8)).isEmpty)
            }
        }
    }

    @Test("a key with a single event lists that event")
    func positionsOfSingleEvent() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let nine = try Timeline.at("09:00")
            let ten = try Timeline.at("10:00")
            try store.read { reader throws in
                #expect(try reader.positions(.users, key: Array("user-2".utf8)) == [Position(at: nine, seq: 4)])
                #expect(try reader.positions(.tasks, key: Layout.taskKey(8)) == [Position(at: nine, seq: 4)])
                #expect(try reader.positions(.threads, key: Array("task-7".utf8)).last == Position(at: ten, seq: 1))
            }
        }
    }

    @Test("each key's positions are exactly the events that name it, in (at, seq) order")
    func positionsMatchEvents() throws {
        // The shared timeline, then more events in scrambled time order.
        var lines = Timeline.lines
        for i in 0..<30 {
            let minute = (i * 17) % 60
            let at = jsonString("2026-11-29T11:\(minute < 10 ? "0" : "")\(minute):00Z")
            switch i % 3 {
            case 0:
                lines.append(
                    Fixture.notification.with("id", jsonString("N-\(i)")).with("at", at).with(
                        "user", jsonString("user-\(i % 4)")
                    )
                    .with("payload", #"{"aps":{"thread-id":"task-\#(i % 5)"},"task_id":\#(i % 5)}"#))
            case 1:
                lines.append(
                    Fixture.action.with("id", jsonString("a-\(i)")).with("at", at).with(
                        "user", jsonString("user-\(i % 4)")
                    )
                    .with("task_id", "\(i % 5)").with("notification_id", jsonString("n-\(i - 1)")))
            default:
                lines.append(
                    Fixture.delivery.with("id", jsonString("d-\(i)")).with("at", at).with(
                        "user", jsonString("user-\(i % 4)")
                    )
                    .with("notification_id", jsonString("N-\(i - 2)")))
            }
        }
        try withStore { store, _ throws in
            #expect(
                try store.append(lines.map(pendingEvent), recordedAt: fixedClock).allSatisfy {
                    if case .appended = $0 { true } else { false }
                })
            let events = try lines.map(decodeEvent)
            func expected(_ names: (Event) -> [UInt8]?, _ key: [UInt8]) -> [Position] {
                events.enumerated().filter { names($0.element) == key }.map {
                    Position(at: $0.element.at, seq: UInt64($0.offset + 1))
                }.sorted()
            }
            try store.read { reader throws in
                #expect(try reader.positions(.time, key: Layout.timeKey) == expected({ _ in [0] }, [0]))
                for user in Set(events.map(\.user)) {
                    let key = Array(user.utf8)
                    #expect(
                        try reader.positions(.users, key: key) == expected({ Array($0.user.utf8) }, key), "user \(user)"
                    )
                }
                for task in Set(events.compactMap(\.taskID)) {
                    let key = Layout.taskKey(task)
                    #expect(
                        try reader.positions(.tasks, key: key) == expected({ $0.taskID.map(Layout.taskKey) }, key),
                        "task \(task)")
                }
                for thread in Set(events.compactMap(\.threadID)) {
                    let key = Array(thread.utf8)
                    #expect(
                        try reader.positions(.threads, key: key)
                            == expected({ $0.threadID.map { Array($0.utf8) } }, key), "thread \(thread)")
                }
                for ref in Set(events.compactMap(\.referencedNotificationID)) {
                    let key = Array(ref.utf8)
                    #expect(
                        try reader.positions(.refs, key: key)
                            == expected({ $0.referencedNotificationID.map { Array($0.utf8) } }, key),
                        "ref \(ref)")
                }
            }
            #expect(try store.verify().ok)
        }
    }

    @Test("many events under one key are all listed, in order")
    func manyPositions() throws {
        try withStore { store, _ throws in
            // More 16-byte positions than fit in one page, appended newest first.
            let count = 700
            let batch = try (0..<count).map { i in
                try pendingEvent(
                    Fixture.action.with("id", jsonString("bulk-\(i)"))
                        .with("at", jsonString(utcSeconds(referenceSeconds - Int64(i)).formatted(fractionDigits: 6))))
            }
            _ = try store.append(batch, recordedAt: fixedClock)
            let positions = try store.read { try $0.positions(.tasks, key: Layout.taskKey(7)) }
            #expect(positions.count == count)
            #expect(positions == positions.sorted())
            #expect(
                positions.first == Position(at: utcSeconds(referenceSeconds - Int64(count - 1)), seq: UInt64(count)))
        }
    }

    @Test("an equal event with another key order and spacing is a duplicate, not appended")
    func duplicate() throws {
        try withStore { store, _ throws in
            let original = Fixture.notification.with("extra", "1.0")
            #expect(try store.append([pendingEvent(original)], recordedAt: fixedClock) == [.appended(1)])
            let headBefore = try store.read { try $0.head() }
            // Reversed keys, spaces and a line break outside strings, and 1.0 written as 10e-1.
            let reordered =
                "{ "
                + original.with("extra", "10e-1").members.reversed().map { "\"\($0.0)\" : \($0.1)" }
                .joined(separator: " ,\n ") + " }"
            #expect(try store.append([pendingEvent(raw: reordered)], recordedAt: fixedClock) == [.duplicate(1)])
            try store.read { reader throws in
                #expect(try reader.head() == headBefore)
                #expect(try reader.counts()[.notification] == 1)
                #expect(try reader.event(seq: 2) == nil)
                #expect(try reader.event(seq: 1)?.raw == original.bytes)
            }
        }
    }

    @Test("the same id with a different event is a conflict, not appended")
    func conflict() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let headBefore = try store.read { try $0.head() }
            let changed = [
                Fixture.notification.with("device", #""tok-2""#),
                Fixture.notification.with("device", #""tok-1""#).with("user", #""user-9""#),
                Fixture.notification.with("device", #""tok-1""#).with("extra", "true"),
                Timeline.action.with("outcome", #""rejected""#),
                Timeline.delivery.with("status", "410"),
            ]
            let outcomes = try store.append(changed.map(pendingEvent), recordedAt: fixedClock)
            #expect(outcomes == [.conflict(1), .conflict(1), .conflict(1), .conflict(2), .conflict(3)])
            try store.read { reader throws in
                #expect(try reader.head() == headBefore)
                #expect(try reader.counts() == [.notification: 1, .action: 2, .delivery: 1])
            }
        }
    }

    @Test("a notification re-sent with its id in another case is a duplicate, with another value a conflict")
    func notificationIDCaseInsensitive() throws {
        try withStore { store, _ throws in
            #expect(try store.append([pendingEvent(Fixture.notification)], recordedAt: fixedClock) == [.appended(1)])
            let lower = Fixture.notification.with("id", jsonString(Fixture.notificationID.lowercased()))
            #expect(try store.append([pendingEvent(lower)], recordedAt: fixedClock) == [.duplicate(1)])
            let lowerChanged = lower.with("user", #""user-2""#)
            #expect(try store.append([pendingEvent(lowerChanged)], recordedAt: fixedClock) == [.conflict(1)])
            #expect(try store.read { try $0.head().seq } == 1)
        }
    }

    @Test("an action id in another case is another event")
    func actionIDCaseSensitive() throws {
        try withStore { store, _ throws in
            let upper = Fixture.action.with("id", #""ACT-1""#)
            #expect(
                try store.append([pendingEvent(Fixture.action), pendingEvent(upper)], recordedAt: fixedClock) == [
                    .appended(1), .appended(2),
                ])
        }
    }

    @Test("a re-sent notification whose key is spelled with other code points is a conflict")
    func keyCodePointsMatter() throws {
        try withStore { store, _ throws in
            // "café" precomposed, then with a combining accent: equal as Swift strings,
            // different JSON keys.
            let precomposed = Fixture.notification.with("caf\u{e9}", "1")
            let decomposed = Fixture.notification.with("cafe\u{301}", "1")
            #expect(try store.append([pendingEvent(precomposed)], recordedAt: fixedClock) == [.appended(1)])
            #expect(try store.append([pendingEvent(decomposed)], recordedAt: fixedClock) == [.conflict(1)])
            // The same holds for an action, whose id is compared exactly.
            #expect(
                try store.append([pendingEvent(Fixture.action.with("caf\u{e9}", "1"))], recordedAt: fixedClock) == [
                    .appended(2)
                ])
            #expect(
                try store.append([pendingEvent(Fixture.action.with("cafe\u{301}", "1"))], recordedAt: fixedClock) == [
                    .conflict(2)
                ])
        }
    }

    @Test("within one batch a repeated event is a duplicate of the first")
    func duplicateInBatch() throws {
        try withStore { store, _ throws in
            let outcomes = try store.append(
                [pendingEvent(Fixture.action), pendingEvent(Fixture.delivery), pendingEvent(Fixture.action)],
                recordedAt: fixedClock)
            #expect(outcomes == [.appended(1), .appended(2), .duplicate(1)])
        }
    }

    @Test("the chain head moves with each append and is SHA-256 over the previous hash and the record")
    func chainHead() throws {
        try withStore { store, _ throws in
            var previous = [UInt8](repeating: 0, count: 32)
            var heads: [ChainHead] = [try store.read { try $0.head() }]
            for (i, line) in Timeline.lines.enumerated() {
                let seq = UInt64(i + 1)
                _ = try store.append([pendingEvent(line)], recordedAt: fixedClock)
                let event = try decodeEvent(line)
                // record(n) = seq (8 bytes BE) ‖ type ‖ recorded_at ‖ at ‖ the raw line.
                let record =
                    be64(seq) + [event.type.rawValue] + orderedBE(recordedAt) + orderedBE(event.at) + line.bytes
                previous = (previous + record).withUnsafeBytes { SHA256.digest($0) }
                let head = try store.read { try $0.head() }
                #expect(head.seq == seq)
                #expect(head.hash == previous)
                #expect(head.hex == SHA256.hex(previous))
                #expect(try store.read { try $0.event(seq: seq)?.hash } == previous)
                #expect(!heads.contains(head))
                heads.append(head)
            }
        }
    }

    @Test("a batch in one transaction chains like the same events appended one by one")
    func batchChainsLikeSingles() throws {
        let single = try withStore { store, _ throws in
            try appendTimeline(store)
            return try store.read { try $0.head() }
        }
        let batch = try withStore { store, _ throws in
            #expect(
                try store.append(Timeline.lines.map(pendingEvent), recordedAt: fixedClock) == [
                    .appended(1), .appended(2), .appended(3), .appended(4),
                ])
            return try store.read { try $0.head() }
        }
        #expect(single == batch)
        #expect(single.seq == 4)
    }

    @Test("a write that throws appends nothing")
    func writeThatThrows() throws {
        struct Stop: Error {}
        try withStore { store, _ throws in
            #expect(throws: Stop.self) {
                try store.write(recordedAt: fixedClock) { writer throws in
                    _ = try writer.append([pendingEvent(Fixture.notification), pendingEvent(Fixture.action)])
                    #expect(writer.head.seq == 2)
                    throw Stop()
                }
            }
            try store.read { reader throws in
                #expect(try reader.head() == .empty)
                #expect(try reader.event(seq: 1) == nil)
                #expect(try reader.seq(forID: "act-1") == nil)
                #expect(try reader.positions(.time, key: Layout.timeKey).isEmpty)
            }
        }
    }

    @Test("counts and statistics describe what is stored")
    func countsAndStatistics() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            try store.read { reader throws in
                #expect(try reader.counts() == [.notification: 1, .action: 2, .delivery: 1])
                let stats = try reader.statistics()
                #expect(stats.events == 4)
                #expect(stats.byType == [.notification: 1, .action: 2, .delivery: 1])
                #expect(stats.tasks == 2)
                #expect(stats.threads == 1)
                #expect(stats.users == 2)
                #expect(try stats.firstAt == Timeline.at("09:00"))
                #expect(try stats.lastAt == Timeline.at("10:00"))
                #expect(try stats.head == reader.head())
                #expect(try reader.keyCount(.refs) == 1)
            }
            #expect(store.fileBytes > 0)
        }
    }

    @Test("verify passes on a clean store and recomputes its head")
    func verifyClean() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            let report = try store.verify()
            #expect(report.ok)
            #expect(report.events == 4)
            #expect(report.firstBadSeq == nil)
            #expect(report.problem == nil)
            #expect(try report.head == store.read { try $0.head() })
        }
    }

    @Test("verify names the first event whose bytes were changed")
    func verifyChangedEvent() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            try store.env.write { txn throws in
                let key = be64(2)
                var value = try #require(try store.events.get(key, in: txn).map { Array($0) })
                let raw = String(decoding: value[Layout.eventHeaderSize...], as: UTF8.self)
                value.replaceSubrange(
                    Layout.eventHeaderSize...,
                    with: Array(raw.replacingOccurrences(of: "complete", with: "cancel").utf8))
                try store.events.put(key, value, in: txn)
            }
            let report = try store.verify()
            #expect(!report.ok)
            #expect(report.firstBadSeq == 2)
            #expect(report.problem?.contains("seq 2") == true)
        }
    }

    @Test("verify names the event whose index entry is missing")
    func verifyMissingIndexEntry() throws {
        try withStore { store, _ throws in
            try appendTimeline(store)
            // Remove the entry that files seq 3 under user-1, whatever its value's layout
            // (it ends with the seq).
            try store.env.write { txn throws in
                let users = store.indexes[.users]
                let key = Array("user-1".utf8)
                let value = try txn.withCursor(users) { cursor throws -> [UInt8]? in
                    var entry = try key.withUnsafeBytes { try cursor.find($0) }
                    while let (_, v) = entry {
                        if v.count >= 8,
                            UInt64(bigEndian: v.loadUnaligned(fromByteOffset: v.count - 8, as: UInt64.self)) == 3
                        {
                            return Array(v)
                        }
                        entry = try cursor.nextDuplicate()
                    }
                    return nil
                }
                let found = try #require(value, "user-1 should have an entry for seq 3")
                #expect(try users.delete(key, value: found, in: txn))
            }
            let report = try store.verify()
            #expect(!report.ok)
            #expect(report.firstBadSeq == 3)
            #expect(report.problem?.contains("users") == true)
        }
    }

    @Test("a 410 delivery is filed under its notification's device, whichever is ingested first")
    func unregisteredIndex() throws {
        let notification = Fixture.notification.with("device", #""tok-9""#)
        let gone = Fixture.delivery.with("status", "410").with("reason", #""Unregistered""#)
        let accepted = Fixture.delivery.with("id", #""del-2""#).with("at", #""2026-11-29T10:00:02Z""#)
        let goneAt = try decodeEvent(gone).at
        for order in [[notification, gone, accepted], [gone, accepted, notification]] {
            try withStore { store, _ throws in
                for line in order { _ = try store.append([pendingEvent(line)], recordedAt: fixedClock) }
                let goneSeq = UInt64(order.firstIndex { $0.text == gone.text }! + 1)
                try store.read { reader throws in
                    #expect(
                        try reader.positions(.unregistered, key: Layout.deviceKey("tok-9")) == [
                            Position(at: goneAt, seq: goneSeq)
                        ])
                }
                #expect(try store.verify().ok)
            }
        }
    }

    @Test("a 410 delivery is filed under its notification's device, not its own, in either ingest order")
    func unregisteredOwnDevice() throws {
        let gone = Fixture.delivery.with("status", "410").with("device", #""tok-own""#)
        let notification = Fixture.notification.with("device", #""tok-other""#)
        for order in [[gone, notification], [notification, gone]] {
            try withStore { store, _ throws in
                _ = try store.append(order.map { try pendingEvent($0) }, recordedAt: fixedClock)
                let goneSeq = UInt64(order.firstIndex { $0.text == gone.text }! + 1)
                try store.read { reader throws in
                    // The 410 retires the device of the notification it answers.
                    #expect(
                        try reader.positions(.unregistered, key: Layout.deviceKey("tok-other")).map(\.seq) == [goneSeq])
                    #expect(try reader.positions(.unregistered, key: Layout.deviceKey("tok-own")).isEmpty)
                }
                #expect(try store.verify().ok)
            }
        }
    }

    @Test("a 410 delivery whose notification is not stored is filed under its own device")
    func unregisteredOwnDeviceFallback() throws {
        try withStore { store, _ throws in
            let gone = Fixture.delivery.with("status", "410").with("device", #""tok-own""#)
            _ = try store.append([pendingEvent(gone)], recordedAt: fixedClock)
            try store.read { reader throws in
                #expect(try reader.positions(.unregistered, key: Layout.deviceKey("tok-own")).map(\.seq) == [1])
            }
            #expect(try store.verify().ok)
        }
    }

    @Test("an append never files a new event under a seq that is already taken")
    func appendOverTakenSeq() throws {
        try withStore { store, _ throws in
            _ = try store.append([pendingEvent(Fixture.notification)], recordedAt: fixedClock)
            // Damage the chain head so the writer believes the store is empty.
            try store.env.write { txn throws in
                #expect(try store.meta.delete(Array("head".utf8), in: txn))
            }
            #expect(throws: (any Error).self) {
                try store.append([pendingEvent(Fixture.action)], recordedAt: fixedClock)
            }
            try store.read { reader throws in
                #expect(try reader.seq(forID: "act-1") == nil)
                #expect(try reader.event(seq: 1)?.raw == Fixture.notification.bytes)
            }
        }
    }

    @Test("a store reopened read-only reads what was appended")
    func reopenReadOnly() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/store"
            let head = try {
                let store = try Store(path: path, create: true)
                try appendTimeline(store)
                return try store.read { try $0.head() }
            }()
            let reopened = try Store(path: path, create: false)
            try reopened.read { reader throws in
                #expect(try reader.head() == head)
                #expect(try reader.event(seq: 4)?.raw == Timeline.otherUser.bytes)
            }
            #expect(try reopened.verify().ok)
            #expect(try reopened.clearStaleReaders() == 0)
        }
    }
}

@Suite("Store files and refusals", .serialized)
struct StoreFileTests {
    @Test("the store directory is created 0700 and its files 0600, even with umask 0")
    func permissions() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/new-store"
            // umask is process-wide and other tests run in parallel: keep the window short.
            let old = umask(0)
            let opened = Result { try Store(path: path, create: true) }
            umask(old)
            let store = try opened.get()
            _ = try store.append([pendingEvent(Fixture.notification)], recordedAt: fixedClock)
            #expect(fileMode(path) == 0o700)
            #expect(fileMode(path + "/data.mdb") == 0o600)
            #expect(fileMode(path + "/lock.mdb") == 0o600)
        }
    }

    @Test("opening a store that does not exist without create fails as missing and creates nothing")
    func missing() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/nope"
            let error = #expect(throws: StoreError.self) { try Store(path: path, create: false) }
            #expect(error == .missing(path: path))
            #expect(!FileManager.default.fileExists(atPath: path))
            // The store states the fact; advice (which flag to pass) is the front end's.
            #expect(error?.description == "no store at \(path)")
        }
    }

    @Test("an empty directory without create is a missing store")
    func emptyDirectoryIsMissing() throws {
        try withTemporaryDirectory { dir throws in
            let error = #expect(throws: StoreError.self) { try Store(path: dir, create: false) }
            #expect(error == .missing(path: dir))
        }
    }

    @Test("a store directory writable by others is refused")
    func insecureDirectory() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/open"
            try #require(mkdir(path, 0o700) == 0)
            try #require(chmod(path, 0o777) == 0)
            let error = #expect(throws: StoreError.self) { try Store(path: path, create: true) }
            #expect(error == .insecure(path: path, mode: 0o777))
            #expect(error?.description == "store directory \(path) is writable by others (mode 777)")
            #expect(!FileManager.default.fileExists(atPath: path + "/data.mdb"))
        }
    }

    @Test("a path that is a file is not a store directory")
    func notADirectory() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/file"
            try writeFile(path, Array("hello".utf8))
            let error = #expect(throws: StoreError.self) { try Store(path: path, create: true) }
            #expect(error == .notADirectory(path: path))
        }
    }

    @Test("a data.mdb full of garbage is not a store, and is left untouched")
    func garbageDataFile() throws {
        try withTemporaryDirectory { dir throws in
            let garbage = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try writeFile(dir + "/data.mdb", garbage)
            for create in [false, true] {
                let error = #expect(throws: StoreError.self) { try Store(path: dir, create: create) }
                if case .notAStore(let path, _) = error {
                    #expect(path == dir)
                } else {
                    Issue.record("expected notAStore, got \(String(describing: error))")
                }
            }
            #expect(FileManager.default.contents(atPath: dir + "/data.mdb") == Data(garbage))
        }
    }

    @Test("a data.mdb too small to be LMDB is not a store")
    func tinyDataFile() throws {
        try withTemporaryDirectory { dir throws in
            try writeFile(dir + "/data.mdb", Array("not lmdb".utf8))
            let error = #expect(throws: StoreError.self) { try Store(path: dir, create: false) }
            if case .notAStore(let path, _) = error {
                #expect(path == dir)
            } else {
                Issue.record("expected notAStore, got \(String(describing: error))")
            }
        }
    }

    @Test("an LMDB environment without pushtrail's databases is not a store")
    func foreignEnvironment() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let env = try Environment(path: dir)
                let db = try env.openDatabases { try env.openDatabase("other", create: true, in: $0) }
                try env.write { _ = try db.put(Array("k".utf8), Array("v".utf8), in: $0) }
            }
            let error = #expect(throws: StoreError.self) { try Store(path: dir, create: false) }
            if case .notAStore = error {} else { Issue.record("expected notAStore, got \(String(describing: error))") }
        }
    }
}
