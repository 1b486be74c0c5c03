import Foundation
import LMDBKit
import PushTrailModel
import PushTrailStore
import Testing

/// Records compressed with a zstd dictionary trained on the store's own events
/// (docs/STORE.md, "Compressed records"): what is stored, what reads it back, and that
/// the chain covers the dictionary as well as the records.
@Suite("compressed records: a dictionary from the store's own events, covered by the chain")
struct CompressionTests {
    /// The `meta` records by name.
    static func meta(_ store: String) throws -> [String: [UInt8]] {
        try Tampering.write(store, database: "meta") { meta, txn in
            try txn.withCursor(meta) { cursor in
                var out: [String: [UInt8]] = [:]
                var entry = try cursor.first()
                while let (key, value) = entry {
                    out[String(decoding: key, as: UTF8.self)] = Array(value)
                    entry = try cursor.next()
                }
                return out
            }
        }
    }

    /// The names of the store's `dictionary.N` records.
    static func dictionaryNames(_ store: String) throws -> [String] {
        try meta(store).keys.filter { $0.hasPrefix("dictionary.") }.sorted()
    }

    static func put(_ store: String, _ seq: UInt64, _ value: [UInt8]) throws {
        try Tampering.write(store, database: "events") { events, txn -> Void in
            try events.put(Tampering.seqKey(seq), value, in: txn)
        }
    }

    static func isCompressed(_ value: [UInt8]) -> Bool { value[0] & 0x80 != 0 }

