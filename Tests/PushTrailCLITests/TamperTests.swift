import Foundation
import LMDBKit
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// A seeded generator (SplitMix64): every run makes the same changes, so a failure
/// names an iteration that reproduces.
struct TamperRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 64 lowercase hex digits: an APNs device token.
    mutating func token() -> String {
        (0..<4).map { _ in
            let s = String(next(), radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }
}

/// Direct edits of a store through LMDB for the tamper tests, beyond `Tampering`:
/// whole-value reads and writes, and an attacker's consistent rewrite of the chain
/// (docs/STORE.md, "The hash chain"). Each call opens the environment, runs one write
/// transaction and closes it, so no other handle of this process is open meanwhile.
/// Commits skip fsync: the files are scratch, and the next open reads them back from
/// the page cache all the same.
enum TamperKit {
    static let headerSize = 49
    static let hashRange = 17..<49

    /// `body` in one write transaction over `events` and `meta`.
    static func edit<R>(_ path: String, _ body: (_ events: Database, _ meta: Database, Transaction) throws -> R) throws
        -> R
    {
        var options = EnvironmentOptions()
        options.maxDatabases = 16
        options.noSync = true
        let env = try Environment(path: path, options: options)
        let (events, meta) = try env.openDatabases { txn in
            (
                try env.openDatabase("events", create: false, in: txn),
                try env.openDatabase("meta", create: false, in: txn)
            )
        }
        return try env.write { txn in try body(events, meta, txn) }
    }

    /// Every event value, in seq order (index 0 is seq 1); the keys must run 1, 2, 3….
    static func values(_ path: String) throws -> [[UInt8]] {
        try edit(path) { events, _, txn in
            try txn.withCursor(events) { cursor in
                var out: [[UInt8]] = []
                var entry = try cursor.first()
                while let (key, value) = entry {
                    let seq = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
                    guard seq == UInt64(out.count + 1) else { throw HarnessError("events keys skip at seq \(seq)") }
                    out.append(Array(value))
                    entry = try cursor.next()
                }
                return out
            }
        }
    }

    /// Replaces the value of event `seq`.
    static func put(_ path: String, seq: UInt64, _ value: [UInt8]) throws {
        _ = try edit(path) { events, _, txn in try events.put(Tampering.seqKey(seq), value, in: txn) }
    }

    /// Removes events `seqs` (and nothing else: meta/head and the indexes stay).
    static func delete(_ path: String, seqs: [UInt64]) throws {
        try edit(path) { events, _, txn in
            for seq in seqs where try !events.delete(Tampering.seqKey(seq), in: txn) {
                throw HarnessError("no event seq \(seq) to delete")
            }
        }
    }

    /// hash(n) = SHA-256(hash(n−1) ‖ seq BE ‖ value[0..<17] ‖ value[49...]), computed
    /// here from the docs, independently of the store's own code.
    static func chainHash(previous: [UInt8], seq: UInt64, value: [UInt8]) -> [UInt8] {
        let key = Tampering.seqKey(seq)
        return previous.withUnsafeBytes { p in
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    SHA256.digest(
                        p, k, UnsafeRawBufferPointer(rebasing: v[0..<17]),
                        UnsafeRawBufferPointer(rebasing: v[headerSize...]))
                }
            }
        }
    }

    /// What an attacker with write access does after editing event `from`: recompute
    /// the stored hash of it and of every later event, and `meta/head`. Returns the
    /// new head hash.
    @discardableResult
    static func rewriteChain(_ path: String, from: UInt64) throws -> [UInt8] {
        let all = try values(path)
        var previous = from == 1 ? [UInt8](repeating: 0, count: 32) : Array(all[Int(from) - 2][hashRange])
        return try edit(path) { events, meta, txn in
            for seq in from...UInt64(all.count) {
                var value = all[Int(seq) - 1]
                let hash = chainHash(previous: previous, seq: seq, value: value)
                value.replaceSubrange(hashRange, with: hash)
                try events.put(Tampering.seqKey(seq), value, in: txn)
                previous = hash
            }
            try meta.put(Array("head".utf8), Tampering.seqKey(UInt64(all.count)) + previous, in: txn)
            return previous
        }
    }

    /// `count` valid event lines of every type, varied by `seed`: users, tasks, threads,
    /// device tokens, 410 deliveries (the `unregistered` index), times with microseconds.
    static func lines(count: Int, seed: UInt64) -> [String] {
        var rng = TamperRandom(seed: seed)
        let devices = (0..<6).map { _ in rng.token() }
        var notifications: [String] = []
        return (0..<count).map { i in
            let user = "u\(rng.next() % 7)"
            let task = Int(rng.next() % 40) + 1000
            let at =
                "2026-11-\(10 + rng.next() % 18)T\(10 + rng.next() % 10):"
                + "\(10 + rng.next() % 50):\(10 + rng.next() % 50)."
                + String(100_000 + rng.next() % 900_000) + "Z"
            switch rng.next() % 10 {
            case 0..<4:
                let id = String(format: "%08x-0000-4000-8000-%012d", UInt32(truncatingIfNeeded: seed), i)
                notifications.append(id)
                let device = rng.next() % 4 == 0 ? nil : devices[Int(rng.next() % 6)]
                return Line.notification(
                    id, user: user, device: device, thread: rng.next() % 5 == 0 ? nil : "task-\(task)", task: task,
                    at: at,
                    extra: ",\"topic\":\"com.example.app\"")
            case 4..<7:
                let actions = ["open", "dismiss", "complete", "cancel", "mark_in_progress", "uncancel", "delete"]
                let outcomes = ["ok", "ok", "ok", "rejected", "failed"]
                var extra = ""
                if let n = notifications.randomElement(using: &rng) { extra += ",\"notification_id\":\"\(n)\"" }
                if rng.next() % 2 == 0 { extra += ",\"thread_id\":\"task-\(task)\"" }
                return Line.action(
                    "act-\(seed)-\(i)", task: task, action: actions[Int(rng.next() % 7)],
                    outcome: outcomes[Int(rng.next() % 5)],
                    user: user, at: at, extra: extra)
            default:
                let gone = rng.next() % 4 == 0
                var extra = gone ? ",\"reason\":\"Unregistered\"" : ""
                if rng.next() % 2 == 0 { extra += ",\"device\":\"\(devices[Int(rng.next() % 6)])\"" }
                return Line.delivery(
                    "dlv-\(seed)-\(i)", user: user, notification: notifications.randomElement(using: &rng) ?? "nobody",
                    status: gone ? 410 : 200, at: at, extra: extra)
            }
        }
    }

    /// A store of `count` generated events, ingested in-process; every handle is closed
    /// when this returns.
    static func store(count: Int, seed: UInt64, in dir: TempDir) throws -> String {
        let input = try dir.write("events-\(seed).ndjson", lines: lines(count: count, seed: seed))
        let store = dir.file("store-\(seed)")
        let r = CLI.run(store: store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return store
    }
}

