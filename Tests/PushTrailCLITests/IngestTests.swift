import Foundation
import LMDBKit
import PushTrailModel
import PushTrailStore
import Testing

@Suite("ingest: duplicates, conflicts, --strict, --rejects, CRLF")
struct IngestTests {
    static let summaryKeys: Set<String> = [
        "read", "appended", "duplicates", "conflicts", "rejected", "first_seq", "last_seq",
    ]

    /// The head seq of `store` (0 while it has none), read by another process while an
    /// ingest may be running.
    static func storedCount(_ store: String) -> Int {
        let head = try? Binary.run(["--store", store, "head", "--json"])
        return head.flatMap { $0.status == 0 ? (try? $0.json())?["seq"]?.int : nil } ?? 0
    }

    /// Waits until `store` holds `count` events, up to 20 s on a loaded machine; the
    /// count last seen.
    static func waitForStored(_ count: Int, in store: String) -> Int {
        var seen = 0
        for _ in 0..<200 {
            seen = storedCount(store)
            if seen >= count { break }
            usleep(100_000)
        }
        return seen
    }

    @Test("ingesting the sample file appends every event, and ingesting it again makes every line a duplicate")
    func reingestIsAllDuplicates() throws {
        let dir = try TempDir()
        let sampleLines = try String(contentsOfFile: Samples.events, encoding: .utf8).split(separator: "\n").count

        let first = CLI.run(store: dir.store, ["ingest", "--json", Samples.events])
        #expect(first.status == 0, "\(first)")
        let s1 = try first.json()
        #expect(Set(s1.keys) == IngestTests.summaryKeys)
        #expect(s1["read"]?.int == sampleLines)
        #expect(s1["appended"]?.int == sampleLines)
        #expect(s1["duplicates"]?.int == 0)
        #expect(s1["conflicts"]?.int == 0)
        #expect(s1["rejected"]?.int == 0)
        #expect(s1["first_seq"]?.int == 1)
        #expect(s1["last_seq"]?.int == sampleLines)
        let headBefore = try CLI.head(dir.store)

        let again = CLI.run(store: dir.store, ["ingest", "--json", Samples.events])
        #expect(again.status == 0, "\(again)")
        #expect(again.stderr.isEmpty)
        let s2 = try again.json()
        #expect(Set(s2.keys) == IngestTests.summaryKeys)
        #expect(s2["read"]?.int == sampleLines)
        #expect(s2["appended"]?.int == 0)
        #expect(s2["duplicates"]?.int == sampleLines)
        #expect(s2["conflicts"]?.int == 0)
        #expect(s2["rejected"]?.int == 0)
        #expect(s2["first_seq"]?.isNull == true)
        #expect(s2["last_seq"]?.isNull == true)
        #expect(try CLI.head(dir.store) == headBefore)
    }

    @Test("input that trickles in through a pipe is stored as it comes, not when a batch fills")
    func tricklingInputIsCommitted() throws {
        let dir = try TempDir()
        let pipe = Pipe()
        let running = try Binary.start(["--store", dir.store, "ingest", "-q", "-"], input: .stream(pipe))
        let lines = Line.deliveries("d", count: 5)
        func storedCount() -> Int { Self.storedCount(dir.store) }
        func waitFor(_ count: Int) -> Int { Self.waitForStored(count, in: dir.store) }
        pipe.fileHandleForWriting.write(Data((lines.prefix(3).joined(separator: "\n") + "\n").utf8))
        // The ingest is still running, waiting for more input: the three are committed.
        #expect(waitFor(3) == 3)
        #expect(running.process.isRunning)
        pipe.fileHandleForWriting.write(Data((lines.suffix(2).joined(separator: "\n") + "\n").utf8))
        #expect(waitFor(5) == 5)
        try pipe.fileHandleForWriting.close()
        let outcome = try running.wait()
        #expect(outcome.status == 0, "\(outcome)")
        #expect(storedCount() == 5)
    }