    /// The stored events as `log --raw` gives them back, sorted, beside the input sorted.
    static func expectSameEvents(_ store: String, _ lines: [String], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let raw = CLI.run(store: store, ["log", "--raw"])
        #expect(raw.status == 0, "\(raw)", sourceLocation: sourceLocation)
        let stored = raw.stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init).sorted()
        #expect(
            stored == lines.sorted(), "log --raw gives back the input byte for byte", sourceLocation: sourceLocation)
    }

    static func verify(_ store: String) throws -> (Outcome, JSON) {
        let r = CLI.run(store: store, ["verify", "--json"])
        return (r, try r.json())
    }

    /// A store of 300 whole records (too few to train on) and then 2,000 compressed.
    static func mixedStore(in dir: TempDir) throws -> (String, [String]) {
        let first = TamperKit.lines(count: 300, seed: 41)
        let second = TamperKit.lines(count: 2000, seed: 42)
        let store = dir.file("store")
        #expect(CLI.run(store: store, ["ingest", try dir.write("a.ndjson", lines: first)]).status == 0)
        #expect(CLI.run(store: store, ["ingest", try dir.write("b.ndjson", lines: second)]).status == 0)
        return (store, first + second)
    }

    @Test("an ingest of 3,000 events stores them compressed and gives them back byte for byte")
    func largeIngestCompresses() throws {
        let dir = try TempDir()
        let lines = TamperKit.lines(count: 3000, seed: 40)
        let input = try dir.write("in.ndjson", lines: lines)
        let store = dir.file("store")
        let r = CLI.run(store: store, ["ingest", input])
        #expect(r.status == 0, "\(r)")

        let meta = try Self.meta(store)
        #expect(meta["format"] == [0, 0, 0, 2], "a store with compressed records is format 2")
        let dictionary = try #require(meta["dictionary.1"])
        #expect(dictionary.count > 1000 && dictionary.count <= 32 << 10)
        #expect(try Self.dictionaryNames(store).count == 1)

        let values = try TamperKit.values(store)
        #expect(values.count == 3000)
        let compressed = values.filter(Self.isCompressed)
        #expect(compressed.count > 2900, "all but a few events are smaller compressed: \(compressed.count)")
        #expect(compressed.allSatisfy { $0[49] == 1 }, "each names dictionary 1")
        let stored = compressed.reduce(0) { $0 + $1.count - 50 }
        let original = zip(values, lines).filter { Self.isCompressed($0.0) }.reduce(0) { $0 + $1.1.utf8.count }
        #expect(Double(stored) < 0.6 * Double(original), "compressed bodies \(stored) B for \(original) B of JSON")

        try Self.expectSameEvents(store, lines)
        let (v, json) = try Self.verify(store)
        #expect(v.status == 0 && json["ok"]?.bool == true, "\(v)")
        #expect(json["events"]?.int == 3000)
        let stats = try CLI.stats(store)
        #expect(stats["format"]?.int == 2 && stats["dictionaries"]?.int == 1, "\(stats)")
        #expect(CLI.run(store: store, ["stats"]).stdout.contains("format    2: records compressed (1 dictionary)"))
        // show gives the event as ingested.
        let show = try #require(try CLI.show(store, "@1"))
        #expect(show["event"]?.description == (try JSON.parse(Array(lines[0].utf8))).description)
    }

    @Test(
        "duplicates and conflicts are told apart on compressed records; --strict compresses with the store's dictionary"
    )
    func duplicatesConflictsAndStrict() throws {
        let dir = try TempDir()
        let lines = TamperKit.lines(count: 1500, seed: 47)
        let input = try dir.write("in.ndjson", lines: lines)
        let store = dir.file("store")
        #expect(CLI.run(store: store, ["ingest", input]).status == 0)
        #expect(try TamperKit.values(store).filter(Self.isCompressed).count > 1400)

        // The same lines again: every one a duplicate of its compressed record.
        let again = CLI.run(store: store, ["ingest", "--json", input])
        #expect(again.status == 0, "\(again)")
        #expect(try again.json()["duplicates"]?.int == 1500)
        #expect(try again.json()["appended"]?.int == 0)

        // The same id with other content: a conflict (exit 65, a data error).
        let changed = lines[1200].replacingOccurrences(of: "\"user\":\"u", with: "\"user\":\"x")
        #expect(changed != lines[1200])
        let conflict = CLI.run(store: store, ["ingest", "--json", try dir.write("c.ndjson", lines: [changed])])
        #expect(conflict.status == 65, "\(conflict)")
        #expect(try conflict.json()["conflicts"]?.int == 1)

        // --strict appends through the same dictionary (it trains none of its own).
        let more = TamperKit.lines(count: 40, seed: 48)
        let strict = CLI.run(store: store, ["ingest", "--strict", try dir.write("s.ndjson", lines: more)])
        #expect(strict.status == 0, "\(strict)")
        let values = try TamperKit.values(store)
        #expect(values.count == 1540)
        #expect(values.suffix(40).filter(Self.isCompressed).count > 35)
        #expect(values.suffix(40).filter(Self.isCompressed).allSatisfy { $0[49] == 1 })
        #expect(try Self.dictionaryNames(store).count == 1)
        try Self.expectSameEvents(store, lines + more)
        #expect(try Self.verify(store).0.status == 0)
    }

    @Test("a record decompresses with the zstd tool and the dictionary from meta, as docs/STORE.md says")
    func zstdToolReadsARecord() throws {
        let dir = try TempDir()
        let lines = TamperKit.lines(count: 1500, seed: 43)
        let store = dir.file("store")
        #expect(CLI.run(store: store, ["ingest", try dir.write("in.ndjson", lines: lines)]).status == 0)
        let dictionary = try #require(try Self.meta(store)["dictionary.1"])
        let values = try TamperKit.values(store)
        let seq = try #require(values.indices.first { Self.isCompressed(values[$0]) && $0 >= 700 })
        let dictPath = try dir.write("dict", bytes: dictionary)
        let framePath = try dir.write("frame.zst", bytes: Array(values[seq].dropFirst(50)))

        let out = try Tool.output("zstd", ["-q", "-d", "-c", "-D", dictPath, framePath])
        #expect(out == lines[seq], "seq \(seq + 1) is input line \(seq + 1)")
    }

    @Test(
        "a store never given 1,000 events in one ingest stays format 1; the next large ingest compresses what it brings"
    )
    func smallStoresStayWhole() throws {
        let dir = try TempDir()
        let first = TamperKit.lines(count: 300, seed: 41)
        let store = dir.file("store")
        #expect(CLI.run(store: store, ["ingest", try dir.write("a.ndjson", lines: first)]).status == 0)
        var meta = try Self.meta(store)
        #expect(meta["format"] == [0, 0, 0, 1], "no compressed record: older pushtrails still read it")
        #expect(try Self.dictionaryNames(store).isEmpty)
        #expect(try TamperKit.values(store).allSatisfy { !Self.isCompressed($0) })
        let headBefore = try CLI.head(store)

        let second = TamperKit.lines(count: 2000, seed: 42)
        #expect(CLI.run(store: store, ["ingest", try dir.write("b.ndjson", lines: second)]).status == 0)
        meta = try Self.meta(store)
        #expect(meta["format"] == [0, 0, 0, 2])
        #expect(meta["dictionary.1"] != nil)
        let values = try TamperKit.values(store)
        #expect(values.prefix(300).allSatisfy { !Self.isCompressed($0) }, "records already stored are unchanged")
        #expect(values.dropFirst(300).filter(Self.isCompressed).count > 1900)

        try Self.expectSameEvents(store, first + second)
        let (v, json) = try Self.verify(store)
        #expect(v.status == 0 && json["ok"]?.bool == true, "\(v)")
        // The chain up to the old head is the one noted down before.
        let show = try #require(try CLI.show(store, "@300"))
        #expect(show["hash"]?.string == headBefore["hash"]?.string)
    }

    @Test("a changed dictionary breaks the chain at the first record compressed with it")
    func changedDictionaryIsCaught() throws {
        let dir = try TempDir()
        let (store, _) = try Self.mixedStore(in: dir)
        let values = try TamperKit.values(store)
        let first = try #require(values.firstIndex(where: Self.isCompressed)) + 1
        #expect(first == 301)
        try Tampering.write(store, database: "meta") { meta, txn in
            var d = try #require(try meta.get(Array("dictionary.1".utf8), in: txn).map(Array.init))
            d[d.count - 1] ^= 0x01
            try meta.put(Array("dictionary.1".utf8), d, in: txn)
        }
        let (v, json) = try Self.verify(store)
        #expect(v.status == 1, "\(v)")
        #expect(json["ok"]?.bool == false)
        #expect(json["first_bad_seq"]?.int == first, "\(json)")
    }

    @Test("a missing dictionary is named by verify, and reading a record that needs it fails with one line")
    func missingDictionaryIsNamed() throws {
        let dir = try TempDir()
        let (store, _) = try Self.mixedStore(in: dir)
        let removed = try Tampering.write(store, database: "meta") { meta, txn in
            try meta.delete(Array("dictionary.1".utf8), in: txn)
        }
        #expect(removed)
        let (v, json) = try Self.verify(store)
        #expect(v.status == 1, "\(v)")
        #expect(json["first_bad_seq"]?.int == 301)
        #expect(json["reason"]?.string?.contains("dictionary 1") == true, "\(json)")
        // A whole record still reads; a compressed one is reported, not guessed at.
        #expect(try CLI.show(store, "@1") != nil)
        let r = CLI.run(store: store, ["show", "@301"])
        #expect(r.status == 74, "\(r)")
        #expect(r.stderr.contains("seq 301") && r.stderr.contains("dictionary 1"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test("a changed byte in a compressed record is caught at its seq")
    func changedFrameIsCaught() throws {
        let dir = try TempDir()
        let (store, _) = try Self.mixedStore(in: dir)
        for (seq, offset) in [(UInt64(900), 0), (UInt64(1200), -1)] {
            var value = try #require(try Tampering.value(store, seq: seq))
            #expect(Self.isCompressed(value))
            let i = offset >= 0 ? 50 + offset : value.count + offset
            let original = value[i]
            value[i] ^= 0x20
            try Self.put(store, seq, value)
            let (v, json) = try Self.verify(store)
            #expect(v.status == 1 && json["first_bad_seq"]?.int == Int(seq), "\(json)")
            value[i] = original
            try Self.put(store, seq, value)
            #expect(try Self.verify(store).0.status == 0)
        }
    }

    @Test("two ingests training a dictionary at once: each record names the one it was made with, all read back")
    func concurrentTraining() throws {
        let dir = try TempDir()
        let store = dir.file("store")
        let a = TamperKit.lines(count: 2500, seed: 44)
        let b = TamperKit.lines(count: 2500, seed: 45)
        let pa = try dir.write("a.ndjson", lines: a)
        let pb = try dir.write("b.ndjson", lines: b)
        let runs = try [pa, pb].map { try Binary.start(["--store", store, "ingest", "-q", $0]) }
        for run in runs {
            let r = try run.wait()
            #expect(r.status == 0, "\(r)")
        }
        let dictionaries = try Self.dictionaryNames(store)
        #expect((1...2).contains(dictionaries.count), "\(dictionaries)")
        try Self.expectSameEvents(store, a + b)
        #expect(try Self.verify(store).0.status == 0)
    }

    @Test("input that comes in small handoffs is sampled across them; the events before the dictionary stay whole")
    func samplesAcrossHandoffs() throws {
        let dir = try TempDir()
        let lines = TamperKit.lines(count: 2000, seed: 46)
        let input = try dir.write("in.ndjson", lines: lines)
        let path = dir.file("store")
        do {
            let store = try Store(path: path, create: true)
            var options = IngestOptions()
            options.handoffEvents = 100
            let ingest = Ingest(store: store, sources: [.file(input)], options: options, clock: { CLI.now })
            #expect(try ingest.run().appended == 2000)
        }
        let values = try TamperKit.values(path)
        // Trained once 1,000 events were kept: the 10th handoff is the first compressed.
        #expect(values.prefix(900).allSatisfy { !Self.isCompressed($0) })
        #expect(values.dropFirst(900).filter(Self.isCompressed).count > 1050)
        try Self.expectSameEvents(path, lines)
        #expect(try Self.verify(path).0.status == 0)
    }
}