@Suite("tamper evidence: verify detects every change to stored events and names the first bad seq")
struct TamperTests {
    /// `verify --json`, in-process.
    func verify(_ store: String) throws -> (Outcome, JSON) {
        let r = CLI.run(store: store, ["verify", "--json"])
        return (r, try r.json())
    }

    /// How many single-byte changes the test below makes. 1,000 in the automated test
    /// (about 22 s in a debug build on 2 shared cores); `Scripts/tamper-test.sh` runs more by
    /// setting `TAMPER_ITERATIONS`.
    static var iterations: Int {
        ProcessInfo.processInfo.environment["TAMPER_ITERATIONS"].flatMap(Int.init) ?? 1000
    }

    @Test(
        "1,000 random one-byte changes in stored event values (header, hash, JSON): 1,000 detected, each at its seq"
    )
    func singleByteChanges() throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 400, seed: 7, in: dir)
        let pristine = try TamperKit.values(store)
        let headBefore = try CLI.head(store)
        #expect(pristine.count == 400)

        var rng = TamperRandom(seed: 0x7A3D_E5)
        var detected = 0
        var rightSeq = 0
        var byRegion = [0, 0, 0]  // header fields, hash, JSON
        var cleanChecks = 0
        var restore: (UInt64, [UInt8])?
        let started = Date()
        let n = TamperTests.iterations
        for iteration in 0..<n {
            let seq = UInt64.random(in: 1...UInt64(pristine.count), using: &rng)
            let original = pristine[Int(seq) - 1]
            let offset = Int.random(in: 0..<original.count, using: &rng)
            let flip = UInt8.random(in: 1...255, using: &rng)
            var changed = original
            changed[offset] ^= flip
            byRegion[offset < 17 ? 0 : offset < TamperKit.headerSize ? 1 : 2] += 1

            // One transaction restores the previous change and makes this one.
            try TamperKit.edit(store) { events, _, txn in
                if let (previousSeq, previousValue) = restore {
                    try events.put(Tampering.seqKey(previousSeq), previousValue, in: txn)
                }
                try events.put(Tampering.seqKey(seq), changed, in: txn)
            }
            restore = (seq, original)
            let (r, json) = try verify(store)
            // Every kind of change is caught at the changed seq itself: a header or JSON
            // byte changes the hash recomputed there; a hash byte no longer equals the
            // recomputed one (and verify chains on the recomputed hash, so later events
            // still match).
            if r.status == 1 && json["ok"]?.bool == false { detected += 1 }
            if json["first_bad_seq"]?.int == Int(seq) { rightSeq += 1 }
            #expect(r.status == 1, "iteration \(iteration): seq \(seq) offset \(offset) ^ \(flip) not detected: \(r)")
            #expect(
                json["first_bad_seq"]?.int == Int(seq),
                """
                iteration \(iteration): seq \(seq) offset \(offset) ^ \(flip) named \
                \(json["first_bad_seq"]?.description ?? "nothing")
                """
            )
            #expect(json["reason"]?.string?.isEmpty == false)
            if iteration % 100 == 0 {
                // The human form names the same seq.
                let text = CLI.run(store: store, ["verify"])
                #expect(text.status == 1 && text.stdout.contains("at seq \(seq):"), "\(text)")
            }

            if iteration % 10 == 9 {
                try TamperKit.put(store, seq: seq, original)
                restore = nil
                // Restored: no false alarm.
                let (clean, cleanJSON) = try verify(store)
                #expect(
                    clean.status == 0 && cleanJSON["ok"]?.bool == true,
                    "iteration \(iteration): restored store fails: \(clean)")
                cleanChecks += 1
            }
        }
        if let (seq, value) = restore { try TamperKit.put(store, seq: seq, value) }
        let seconds = Date().timeIntervalSince(started)
        print(
            "tamper: \(detected) of \(n) single-byte changes detected, first bad seq right in \(rightSeq); "
                + "offsets in header \(byRegion[0]), hash \(byRegion[1]), JSON \(byRegion[2]); "
                + "\(cleanChecks) clean re-verifies; \(String(format: "%.1f", seconds)) s")
        #expect(detected == n)
        #expect(rightSeq == n)
        // Uniform offsets still reach every part of the record.
        #expect(byRegion.allSatisfy { $0 >= n / 50 }, "\(byRegion)")
        #expect(try TamperKit.values(store) == pristine)
        #expect(try CLI.head(store) == headBefore)
        let (final, _) = try verify(store)
        #expect(final.status == 0)
    }

    @Test("a deleted event is named by its own seq (first, middle, last and 17 random ones)")
    func deletedEvents() throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 11, in: dir)
        let pristine = try TamperKit.values(store)
        var rng = TamperRandom(seed: 11)
        let seqs: [UInt64] = [1, 150, 300] + (0..<17).map { _ in UInt64.random(in: 1...300, using: &rng) }
        for seq in seqs {
            try TamperKit.delete(store, seqs: [seq])
            let (r, json) = try verify(store)
            #expect(r.status == 1, "deleted \(seq): \(r)")
            #expect(json["first_bad_seq"]?.int == Int(seq), "deleted \(seq): \(json)")
            try TamperKit.put(store, seq: seq, pristine[Int(seq) - 1])
        }
        #expect(try verify(store).0.status == 0)
    }

    @Test("two swapped events are named by the lower seq (adjacent, distant, first and last, 17 random pairs)")
    func swappedEvents() throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 13, in: dir)
        let pristine = try TamperKit.values(store)
        var rng = TamperRandom(seed: 13)
        var pairs: [(UInt64, UInt64)] = [(1, 2), (299, 300), (1, 300), (40, 200)]
        while pairs.count < 21 {
            let a = UInt64.random(in: 1...300, using: &rng)
            let b = UInt64.random(in: 1...300, using: &rng)
            if a != b { pairs.append((a, b)) }
        }
        for (a, b) in pairs {
            try Tampering.swapEvents(store, a, b)
            let (r, json) = try verify(store)
            #expect(r.status == 1, "swapped \(a), \(b): \(r)")
            #expect(json["first_bad_seq"]?.int == Int(min(a, b)), "swapped \(a), \(b): \(json)")
            try TamperKit.put(store, seq: a, pristine[Int(a) - 1])
            try TamperKit.put(store, seq: b, pristine[Int(b) - 1])
        }
        #expect(try verify(store).0.status == 0)
    }

    @Test(
        "changes at the edges of verify's seq ranges (each thread checks one against the prior hash) are named exactly"
    )
    func rangeEdges() throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 19, in: dir)
        let pristine = try TamperKit.values(store)
        let size = Verifier.rangeSize(events: 300)
        #expect(size < 150, "a 300-event store should be checked in several ranges, not \(size)-event ones")
        let edges = stride(from: size, to: 300, by: Int(size)).flatMap { [UInt64($0), UInt64($0) + 1] }
        for seq in edges {
            // A deleted event: the store holds one fewer, and the ranges are cut from that.
            try TamperKit.delete(store, seqs: [seq])
            var (r, json) = try verify(store)
            #expect(r.status == 1 && json["first_bad_seq"]?.int == Int(seq), "deleted \(seq): \(json)")
            try TamperKit.put(store, seq: seq, pristine[Int(seq) - 1])
            // A hash changed: the next range chains on the stored one, and still the
            // changed seq is named.
            var changed = pristine[Int(seq) - 1]
            changed[TamperKit.hashRange.lowerBound] ^= 0x01
            try TamperKit.put(store, seq: seq, changed)
            (r, json) = try verify(store)
            #expect(r.status == 1 && json["first_bad_seq"]?.int == Int(seq), "hash of \(seq) changed: \(json)")
            try TamperKit.put(store, seq: seq, pristine[Int(seq) - 1])
        }
        for (a, b) in zip(edges, edges.dropFirst()) where b == a + 1 {
            try Tampering.swapEvents(store, a, b)
            let (r, json) = try verify(store)
            #expect(r.status == 1 && json["first_bad_seq"]?.int == Int(a), "swapped \(a), \(b): \(json)")
            try TamperKit.put(store, seq: a, pristine[Int(a) - 1])
            try TamperKit.put(store, seq: b, pristine[Int(b) - 1])
        }
        let (clean, json) = try verify(store)
        #expect(clean.status == 0 && json["events"]?.int == 300)
    }

    @Test("an events key that is not 8 bytes is named where it sorts: after seq 100, before seq 1, after the last")
    func oddKeys() throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 23, in: dir)
        let cases: [([UInt8], Int)] = [(Tampering.seqKey(100) + [0], 101), ([0, 0, 0], 1), ([0xFF], 301)]
        for (key, named) in cases {
            _ = try TamperKit.edit(store) { events, _, txn in
                try events.put(key, Array(repeating: 7, count: 60), in: txn)
            }
            let (r, json) = try verify(store)
            #expect(r.status == 1 && json["first_bad_seq"]?.int == named, "key \(key): \(json)")
            #expect(json["reason"]?.string?.contains("\(key.count) bytes, not 8") == true, "key \(key): \(json)")
            try TamperKit.edit(store) { events, _, txn in _ = try events.delete(key, in: txn) }
        }
        #expect(try verify(store).0.status == 0)
    }

    @Test(
        "a truncated tail (last 1, 2, 10, 150, 299 events deleted, meta/head kept) is named by the first missing seq",
        arguments: [1, 2, 10, 150, 299])
    func truncatedTail(dropped: Int) throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 17, in: dir)
        let headBefore = try CLI.head(store)
        try TamperKit.delete(store, seqs: (UInt64(300 - dropped + 1)...300).map { $0 })
        let (r, json) = try verify(store)
        #expect(r.status == 1, "\(r)")
        #expect(json["ok"]?.bool == false)
        // The events that remain chain correctly; the recorded head still says seq 300,
        // so the first seq that is not what was appended is the first one missing.
        #expect(json["first_bad_seq"]?.int == 300 - dropped + 1, "\(json)")
        #expect(json["events"]?.int == 300 - dropped)
        #expect(try CLI.head(store) == headBefore, "head reads meta/head, which the truncation kept")
    }

    @Test(
        "a consistent whole-chain rewrite after one change passes verify, but head differs from the one noted before",
        arguments: [1, 137, 300] as [UInt64])
    func rewrittenChain(changed seq: UInt64) throws {
        let dir = try TempDir()
        let store = try TamperKit.store(count: 300, seed: 19, in: dir)
        let before = try CLI.head(store)
        let beforeText = CLI.run(store: store, ["head"]).stdout

        // The attacker's edit: a field stored verbatim, added before the
        // closing brace. No header field and no index depends on it, so only the
        // chain can tell.
        var value = try #require(try Tampering.value(store, seq: seq))
        #expect(value.last == UInt8(ascii: "}"))
        value.removeLast()
        value += Array(",\"note\":\"edited\"}".utf8)
        try TamperKit.put(store, seq: seq, value)
        #expect(CLI.run(store: store, ["verify", "--json"]).status == 1, "the edit alone is detected")

        let newHead = try TamperKit.rewriteChain(store, from: seq)
        let (r, json) = try verify(store)
        #expect(r.status == 0, "a consistent rewrite verifies (this is what head is for): \(r)")
        #expect(json["ok"]?.bool == true)
        let after = try CLI.head(store)
        #expect(after["seq"] == before["seq"])
        #expect(after["hash"]?.string == SHA256.hex(newHead))
        #expect(after["hash"] != before["hash"], "head shows the rewrite")
        #expect(CLI.run(store: store, ["head"]).stdout != beforeText)
        #expect(json["head"] == after)
    }

    @Test(
        "0 false alarms: 50 clean stores of 1 to 400 events, different seeds, all verify ok with the head head reports")
    func cleanStores() throws {
        let dir = try TempDir()
        var rng = TamperRandom(seed: 23)
        var passed = 0
        for i in 0..<50 {
            let count = i == 0 ? 1 : i == 1 ? 2 : Int.random(in: 3...400, using: &rng)
            let store = try TamperKit.store(count: count, seed: 1000 + UInt64(i), in: dir)
            let (r, json) = try verify(store)
            #expect(r.status == 0, "store \(i) (\(count) events): \(r)")
            #expect(json["ok"]?.bool == true)
            #expect(json["events"]?.int == count)
            #expect(json["head"] == (try CLI.head(store)))
            // The chain as the docs define it, recomputed here, ends at the same hash.
            var previous = [UInt8](repeating: 0, count: 32)
            for (n, value) in try TamperKit.values(store).enumerated() {
                previous = TamperKit.chainHash(previous: previous, seq: UInt64(n + 1), value: value)
                #expect(Array(value[TamperKit.hashRange]) == previous)
            }
            #expect(json["head"]?["hash"]?.string == SHA256.hex(previous))
            if r.status == 0 { passed += 1 }
            try FileManager.default.removeItem(atPath: store)
        }
        #expect(passed == 50)
    }
}
