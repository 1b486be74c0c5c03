import Foundation
import LMDBKit
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// Small write transactions (the server's bodies) file their ids and seqs in the recent
/// tier, which moves into the main databases now and then: whatever is where, every
/// answer must be the one a store written in one go gives.
@Suite("The recent tier")
struct RecentTierTests {
    /// The sample events, forwards and backwards: backwards, deliveries come before
    /// their notifications, so the dead-token entries move between devices across tiers.
    static func samples(reversed: Bool) throws -> [PendingEvent] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Samples/events.ndjson"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        return try (reversed ? lines.reversed() : lines).map { try pendingEvent(raw: $0) }
    }

    /// A store in `dir` whose tiered writes fold at `foldEvents`.
    static func store(_ path: String, foldEvents: Int = Store.defaultFoldEvents) throws -> Store {
        var options = StoreOptions()
        options.noSync = true
        options.foldEvents = foldEvents
        return try Store(path: path, create: true, options: options)
    }

    /// Every entry of an index as one store answers it, main and recent together, as
    /// sorted (key, value) pairs.
    static func entries(_ store: Store, _ name: String) throws -> [[UInt8]] {
        try store.read { reader in
            var out: [[UInt8]] = []
            for db in Verifier.databases(name, of: store) {
                try reader.txn.withCursor(db) { cursor in
                    var entry = try cursor.first()
                    while let (key, value) = entry {
                        out.append(Array(key) + [0xFF] + Array(value))
                        entry = try cursor.next()
                    }
                }
            }
            return out.sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Entries of the recent tier, by database.
    static func recentCount(_ store: Store) throws -> Int {
        try store.read { reader in
            try store.tieredIndexes.reduce(0) { $0 + (try $1.recent.statistics(in: reader.txn).entries) }
        }
    }

    /// Asserts that `tiered` answers every index question as `direct` does.
    static func expectSameAnswers(_ tiered: Store, _ direct: Store, _ events: [PendingEvent]) throws {
        for name in IndexDigest.names {
            #expect(try entries(tiered, name) == entries(direct, name), "index \(name)")
        }
        let answers: (Store) throws -> [String] = { store in
            try store.read { reader in
                var out: [String] = []
                for pending in events {
                    let e = pending.event
                    out.append("id \(e.id) → \(String(describing: try reader.seq(forID: e.id)))")
                    out.append("user \(e.user) → \(try reader.seqs(.users, key: Array(e.user.utf8)))")
                    if let task = e.taskID {
                        out.append("task \(task) → \(try reader.seqs(.tasks, key: Layout.taskKey(task)))")
                    }
                    if let thread = e.threadID {
                        out.append("thread \(thread) → \(try reader.seqs(.threads, key: Array(thread.utf8)))")
                    }
                }
                for index in [Layout.Index.users, .tasks, .threads, .refs] {
                    out.append("\(index) keys \(try reader.keyCount(index))")
                }
                return out
            }
        }
        #expect(try answers(tiered) == answers(direct))
        let report = try tiered.verify()
        #expect(report.ok, "\(report.problem ?? "")")
        #expect(try tiered.read { try $0.head() } == direct.read { try $0.head() })
    }

    @Test("bodies filed in the tier, folded or not, answer as one transaction does", arguments: [false, true])
    func sameAnswers(reversed: Bool) throws {
        let events = try RecentTierTests.samples(reversed: reversed)
        try withTemporaryDirectory { dir throws in
            let direct = try RecentTierTests.store(dir + "/direct")
            _ = try direct.append(events, recordedAt: fixedClock)
            // Bodies of 7 events, never folded: the main databases stay empty.
            let unfolded = try RecentTierTests.store(dir + "/unfolded")
            for start in stride(from: 0, to: events.count, by: 7) {
                let body = Array(events[start..<min(start + 7, events.count)])
                #expect(try unfolded.append(body, recordedAt: fixedClock, tiered: true).allSatisfy(\.isAppended))
            }
            #expect(try unfolded.read { try $0.format() } == Layout.tieredFormatVersion)
            #expect(try unfolded.read { try unfolded.ids.statistics(in: $0.txn).entries } == 0)
            #expect(try RecentTierTests.recentCount(unfolded) > events.count)
            try RecentTierTests.expectSameAnswers(unfolded, direct, events)
            // Folded every 40 events: some in the main databases, the rest in the tier.
            let folding = try RecentTierTests.store(dir + "/folding", foldEvents: 40)
            for start in stride(from: 0, to: events.count, by: 7) {
                _ = try folding.append(
                    Array(events[start..<min(start + 7, events.count)]), recordedAt: fixedClock, tiered: true)
            }
            // A slice (an eighth) a body while the tier holds 40 or more: both hold events.
            let inTier = try folding.read { try folding.recentEvents(in: $0.txn) }
            #expect(inTier >= 40 && inTier < 80)
            #expect(try folding.read { try folding.ids.statistics(in: $0.txn).entries } == events.count - inTier)
            #expect(try folding.read { try folding.meta.get(Array("fold.users".utf8), in: $0.txn) } != nil)
            try RecentTierTests.expectSameAnswers(folding, direct, events)
        }
    }

    @Test("duplicates and conflicts are found in either tier, and a direct write folds the tier first")
    func duplicatesAcrossTiers() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let store = try RecentTierTests.store(dir + "/store", foldEvents: 100)
            // Thirds of 74-75 events: the second and third fold a slice each, so events lie in both.
            let third = events.count / 3
            for part in [events[..<third], events[third..<(2 * third)], events[(2 * third)...]] {
                _ = try store.append(Array(part), recordedAt: fixedClock, tiered: true)
            }
            #expect(try store.read { try store.recentEvents(in: $0.txn) } > 0)
            #expect(try store.read { try store.ids.statistics(in: $0.txn).entries } > 0)
            // Every event again, tiered: each a duplicate of the seq it got, main or recent.
            let again = try store.append(events, recordedAt: fixedClock, tiered: true)
            #expect(again == (1...UInt64(events.count)).map { AppendOutcome.duplicate($0) })
            // A changed event under a stored id, in each tier: a conflict.
            for seq in [UInt64(1), UInt64(events.count)] {
                var raw = events[Int(seq) - 1].raw
                raw.insert(contentsOf: Array(#""extra":1,"#.utf8), at: 1)
                let changed = try pendingEvent(raw: String(decoding: raw, as: UTF8.self))
                #expect(try store.append([changed], recordedAt: fixedClock, tiered: true) == [.conflict(seq)])
            }
            // A direct write moves the tier into the main databases before it looks.
            #expect(try store.append(events, recordedAt: fixedClock).allSatisfy { !$0.isAppended })
            #expect(try RecentTierTests.recentCount(store) == 0)
            #expect(try store.read { try store.ids.statistics(in: $0.txn).entries } == events.count)
            #expect(try store.verify().ok)
        }
    }

    @Test("verify finds an entry missing from the tier, or one too many there")
    func verifyChecksTheTier() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let store = try RecentTierTests.store(dir + "/store")
            _ = try store.append(events, recordedAt: fixedClock, tiered: true)
            let recent = try #require(store.recent)
            let user = Array(events[9].event.user.utf8)
            let seq = try store.read { try $0.seqs(.users, key: user) }.last!
            try store.env.write { txn in
                _ = try recent.users.delete(user, value: Layout.bigEndian(seq), in: txn)
            }
            var report = try store.verify()
            #expect(report.firstBadSeq == seq)
            #expect(report.problem?.contains("users index") == true)
            try store.env.write { txn in
                _ = try recent.users.put(user, Layout.bigEndian(seq), in: txn)
                _ = try recent.ids.put(Array("not-an-event".utf8), Layout.bigEndian(3), in: txn)
            }
            report = try store.verify()
            #expect(report.firstBadSeq == 3)
            #expect(report.problem?.contains("ids index") == true)
        }
    }
}

extension AppendOutcome {
    fileprivate var isAppended: Bool { if case .appended = self { true } else { false } }
}
