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

    /// A store in `dir` whose tiered writes fold at `foldEvents` and start a new run at
    /// `runCapacity` ids.
    static func store(
        _ path: String, foldEvents: Int = Store.defaultFoldEvents, runCapacity: Int = TierRuns.capacity
    ) throws -> Store {
        var options = StoreOptions()
        options.noSync = true
        options.foldEvents = foldEvents
        options.runCapacity = runCapacity
        return try Store(path: path, create: true, options: options)
    }

    /// Every entry of an index as one store answers it, main and recent together, as
    /// sorted (key, value) pairs.
    static func entries(_ store: Store, _ name: String) throws -> [[UInt8]] {
        try store.read { reader in
            var out: [[UInt8]] = []
            for (db, skip) in Verifier.databases(name, of: store) {
                try reader.txn.withCursor(db) { cursor in
                    var entry = try cursor.first()
                    while let (key, value) = entry {
                        out.append(Array(key[skip...]) + [0xFF] + Array(value))
                        entry = try cursor.next()
                    }
                }
            }
            return out.sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Entries of the recent tier, over its databases.
    static func recentCount(_ store: Store) throws -> Int {
        try store.read { reader in
            let runs = store.runs.map { runs in TierRuns.names.indices.map(runs.database) } ?? []
            return try (store.tieredIndexes.map(\.recent) + runs).reduce(0) {
                $0 + (try $1.statistics(in: reader.txn).entries)
            }
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
            #expect(try unfolded.read { try $0.format() } == Layout.runsFormatVersion)
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

    /// The sample events in one tiered write (one run, numbered 1), its runs'
    /// databases, and a user with the last seq filed under them.
    static func oneRun(_ dir: String) throws -> (Store, RecentDatabases, user: [UInt8], seq: UInt64) {
        let events = try RecentTierTests.samples(reversed: false)
        let store = try RecentTierTests.store(dir + "/store")
        _ = try store.append(events, recordedAt: fixedClock, tiered: true)
        let runs = try #require(store.runs)
        let user = Array(events[9].event.user.utf8)
        let seq = try #require(try store.read { try $0.seqs(.users, key: user) }.last)
        return (store, runs, user, seq)
    }

    @Test("verify finds an entry missing from the tier, or one too many there")
    func verifyChecksTheTier() throws {
        try withTemporaryDirectory { dir throws in
            let (store, runs, user, seq) = try RecentTierTests.oneRun(dir)
            try store.env.write { txn in
                _ = try runs.users.delete(TierRuns.key(1, user), value: Layout.bigEndian(seq), in: txn)
            }
            var report = try store.verify()
            #expect(report.firstBadSeq == seq)
            #expect(report.problem?.contains("users index") == true)
            try store.env.write { txn in
                _ = try runs.users.put(TierRuns.key(1, user), Layout.bigEndian(seq), in: txn)
                _ = try runs.ids.put(TierRuns.key(1, Array("not-an-event".utf8)), Layout.bigEndian(3), in: txn)
            }
            report = try store.verify()
            #expect(report.firstBadSeq == 3)
            #expect(report.problem?.contains("ids index") == true)
        }
    }

    /// The runs `meta/runs` lists.
    static func runs(_ store: Store) throws -> TierRuns { try store.read { try $0.tierRuns() } }

    @Test("many runs, folded a slice at a time from where the last stopped, answer as one transaction does")
    func manyRuns() throws {
        let events = try RecentTierTests.samples(reversed: true)
        try withTemporaryDirectory { dir throws in
            let direct = try RecentTierTests.store(dir + "/direct")
            _ = try direct.append(events, recordedAt: fixedClock)
            // Runs of 10 ids or more: a new run every second body of 7.
            let store = try RecentTierTests.store(dir + "/runs", foldEvents: 60, runCapacity: 10)
            var most = 0
            var positions = Set<[UInt8]>()
            for start in stride(from: 0, to: events.count, by: 7) {
                let body = Array(events[start..<min(start + 7, events.count)])
                #expect(try store.append(body, recordedAt: fixedClock, tiered: true).allSatisfy(\.isAppended))
                let tier = try RecentTierTests.runs(store)
                most = max(most, tier.runs.count)
                // Each run numbered by its first seq, each holding only seqs from there on.
                #expect(tier.runs.map(\.number) == tier.runs.map(\.number).sorted())
                #expect(tier.runs.allSatisfy { $0.entries.contains { $0 > 0 } })
                if let p = try store.read({ try store.meta.get(Array("fold.ids".utf8), in: $0.txn) }) {
                    positions.insert(Array(p))
                }
                #expect(try store.verify().ok)
                // Each slice moves an eighth of the runs' entries, wherever their keys lie
                // (`act_0001`, `dlv_0001`, … grow with time: each run has its own stretch).
                let inTier = try store.read { try store.recentEvents(in: $0.txn) }
                #expect(inTier < 90, "after \(start + body.count) events")
            }
            #expect(most >= 4)
            // The slices went on from one another: many positions, not one.
            #expect(positions.count >= 5)
            #expect(try store.read { try store.recentEvents(in: $0.txn) } > 0)
            try RecentTierTests.expectSameAnswers(store, direct, events)
            // A direct write moves every run into the main databases first.
            #expect(try store.append(events, recordedAt: fixedClock).allSatisfy { !$0.isAppended })
            #expect(try RecentTierTests.runs(store).runs.isEmpty)
            #expect(try RecentTierTests.recentCount(store) == 0)
            try RecentTierTests.expectSameAnswers(store, direct, events)
        }
    }

    @Test("slices keep the runs bounded when each run holds a stretch of keys of its own (ids that grow)")
    func idsThatGrow() throws {
        try withTemporaryDirectory { dir throws in
            let store = try RecentTierTests.store(dir + "/store", foldEvents: 300, runCapacity: 10)
            // Half the ids random, spread over the key range; half in the order they are
            // sent, as `act_0001` or a counter in a UUID are: no run shares that stretch of
            // keys with another.
            var rng = SplitMix(seed: 7)
            for body in 0..<40 {
                let events = try (0..<50).map { n in
                    let id =
                        n % 2 == 0
                        ? String(format: "0B9E5C36-3A4B-4C5D-8E6F-%012X", body * 50 + n)
                        : String(format: "%08X-0000-4000-8000-%012X", UInt32.random(in: 0...UInt32.max, using: &rng), n)
                    return try pendingEvent(raw: Fixture.notification.with("id", jsonString(id)).text)
                }
                #expect(try store.append(events, recordedAt: fixedClock, tiered: true).allSatisfy(\.isAppended))
                let inTier = try store.read { try store.recentEvents(in: $0.txn) }
                #expect(inTier < 400, "after body \(body)")
            }
            #expect(try store.verify().ok)
        }
    }

    @Test("a tiered write after another writer's finds what that writer stored")
    func anotherWriter() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let path = dir + "/store"
            let mine = try RecentTierTests.store(path)
            let other = try RecentTierTests.store(path)
            let half = events.count / 2
            _ = try mine.append(Array(events[..<10]), recordedAt: fixedClock, tiered: true)
            // Another writer (another process, as far as `mine` knows) files the next ones,
            // in the runs and in the main databases.
            _ = try other.append(Array(events[10..<half]), recordedAt: fixedClock, tiered: true)
            _ = try other.append(Array(events[half..<(half + 10)]), recordedAt: fixedClock)
            // Sent again to `mine`, each is a duplicate of the seq the other writer gave it.
            let again = try mine.append(Array(events[..<(half + 10)]), recordedAt: fixedClock, tiered: true)
            #expect(again == (1...UInt64(half + 10)).map { AppendOutcome.duplicate($0) })
            // New ones after them, whose notifications the other writer's deliveries named.
            let rest = try mine.append(Array(events[(half + 10)...]), recordedAt: fixedClock, tiered: true)
            #expect(rest.count == events.count - half - 10 && !rest.contains { !$0.isAppended })
            let direct = try RecentTierTests.store(dir + "/direct")
            _ = try direct.append(events, recordedAt: fixedClock)
            try RecentTierTests.expectSameAnswers(mine, direct, events)
        }
    }

    @Test("a write to the main databases between tiered ones keeps the key filters, adding its own keys")
    func filtersAcrossWrites() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let store = try RecentTierTests.store(dir + "/store")
            _ = try store.append(Array(events[..<50]), recordedAt: fixedClock, tiered: true)
            #expect(store.runFilters.builds == 1)
            // As a `consume` catching up a backlog does, between small tiered writes.
            #expect(try store.append(Array(events[50..<100]), recordedAt: fixedClock).allSatisfy(\.isAppended))
            let again = try store.append(Array(events[..<150]), recordedAt: fixedClock, tiered: true)
            #expect(again[..<100].elementsEqual((1...100).map { AppendOutcome.duplicate(UInt64($0)) }))
            #expect(!again[100...].contains { !$0.isAppended })
            #expect(store.runFilters.builds == 1)
            _ = try store.append(Array(events[150...]), recordedAt: fixedClock, tiered: true)
            let direct = try RecentTierTests.store(dir + "/direct")
            _ = try direct.append(events, recordedAt: fixedClock)
            try RecentTierTests.expectSameAnswers(store, direct, events)
        }
    }

    @Test("filters prepared from a reader serve the next tiered write, unless another writer came between")
    func preparedFilters() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let path = dir + "/store"
            _ = try RecentTierTests.store(path).append(Array(events[..<100]), recordedAt: fixedClock)
            // As a server starts: the filters built from a reader, then its appends.
            let server = try RecentTierTests.store(path)
            try server.prepareAppendFiltersNow()
            #expect(server.runFilters.builds == 1)
            let first = try server.append(Array(events[..<120]), recordedAt: fixedClock, tiered: true)
            #expect(first[..<100].elementsEqual((1...100).map { AppendOutcome.duplicate(UInt64($0)) }))
            #expect(server.runFilters.builds == 1)
            // Another process writes; the server's next tiered write sees it and rebuilds.
            _ = try RecentTierTests.store(path).append(Array(events[120..<150]), recordedAt: fixedClock)
            let second = try server.append(Array(events[..<200]), recordedAt: fixedClock, tiered: true)
            #expect(second[..<150].elementsEqual((1...150).map { AppendOutcome.duplicate(UInt64($0)) }))
            #expect(server.runFilters.builds == 2)
            // Prepared again on a snapshot the filters already cover: nothing to do.
            try server.prepareAppendFiltersNow()
            #expect(server.runFilters.builds == 2)
        }
    }

    @Test("filters a reader builds while a tiered write is under way are not taken for the write's")
    func prepareDuringWrite() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let path = dir + "/store"
            let store = try RecentTierTests.store(path)
            _ = try store.append(Array(events[..<20]), recordedAt: fixedClock, tiered: true)
            // Another process writes, so the next tiered write rebuilds the filters...
            _ = try RecentTierTests.store(path).append(Array(events[20..<40]), recordedAt: fixedClock)
            try store.write(recordedAt: fixedClock, tiered: true) { writer in
                _ = try writer.append(Array(events[40..<60]))
                // ...and a reader builds them too before it commits, as the server's
                // start may: they lack what the write filed.
                try store.prepareAppendFiltersNow()
            }
            let again = try store.append(Array(events[..<80]), recordedAt: fixedClock, tiered: true)
            #expect(again[..<60].elementsEqual((1...60).map { AppendOutcome.duplicate(UInt64($0)) }))
            #expect(try store.verify().ok)
        }
    }

    @Test("verify finds an entry in a run that meta/runs does not list, or a count it does not match")
    func verifyChecksTheRuns() throws {
        try withTemporaryDirectory { dir throws in
            let (store, runs, user, seq) = try RecentTierTests.oneRun(dir)
            // The same entry under run 2, which is not listed: every index still sums up,
            // but readers would not find it.
            try store.env.write { txn in
                _ = try runs.users.delete(TierRuns.key(1, user), value: Layout.bigEndian(seq), in: txn)
                _ = try runs.users.put(TierRuns.key(2, user), Layout.bigEndian(seq), in: txn)
            }
            var report = try store.verify()
            #expect(report.firstBadSeq == seq)
            #expect(report.problem?.contains("a run that meta/runs does not list") == true)
            // Back in run 1, and a count in meta/runs one too high.
            try store.env.write { txn in
                _ = try runs.users.delete(TierRuns.key(2, user), value: Layout.bigEndian(seq), in: txn)
                _ = try runs.users.put(TierRuns.key(1, user), Layout.bigEndian(seq), in: txn)
                var tier = try StoreReader(store: store, txn: txn).tierRuns()
                tier.runs[0].entries[1] += 1
                try store.writeRuns(tier, in: txn)
            }
            report = try store.verify()
            #expect(report.firstBadSeq == 1)
            #expect(report.problem?.contains("meta/runs lists") == true)
        }
    }

    @Test("a store whose tier an older build wrote (recent.*) is read, and moved by the next write")
    func olderLayout() throws {
        let events = try RecentTierTests.samples(reversed: false)
        try withTemporaryDirectory { dir throws in
            let direct = try RecentTierTests.store(dir + "/direct")
            _ = try direct.append(events, recordedAt: fixedClock)
            let path = dir + "/older"
            let first = events.count - 60
            do {
                // As an older build left it: the last 60 events' entries in recent.*, format 3.
                let store = try RecentTierTests.store(path)
                _ = try store.append(events, recordedAt: fixedClock)
                try store.env.write { txn in
                    for name in TierRuns.names {
                        let main = name == "ids" ? store.ids : store.indexes[Layout.Index(rawValue: name)!]
                        let flags: DatabaseFlags = name == "ids" ? [] : [.duplicateSort, .duplicateFixed]
                        let recent = try store.env.openDatabase("recent." + name, flags: flags, create: true, in: txn)
                        var moving: [([UInt8], [UInt8])] = []
                        try txn.withCursor(main) { cursor in
                            var entry = try cursor.first()
                            while let (key, value) = entry {
                                if Layout.readBigEndian(value) > UInt64(first) {
                                    moving.append((Array(key), Array(value)))
                                }
                                entry = try cursor.next()
                            }
                        }
                        for (key, value) in moving {
                            _ = try main.delete(key, value: name == "ids" ? nil : value, in: txn)
                            _ = try recent.put(key, value, in: txn)
                        }
                    }
                    _ = try store.meta.put(Layout.metaFormatKey, [0, 0, 0, 3], in: txn)
                }
            }
            let older = try RecentTierTests.store(path)
            #expect(older.recent != nil)
            #expect(try older.read { try older.olderTierEvents(in: $0.txn) } == 60)
            try RecentTierTests.expectSameAnswers(older, direct, events)
            // The next write, tiered or not, moves it into the main databases first.
            #expect(try older.append(events, recordedAt: fixedClock, tiered: true).allSatisfy { !$0.isAppended })
            #expect(try older.read { try older.olderTierEvents(in: $0.txn) } == 0)
            #expect(try older.read { try $0.format() } == 3)
            try RecentTierTests.expectSameAnswers(older, direct, events)
        }
    }
}

extension AppendOutcome {
    fileprivate var isAppended: Bool { if case .appended = self { true } else { false } }
}
