import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// Threads of one process appending bodies to one store (the server's POSTs) while
/// others read it, from a map far too small, so that it grows many times under them.
@Suite("Concurrent appends and reads in one process")
struct ConcurrentAppendTests {
    static let appenders = 3
    static let bodies = 30
    static let perBody = 40

    /// Appends body `body` of `appender` (`count` events) through a `StreamedIngest`.
    static func append(
        _ store: Store, group: GroupCommit? = nil, appender: Int, body: Int, count: Int = perBody
    ) throws -> StreamedIngest.Outcome {
        let ingest = StreamedIngest(store: store, strict: false, group: group)
        var bytes = Array((0..<count).map { line(appender, body, $0) + "\n" }.joined().utf8)
        _ = bytes.withUnsafeMutableBytes { ingest.feed(UnsafeRawBufferPointer($0)) }
        return try ingest.finish(recordedAt: { utcSeconds(1_800_000_000) })
    }

    static func line(_ appender: Int, _ body: Int, _ n: Int) -> String {
        let number = (appender * bodies + body) * perBody + n
        let id = String(format: "0B9E5C36-3A4B-4C5D-8E6F-%012X", number)
        return Fixture.notification.with("id", jsonString(id)).with("user", jsonString("user-\(number % 17)")).text
    }

    @Test("every body lands whole and the chain verifies", arguments: [true, false])
    func appendsAmongReaders(writeMap: Bool) throws {
        try withTemporaryDirectory { dir throws in
            var options = StoreOptions()
            options.mapSize = 1 << 20
            options.noSync = true  // the map and the locks are under test, not durability
            options.writeMap = writeMap
            let store = try Store(path: dir + "/store", create: true, options: options)
            let failures = Messages()
            let finished = Messages()
            let reads = Messages()
            let done = DispatchGroup()
            for r in 0..<2 {
                onThread(done) {
                    while finished.count < ConcurrentAppendTests.appenders {
                        do {
                            // The newest events, decoded from the map.
                            try store.read { reader in
                                let head = try reader.head()
                                try reader.forEachEvent(from: max(1, head.seq &- 100)) { stored in
                                    if stored.raw.isEmpty { failures.add("reader \(r): seq \(stored.seq) is empty") }
                                    return true
                                }
                            }
                            reads.add("read")
                        } catch {
                            failures.add("reader \(r): \(error)")
                        }
                    }
                }
            }
            for a in 0..<ConcurrentAppendTests.appenders {
                onThread(done) {
                    for b in 0..<ConcurrentAppendTests.bodies {
                        do {
                            let outcome = try ConcurrentAppendTests.append(store, appender: a, body: b)
                            if outcome.summary.appended != ConcurrentAppendTests.perBody {
                                failures.add("appender \(a) body \(b): \(outcome.summary)")
                            }
                        } catch {
                            failures.add("appender \(a) body \(b): \(error)")
                        }
                    }
                    finished.add("appender \(a)")
                }
            }
            done.wait()
            #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")
            #expect(reads.count > 0)
            #expect(store.fileBytes > options.mapSize, "the map should have grown")
            let total = ConcurrentAppendTests.appenders * ConcurrentAppendTests.bodies * ConcurrentAppendTests.perBody
            let report = try store.verify()
            #expect(report.ok, "\(report)")
            #expect(report.events == UInt64(total))
            let missing = try store.read { reader in
                try (0..<total).filter { number in
                    try reader.seq(forID: String(format: "0B9E5C36-3A4B-4C5D-8E6F-%012X", number)) == nil
                }
            }
            #expect(missing.isEmpty, "\(missing.count) events are missing")
        }
    }
}

@Suite("Group commit")
struct GroupCommitTests {
    @Test("bodies finishing together share commits; each is stored whole, its events in a row, once")
    func sharedCommits() throws {
        let counts = try appendTogether(maxEvents: 15_000)
        #expect(counts.commits < counts.bodies, "no two bodies shared a commit: \(counts)")
    }