    @Test("a regular file is ingested in one transaction, however often the writer catches up with the parser")
    func fileIsOneTransaction() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: Line.deliveries("f", count: 5000))
        let store = try Store(path: dir.store, create: true)
        var options = IngestOptions()
        // Small handoffs and no dictionary: the writer keeps finding the queue empty.
        options.handoffEvents = 50
        options.compress = false
        let before = store.lastTransactionID
        let ingest = Ingest(store: store, sources: [.file(input)], options: options, clock: { CLI.now })
        #expect(try ingest.run().appended == 5000)
        // One commit: an early one would make the next transaction copy the index pages
        // again and scatter its new pages (docs/PERFORMANCE.md).
        #expect(store.lastTransactionID - before == 1)
        #expect(try store.verify().ok)
    }

    @Test("several parsing threads store what one stores: the same records and seqs, rejections in input order")
    func parsingThreadsKeepInputOrder() throws {
        let dir = try TempDir()
        var lines = TamperKit.lines(count: 3000, seed: 47)
        // Bad lines and duplicates of earlier lines all through the input.
        for k in stride(from: 5, to: lines.count, by: 97) { lines[k] = "not json \(k)" }
        for k in stride(from: 40, to: lines.count, by: 89) where !lines[k - 30].hasPrefix("not") {
            lines[k] = lines[k - 30]
        }
        let a = try dir.write("a.ndjson", lines: Array(lines.prefix(1700)))
        let b = try dir.write("b.ndjson", lines: Array(lines.dropFirst(1700)))
        func ingest(_ name: String, threads: Int) throws -> (IngestSummary, [Rejection], [[UInt8]]) {
            let path = dir.file(name)
            let store = try Store(path: path, create: true)
            var options = IngestOptions()
            // Hundreds of handoffs, each decoded by whichever thread read it, and a
            // dictionary trained after the 29th, mid-way through the first file.
            options.handoffEvents = 7
            options.dictionarySamples = 200
            options.parsingThreads = threads
            let ingest = Ingest(store: store, sources: [.file(a), .file(b)], options: options, clock: { CLI.now })
            var rejections: [Rejection] = []
            ingest.onReject = { rejections.append($0) }
            let summary = try ingest.run()
            #expect(try store.verify().ok)
            return (summary, rejections, try TamperKit.values(path))
        }
        let (one, oneRejected, oneValues) = try ingest("one", threads: 1)
        #expect(
            one.rejected == 31 && one.duplicates > 25 && one.appended == 3000 - one.rejected - one.duplicates, "\(one)")
        #expect(
            oneRejected.map { "\($0.source):\($0.line)" }
                == (0..<31).map { "\($0 < 18 ? a : b):\($0 < 18 ? 6 + 97 * $0 : 6 + 97 * $0 - 1700)" })
        #expect(oneValues.count == one.appended)
        for _ in 0..<3 {
            let (three, threeRejected, threeValues) = try ingest(
                "three-\(UInt32.random(in: 0...UInt32.max))", threads: 3)
            #expect(three == one)
            #expect(threeRejected == oneRejected)
            #expect(threeValues == oneValues)  // byte for byte: same seqs, records, hashes, dictionary
        }
    }

    /// Every entry of every database of the store at `path` but `events` and `meta`, by
    /// database name, in LMDB's order.
    static func indexEntries(_ path: String) throws -> [String: [[UInt8]]] {
        var options = EnvironmentOptions()
        options.readOnly = true
        let env = try Environment(path: path, options: options)
        let names = ["ids", "time", "users", "tasks", "threads", "refs", "unregistered"]
        let dbs = try env.openDatabases { txn in try names.map { try env.openDatabase($0, create: false, in: txn) } }
        return try env.read { txn in
            var all: [String: [[UInt8]]] = [:]
            for (name, db) in zip(names, dbs) {
                all[name] = try txn.withCursor(db) { cursor in
                    var entries: [[UInt8]] = []
                    var entry = try cursor.first()
                    while let (key, value) = entry {
                        entries.append(Array(key) + [0xAA] + Array(value))
                        entry = try cursor.next()
                    }
                    return entries
                }
            }
            return all
        }
    }

    /// Covers duplicates and conflicts of events not filed yet, and 410s after their notifications.
    @Test(
        "ids and index entries filed in key order later in the transaction come out as if filed one by one"
    )
    func indexRunsFileWhatAppendFiles() throws {
        let dir = try TempDir()
        var lines = TamperKit.lines(count: 4000, seed: 0xABC)  // ids "00000abc-…": capitals differ
        // Repeats of earlier lines (duplicates), changed ones (conflicts), and
        // notifications again with their ids in capitals (duplicates), all within a
        // transaction of the first; the generated lines have 410s after their
        // notifications, some with a device of their own.
        var expectedDuplicates = 0
        var expectedConflicts = 0
        for k in stride(from: 60, to: lines.count, by: 53) {
            let earlier = lines[k - 50]
            if k % 3 == 0 {
                lines[k] = earlier
                expectedDuplicates += 1
            } else if earlier.contains(#""type":"notification""#), k % 3 == 1 {
                let id = earlier.components(separatedBy: #""id":""#)[1].prefix(36)
                lines[k] = earlier.replacingOccurrences(of: String(id), with: id.uppercased())
                expectedDuplicates += 1
            } else {
                lines[k] = earlier.replacingOccurrences(of: #""user":""#, with: #""user":"x"#)
                expectedConflicts += 1
            }
        }
        let input = try dir.write("events.ndjson", lines: lines)

        // The reference: `Store.append`, a batch at a time, which keeps no filters and so
        // looks up and files every id and `refs` entry as it goes (the other indexes'
        // runs are filed at each batch's end; verify recomputes every entry from the
        // events, so each store's indexes are checked on their own too).
        let reference = dir.file("reference")
        let store = try Store(path: reference, create: true)
        var decoder = EventDecoder()
        var outcomes: [AppendOutcome] = []
        for chunk in stride(from: 0, to: lines.count, by: 500) {
            let batch = try lines[chunk..<min(chunk + 500, lines.count)].map { line in
                let raw = Array(line.utf8)
                return PendingEvent(event: try decoder.decodeForFiling(raw), raw: raw)
            }
            outcomes += try store.append(batch, recordedAt: { CLI.now })
        }
        #expect(outcomes.filter { if case .duplicate = $0 { true } else { false } }.count == expectedDuplicates)
        #expect(outcomes.filter { if case .conflict = $0 { true } else { false } }.count == expectedConflicts)
        #expect(try store.verify().ok)
        let expectedIndexes = try Self.indexEntries(reference)
        let expectedValues = try TamperKit.values(reference)
        #expect(
            expectedIndexes["unregistered"]!.count > 20
                && expectedValues.count == 4000 - expectedDuplicates - expectedConflicts)

        // An ingest, in one transaction, filing its runs every entry, every few entries,
        // or at the end; records whole, so that they compare byte for byte.
        for runEntries in [1, 5, 97, IngestOptions().indexRunEntries] {
            let path = dir.file("runs-\(runEntries)")
            let store = try Store(path: path, create: true)
            var options = IngestOptions()
            options.handoffEvents = 13
            options.compress = false
            options.indexRunEntries = runEntries
            let summary = try Ingest(store: store, sources: [.file(input)], options: options, clock: { CLI.now }).run()
            #expect(summary.duplicates == expectedDuplicates && summary.conflicts == expectedConflicts, "\(summary)")
            #expect(try store.verify().ok)
            #expect(try TamperKit.values(path) == expectedValues, "runs of \(runEntries)")
            #expect(try Self.indexEntries(path) == expectedIndexes, "runs of \(runEntries)")
        }
    }

    @Test(
        "an id another writer stores between two transactions of a piped ingest is a duplicate there, not filed twice")
    func idStoredByAnotherWriterMidIngest() throws {
        let dir = try TempDir()
        let pipe = Pipe()
        let running = try Binary.start(["--store", dir.store, "ingest", "--json", "-"], input: .stream(pipe))
        // The ingest keeps the ids it has seen from its first transaction on (the store is empty).
        pipe.fileHandleForWriting.write(Data((Line.deliveries("h", count: 3).joined(separator: "\n") + "\n").utf8))
        #expect(Self.waitForStored(3, in: dir.store) == 3)
        let shared = Line.notification("00000009-1111-4222-8333-444455556666", device: "tok-9")
        let other = CLI.run(store: dir.store, ["ingest", "-q", try dir.write("other.ndjson", lines: [shared])])
        #expect(other.status == 0, "\(other)")
        pipe.fileHandleForWriting.write(
            Data((shared + "\n" + Line.deliveries("i", count: 2).joined(separator: "\n") + "\n").utf8))
        try pipe.fileHandleForWriting.close()
        let r = try running.wait()
        #expect(r.status == 0, "\(r)")
        let summary = try r.json()
        #expect(summary["appended"]?.int == 5 && summary["duplicates"]?.int == 1, "\(r.stdout)")
        #expect(Self.storedCount(dir.store) == 6)
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)
    }

    /// The delivery comes earlier in the input, in an earlier ingest, or from another writer between a piped ingest's
    /// transactions.
    @Test(
        "a notification stored after its 410 delivery re-files it, wherever that delivery came from"
    )
    func notificationAfterItsUnregisteredDelivery() throws {
        let dir = try TempDir()
        let ids = (0..<3).map { "0000000\($0)-1111-4222-8333-444455556666" }
        func gone(_ k: Int) -> String {
            Line.delivery(
                "gone-\(k)", notification: ids[k], status: 410,
                extra: #","reason":"Unregistered","device":"tok-own-"# + "\(k)\"")
        }
        func notification(_ k: Int) -> String { Line.notification(ids[k], device: "tok-\(k)") }
        func ingest(_ name: String, _ lines: [String], store: String = dir.store) throws {
            let r = CLI.run(store: store, ["ingest", "-q", try dir.write(name, lines: lines)])
            #expect(r.status == 0, "\(r)")
        }
        // Earlier in the same input, with other deliveries between them.
        try ingest("one.ndjson", [gone(0)] + Line.deliveries("f", count: 300) + [notification(0)])
        // In an earlier ingest: the next one, large enough, starts from the keys `refs` holds.
        try ingest("two-a.ndjson", [gone(1)])
        try ingest("two-b.ndjson", Line.deliveries("g", count: 3000) + [notification(1)])
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)

        // From another process, between two transactions of an ingest reading a pipe into
        // a store whose `refs` is empty (so the ingest keeps its keys from the start).
        let piped = dir.file("piped")
        let pipe = Pipe()
        let running = try Binary.start(["--store", piped, "ingest", "-q", "-"], input: .stream(pipe))
        func stored() -> Int { Self.storedCount(piped) }
        func waitFor(_ count: Int) -> Int { Self.waitForStored(count, in: piped) }
        pipe.fileHandleForWriting.write(Data((Line.deliveries("h", count: 3).joined(separator: "\n") + "\n").utf8))
        #expect(waitFor(3) == 3)
        try ingest("three-a.ndjson", [gone(2)], store: piped)
        #expect(stored() == 4)
        pipe.fileHandleForWriting.write(Data((notification(2) + "\n").utf8))
        try pipe.fileHandleForWriting.close()
        #expect(try running.wait().status == 0)
        #expect(stored() == 5)
        // verify recomputes every index entry from the events: a 410 left under its own
        // device instead of its notification's is a mismatch.
        let verify = CLI.run(store: piped, ["verify"])
        #expect(verify.status == 0, "\(verify)")
    }

    @Test("the text summary says what happened")
    func textSummary() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("a"), Line.delivery("b"), "oops"])
        let r = CLI.run(store: dir.store, ["ingest", input])
        #expect(r.status == 65)
        #expect(r.stdout == "appended 2 of 3 events (seq 1–2); 0 duplicates, 0 conflicts, 1 rejected\n", "\(r)")
    }

    @Test("the same id with different content is a conflict: exit 65, named on stderr, the stored event kept")
    func conflict() throws {
        let dir = try TempDir()
        let original = Line.delivery("dlv-1", status: 200)
        try dir.write("first.ndjson", lines: [original])
        #expect(CLI.run(store: dir.store, ["ingest", dir.file("first.ndjson")]).status == 0)

        let second = try dir.write(
            "second.ndjson",
            lines: [Line.delivery("dlv-2"), Line.delivery("dlv-1", status: 410), Line.delivery("dlv-3")])
        let r = CLI.run(store: dir.store, ["ingest", "--json", second])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderrLines.count == 1)
        let message = String(r.stderrLines.first ?? "")
        #expect(message.hasPrefix("pushtrail: \(second):2: "), "\(message)")
        #expect(message.contains("dlv-1"))
        #expect(message.contains("conflict"))
        let summary = try r.json()
        #expect(summary["conflicts"]?.int == 1)
        #expect(summary["rejected"]?.int == 0)
        #expect(summary["appended"]?.int == 2)
        #expect(try CLI.show(dir.store, "dlv-1")?["event"] == JSON.parse(original))
        #expect(try CLI.show(dir.store, "dlv-3") != nil)
    }

    @Test("the same event with keys reordered, other spacing, escapes and number spelling is a duplicate")
    func equalAsJSONValueIsDuplicate() throws {
        let dir = try TempDir()
        let original =
            "{\"type\":\"delivery\",\"id\":\"d-1\",\"at\":\"2026-11-29T10:00:00Z\",\"user\":\"u_ann\","
            + "\"notification_id\":\"n-1\",\"status\":200,\"meta\":{\"a\":1,\"b\":[1,2]},\"cost\":150}"
        let reordered =
            "{ \"meta\" : { \"b\" : [1, 2], \"a\" : 1 }, \"status\": 200, \"cost\": 1.50e2, "
            + "\"notification_id\": \"n-1\", \"user\": \"u_\\u0061nn\", \"at\": \"2026-11-29T10:00:00Z\", "
            + "\"id\": \"d-1\", \"type\": \"delivery\" }"
        try dir.write("a.ndjson", lines: [original])
        try dir.write("b.ndjson", lines: [reordered])
        #expect(CLI.run(store: dir.store, ["ingest", dir.file("a.ndjson")]).status == 0)
        let r = CLI.run(store: dir.store, ["ingest", "--json", dir.file("b.ndjson")])
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["duplicates"]?.int == 1)
        #expect(try CLI.stats(dir.store)["events"]?.int == 1)
        #expect(try CLI.show(dir.store, "d-1")?["event"] == JSON.parse(original))
    }

    @Test("an array in another order is a different event: a conflict")
    func arrayOrderMatters() throws {
        let dir = try TempDir()
        let a = try dir.write("a.ndjson", lines: [Line.delivery("d-1", extra: ",\"tags\":[1,2]")])
        let b = try dir.write("b.ndjson", lines: [Line.delivery("d-1", extra: ",\"tags\":[2,1]")])
        #expect(CLI.run(store: dir.store, ["ingest", a]).status == 0)
        let r = CLI.run(store: dir.store, ["ingest", "--json", b])
        #expect(r.status == 65)
        #expect(try r.json()["conflicts"]?.int == 1)
    }

    @Test("a notification whose id differs only in letter case is a duplicate (apns-ids compare case-insensitively)")
    func notificationIDCaseIsDuplicate() throws {
        let dir = try TempDir()
        let upper = try dir.write(
            "upper.ndjson", lines: [Line.notification("2C3728F5-AC04-4973-862A-20422BDAE4B1", thread: "task-1")])
        let lower = try dir.write(
            "lower.ndjson", lines: [Line.notification("2c3728f5-ac04-4973-862a-20422bdae4b1", thread: "task-1")])
        #expect(CLI.run(store: dir.store, ["ingest", upper]).status == 0)
        let r = CLI.run(store: dir.store, ["ingest", "--json", lower])
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["duplicates"]?.int == 1)
        #expect(try r.json()["conflicts"]?.int == 0)
        #expect(try CLI.stats(dir.store)["events"]?.int == 1)
    }

    @Test("a notification found by its id in any letter case, other ids only exactly")
    func idLookupCase() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "in.ndjson",
            lines: [
                Line.notification("abcdef01-0000-4000-8000-00000000000a"), Line.action("act_0001"),
                Line.action("ACT_0001"),
            ])
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 0, "action ids are case-sensitive: ACT_0001 is another event. \(r)")
        #expect(try r.json()["appended"]?.int == 3)
        #expect(try CLI.show(dir.store, "ABCDEF01-0000-4000-8000-00000000000A")?["seq"]?.int == 1)
        #expect(try CLI.show(dir.store, "act_0001")?["seq"]?.int == 2)
        #expect(try CLI.show(dir.store, "ACT_0001")?["seq"]?.int == 3)
        #expect(try CLI.show(dir.store, "Act_0001") == nil)
    }

    @Test("a line repeated within one file is stored once, then counted as a duplicate")
    func duplicateWithinOneFile() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "in.ndjson", lines: [Line.delivery("same"), Line.delivery("same"), Line.delivery("other")])
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 0)
        let s = try r.json()
        #expect(s["appended"]?.int == 2)
        #expect(s["duplicates"]?.int == 1)
        #expect(s["last_seq"]?.int == 2)
    }

    // MARK: - --strict

    @Test("--strict with a bad line after good ones stores nothing: events and head are unchanged")
    func strictStoresNothing() throws {
        let dir = try TempDir()
        let seed = try dir.write("seed.ndjson", lines: Line.deliveries("seed", count: 3))
        #expect(CLI.run(store: dir.store, ["ingest", seed]).status == 0)
        let statsBefore = try CLI.stats(dir.store)
        let headBefore = try CLI.head(dir.store)

        let input = try dir.write(
            "strict.ndjson", lines: [Line.delivery("new-1"), Line.delivery("new-2"), "{not json"])
        let r = CLI.run(store: dir.store, ["ingest", "--strict", input])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("\(input):3: invalid JSON"), "\(r)")
        #expect(r.stdout.contains("nothing from this run was stored"))
        #expect(try CLI.stats(dir.store)["events"] == statsBefore["events"])
        #expect(try CLI.head(dir.store) == headBefore)
        #expect(try CLI.show(dir.store, "new-1") == nil)
        #expect(CLI.run(store: dir.store, ["verify"]).status == 0)
    }

    @Test("--strict stops at a conflict too, storing nothing")
    func strictConflict() throws {
        let dir = try TempDir()
        let seed = try dir.write("seed.ndjson", lines: [Line.delivery("d-1", status: 200)])
        #expect(CLI.run(store: dir.store, ["ingest", seed]).status == 0)
        let headBefore = try CLI.head(dir.store)
        let input = try dir.write("strict.ndjson", lines: [Line.delivery("d-2"), Line.delivery("d-1", status: 500)])
        let r = CLI.run(store: dir.store, ["ingest", "--strict", "--json", input])
        #expect(r.status == 65)
        #expect(r.stderr.contains("\(input):2: "))
        #expect(try r.json()["conflicts"]?.int == 1)
        #expect(try r.json()["appended"]?.int == 0)
        #expect(try CLI.head(dir.store) == headBefore)
        #expect(try CLI.show(dir.store, "d-2") == nil)
    }

    @Test("--strict into a new store leaves an empty store: head seq 0, stats 0 events")
    func strictIntoNewStore() throws {
        let dir = try TempDir()
        let input = try dir.write("strict.ndjson", lines: [Line.delivery("new-1"), "[]"])
        let r = CLI.run(store: dir.store, ["ingest", "--strict", input])
        #expect(r.status == 65)
        // What the implementation does: the store is created (the write transaction
        // was begun) but holds no event.
        let head = try CLI.head(dir.store)
        #expect(head["seq"]?.int == 0)
        #expect(head["hash"]?.string == String(repeating: "0", count: 64))
        let stats = try CLI.stats(dir.store)
        #expect(stats["events"]?.int == 0)
        #expect(stats["first_at"]?.isNull == true)
        #expect(stats["last_at"]?.isNull == true)
    }

    @Test("--strict --json counts the lines read up to and including the bad one")
    func strictSummaryCountsLinesRead() throws {
        let dir = try TempDir()
        let input = try dir.write(
            "strict.ndjson", lines: [Line.delivery("new-1"), Line.delivery("new-2"), "bad", Line.delivery("new-4")])
        let r = CLI.run(store: dir.store, ["ingest", "--strict", "--json", input])
        #expect(r.status == 65)
        let s = try r.json()
        #expect(s["rejected"]?.int == 1)
        #expect(s["appended"]?.int == 0)
        #expect(s["read"]?.int == 3, "three lines were read before --strict stopped: \(r.stdout)")
    }

    @Test("--strict with only good lines stores them all")
    func strictAllGood() throws {
        let dir = try TempDir()
        let input = try dir.write("ok.ndjson", lines: Line.deliveries("ok", count: 20))
        let r = CLI.run(store: dir.store, ["ingest", "--strict", "--json", input])
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["appended"]?.int == 20)
        #expect(try r.json()["last_seq"]?.int == 20)
    }

    // MARK: - --rejects

    @Test("--rejects writes each rejected line byte for byte (CRLF and invalid UTF-8 kept), mode 0600")
    func rejectsFile() throws {
        let dir = try TempDir()
        try dir.write("seed.ndjson", lines: [Line.delivery("taken", status: 200)])
        #expect(CLI.run(store: dir.store, ["ingest", dir.file("seed.ndjson")]).status == 0)

        let crlfBad = Array("{\"type\":\"nope\"}\r".utf8)
        let badUTF8: [UInt8] =
            Array("{\"type\":\"delivery\",\"user\":\"".utf8) + [0xFF, 0xFE, 0x41] + Array("\"}".utf8)
        let conflict = Array(Line.delivery("taken", status: 404).utf8)
        let bom = [0xEF, 0xBB, 0xBF] + Array(Line.delivery("bom").utf8)
        var bytes: [UInt8] = []
        bytes += Array((Line.delivery("g1") + "\n").utf8)
        bytes += crlfBad + [0x0A]
        bytes += Array((Line.delivery("g2") + "\r\n").utf8)
        bytes += badUTF8 + [0x0A]
        bytes += conflict + [0x0A]
        bytes += bom + [0x0A]
        bytes += Array((Line.delivery("g3")).utf8)
        let input = try dir.write("mixed.ndjson", bytes: bytes)
        let rejects = dir.file("rejects.ndjson")

        let r = CLI.run(store: dir.store, ["ingest", "--json", "--rejects", rejects, input])
        #expect(r.status == 65, "\(r)")
        let s = try r.json()
        #expect(s["rejected"]?.int == 3)
        #expect(s["conflicts"]?.int == 1)
        #expect(s["appended"]?.int == 3)
        let written = try dir.read("rejects.ndjson")
        #expect(written == crlfBad + [0x0A] + badUTF8 + [0x0A] + conflict + [0x0A] + bom + [0x0A])
        #expect(mode(of: rejects) == 0o600)
    }

    @Test("--rejects keeps the \\r of a conflicting CRLF line too (a conflict is a rejected line)")
    func rejectsConflictCRLF() throws {
        let dir = try TempDir()
        try dir.write("seed.ndjson", lines: [Line.delivery("taken", status: 200)])
        #expect(CLI.run(store: dir.store, ["ingest", dir.file("seed.ndjson")]).status == 0)
        let conflict = Array((Line.delivery("taken", status: 500) + "\r").utf8)
        let input = try dir.write("crlf.ndjson", bytes: conflict + [0x0A])
        let r = CLI.run(store: dir.store, ["ingest", "--rejects", dir.file("rejects.ndjson"), input])
        #expect(r.status == 65)
        #expect(try dir.read("rejects.ndjson") == conflict + [0x0A], "the line as read, byte for byte, \\r included")
    }

    @Test("--rejects keeps an existing file unless --force, which replaces it and makes it 0600")
    func rejectsOverwrites() throws {
        let dir = try TempDir()
        let old = Array("old content that must go\n".utf8)
        let rejects = try dir.write("rejects.ndjson", bytes: old)
        chmod(rejects, 0o644)
        let input = try dir.write("in.ndjson", lines: [Line.delivery("g1"), "bad"])
        let refused = CLI.run(store: dir.store, ["ingest", "--rejects", rejects, input])
        #expect(refused.status == 74, "\(refused)")
        #expect(refused.stderr.contains("already exists: pass --force to overwrite it"), "\(refused)")
        #expect(try dir.read("rejects.ndjson") == old)
        #expect(!exists(dir.store), "refused before anything was ingested")

        let r = CLI.run(store: dir.store, ["ingest", "--rejects", rejects, "--force", input])
        #expect(r.status == 65)
        #expect(try dir.read("rejects.ndjson") == Array("bad\n".utf8))
        #expect(mode(of: rejects) == 0o600)
    }

    // MARK: - CRLF

    @Test("CRLF lines are accepted and stored without the \\r: show --json gives back the line")
    func crlfLines() throws {
        let dir = try TempDir()
        let lines = [
            Line.notification("11111111-2222-4333-8444-555555555555", thread: "task-1", task: 1),
            Line.action(
                "act-1", task: 1, action: "complete",
                extra: ",\"notification_id\":\"11111111-2222-4333-8444-555555555555\""),
            Line.delivery("dlv-1", notification: "11111111-2222-4333-8444-555555555555"),
        ]
        let input = try dir.write("crlf.ndjson", lines: lines, terminator: "\r\n")
        let r = CLI.run(store: dir.store, ["ingest", "--json", input])
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["appended"]?.int == 3)
        for (seq, line) in lines.enumerated() {
            let show = CLI.run(store: dir.store, ["show", "--json", "@\(seq + 1)"])
            #expect(show.status == 0)
            #expect(!show.stdoutBytes.contains(0x0D), "a \\r was stored with event \(seq + 1)")
            #expect(try show.json()["event"] == JSON.parse(line))
        }
        // Re-ingesting the same events with LF endings is all duplicates.
        let lf = try dir.write("lf.ndjson", lines: lines)
        let again = CLI.run(store: dir.store, ["ingest", "--json", lf])
        #expect(again.status == 0)
        #expect(try again.json()["duplicates"]?.int == 3)
    }

    // MARK: - Other ingest behaviour

    @Test("a progress line is drawn on a terminal and cleared; none with --quiet, --json or off a terminal")
    func progressLine() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: Line.deliveries("p", count: 10))
        let terminal = CLI.run(store: dir.store, ["ingest", input], stderrIsTerminal: true)
        #expect(terminal.status == 0)
        #expect(terminal.stderr.contains("ingest: 10 lines, 10 appended"), "\(terminal)")
        #expect(terminal.stderr.hasSuffix("\r\u{1B}[K"), "the progress line should be cleared at the end")

        let quiet = CLI.run(store: dir.file("s2"), ["ingest", "--quiet", input], stderrIsTerminal: true)
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty)
        let json = CLI.run(store: dir.file("s3"), ["ingest", "--json", input], stderrIsTerminal: true)
        #expect(json.stderr.isEmpty)
        let pipe = CLI.run(store: dir.file("s4"), ["ingest", input])
        #expect(pipe.stderr.isEmpty)
    }

    @Test("ingest with no file while standard input is a terminal is a usage error")
    func noInputOnTerminal() throws {
        let dir = try TempDir()
        let r = CLI.run(["--store", dir.store, "ingest"], stdinIsTerminal: true)
        #expect(r.status == 2)
        #expect(r.stderr.contains("no input"))
        #expect(r.stderr.contains("--help"))
        #expect(!exists(dir.store), "a usage error must not create the store")
    }

    @Test("a missing input file is exit 74 and creates no store")
    func missingInputFile() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["ingest", dir.file("nope.ndjson")])
        #expect(r.status == 74)
        #expect(r.stderrLines.count == 1)
        #expect(r.stderr.contains("nope.ndjson"))
        #expect(!exists(dir.store))
    }

    @Test("a directory given as input is exit 74")
    func directoryAsInput() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["ingest", dir.path])
        #expect(r.status == 74)
        #expect(r.stderr.contains("directory"))
    }

    @Test("standard input named twice is a usage error")
    func stdinTwice() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["ingest", "-", "-"])
        #expect(r.status == 2)
    }

    @Test("the store comes from --store, --store=DIR or $PUSHTRAIL_STORE")
    func storeSelection() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("x")])
        #expect(CLI.run(["ingest", input], environment: ["PUSHTRAIL_STORE": dir.file("env")]).status == 0)
        #expect(exists(dir.file("env/data.mdb")))
        #expect(CLI.run(["--store=\(dir.file("eq"))", "ingest", input]).status == 0)
        #expect(exists(dir.file("eq/data.mdb")))
        // --store wins over the environment, also after the command name.
        #expect(
            CLI.run(["ingest", "--store", dir.file("opt"), input], environment: ["PUSHTRAIL_STORE": dir.file("env2")])
                .status == 0)
        #expect(exists(dir.file("opt/data.mdb")))
        #expect(!exists(dir.file("env2")))
    }
}