    @Test("a store without a dictionary gets one trained on the first 1,000 events of the bodies sent")
    func trainsADictionary() throws {
        try withTemporaryDirectory { dir throws in
            var options = StoreOptions()
            options.noSync = true
            let store = try Store(path: dir + "/store", create: true, options: options)
            let group = GroupCommit(store: store)
            // Bodies of 400 events: the third completes the sample of 1,000.
            for body in 0..<4 {
                let ingest = StreamedIngest(store: store, strict: false, group: group)
                var bytes = Array(
                    (0..<400).map { ConcurrentAppendTests.line(0, 0, body * 400 + $0) + "\n" }.joined().utf8)
                _ = bytes.withUnsafeMutableBytes { ingest.feed(UnsafeRawBufferPointer($0)) }
                #expect(try ingest.finish(recordedAt: { recordedAt }).summary.appended == 400)
            }
            try store.read { reader in
                #expect(try reader.dictionaryNumbers() == [1])
                let compressed = try (1...1600).map { seq in
                    let record = try #require(try store.events.get(Layout.bigEndian(UInt64(seq)), in: reader.txn))
                    return record[0] & Layout.compressedFlag != 0
                }
                #expect(!compressed[..<800].contains(true), "the bodies before the sample was complete stay whole")
                #expect(!compressed[800...].contains(false), "the body that completed it and later ones are compressed")
                #expect(try reader.format() == Layout.runsFormatVersion)
            }
            #expect(try store.verify().ok)
        }
    }

    @Test("append slots: a third holder waits until one of two gives its slot back")
    func slots() throws {
        let slots = Slots(2)
        slots.acquire()
        slots.acquire()
        let taken = Messages()
        let done = DispatchGroup()
        onThread(done) {
            slots.acquire()
            taken.add("third")
        }
        // Whatever the machine's speed, the third cannot have its slot before a release.
        usleep(200_000)
        #expect(taken.count == 0)
        slots.release()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(taken.count == 1)
    }

    @Test("a group takes no more events than its limit (its first body aside)")
    func limitedGroups() throws {
        let counts = try appendTogether(maxEvents: 1)
        #expect(counts.commits == counts.bodies)
    }

    /// Four threads append 20 bodies of 30 events each through one group; the bodies'
    /// events must be stored whole, in a row and once, and the chain verify.
    func appendTogether(maxEvents: Int) throws -> (commits: Int, bodies: Int) {
        try withTemporaryDirectory { dir throws in
            var options = StoreOptions()
            options.writeMap = false  // as the server opens it; commits are durable (fsync)
            let store = try Store(path: dir + "/store", create: true, options: options)
            let group = GroupCommit(store: store, maxEvents: maxEvents)
            let threads = 4
            let bodies = 20
            let perBody = 30
            let failures = Messages()
            let seqs = Messages()
            let done = DispatchGroup()
            for t in 0..<threads {
                onThread(done) {
                    for b in 0..<bodies {
                        do {
                            let outcome = try ConcurrentAppendTests.append(
                                store, group: group, appender: t, body: b, count: perBody)
                            let first = outcome.summary.firstSeq ?? 0
                            let last = outcome.summary.lastSeq ?? 0
                            if outcome.summary.appended != perBody || last - first + 1 != UInt64(perBody) {
                                failures.add("thread \(t) body \(b): \(outcome.summary)")
                            }
                            seqs.add("\(first)")
                        } catch {
                            failures.add("thread \(t) body \(b): \(error)")
                        }
                    }
                }
            }
            done.wait()
            #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")
            let total = threads * bodies * perBody
            let counts = group.counts
            #expect(counts.bodies == threads * bodies)
            // The bodies' runs of seqs tile 1…total.
            let firsts = seqs.messages.compactMap { UInt64($0) }.sorted()
            #expect(firsts == (0..<(threads * bodies)).map { UInt64($0 * perBody + 1) })
            let report = try store.verify()
            #expect(report.ok && report.events == UInt64(total), "\(report)")
            // Sent again, every line is a duplicate, and nothing is added.
            let again = try ConcurrentAppendTests.append(store, group: group, appender: 0, body: 0, count: 1)
            #expect(again.summary.duplicates == 1)
            #expect(try store.read { try $0.head().seq } == UInt64(total))
            return counts
        }
    }
}
