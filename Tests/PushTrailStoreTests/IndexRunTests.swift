import LMDBKit
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

@Suite("IndexRun: index entries filed later, in key order")
struct IndexRunTests {
    /// Keys that order differently by their first 8 or 16 bytes, by what follows, and by
    /// length alone (a key shorter than 16 bytes is padded with zeros in the prefix the
    /// sort compares, so "ab" and "ab\0" tie there). LMDB takes no empty key.
    static let awkwardKeys: [[UInt8]] = [
        [0], [0, 0], Array("a".utf8), Array("a".utf8) + [0], Array("ab".utf8), Array("ab".utf8) + [0],
        Array("abcdefgh".utf8), Array("abcdefgh".utf8) + [0], Array("abcdefghi".utf8), Array("abcdefgh\u{7f}".utf8),
        [0xFF], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], Array("task-31523".utf8),
        Array("task-3152".utf8),
        Array("u_ximena_2751".utf8), Array("u_ximena_275".utf8), Array("0f8fad5b-d9cb-469f-a165-70867728950e".utf8),
        Array("0f8fad5b-d9cb-469f-a165-70867728950f".utf8), Array("0f8fad5b-d9cb-469f".utf8),
        Array("abcdefghijklmno".utf8), Array("abcdefghijklmnop".utf8), Array("abcdefghijklmnop".utf8) + [0],
        Array("abcdefghijklmnopq".utf8), Array("abcdefghijklmnop".utf8) + [0, 0x80],
    ]

    /// Every (key, value) of `db` in the order LMDB keeps them.
    static func entries(_ env: Environment, _ db: Database) throws -> [[UInt8]] {
        try env.read { txn in
            var all: [[UInt8]] = []
            try txn.withCursor(db) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry {
                    all.append(Array(key) + [0xAA] + Array(value))
                    entry = try cursor.next()
                }
            }
            return all
        }
    }

    /// Runs `body` with a new environment holding one plain database.
    static func withPlainDatabase(_ body: (Environment, Database) throws -> Void) throws {
        try withTemporaryDirectory { dir in
            let env = try Environment(path: dir)
            try body(env, try env.openDatabases { txn in try env.openDatabase("ids", create: true, in: txn) })
        }
    }

    /// Files `entries` (key, seq) as new keys of the plain database `db`: one run, one
    /// transaction.
    static func fileNewKeys(_ entries: [([UInt8], UInt64)], into db: Database, of env: Environment) throws {
        try env.write { txn in
            try txn.withCursor(db) { cursor in
                let run = IndexRun(lookup: true)
                for (key, seq) in entries { key.withUnsafeBytes { run.add($0, seq: seq, hash: KeyFilter.hash($0)) } }
                try run.file(through: cursor, duplicates: false)
            }
        }
    }

    @Test("a duplicate-sort index filed in runs holds exactly what one put per event makes, in the same order")
    func sameAsOneByOne() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment(path: dir)
            let (direct, runs) = try env.openDatabases { txn in
                (
                    try env.openDatabase("direct", flags: [.duplicateSort, .duplicateFixed], create: true, in: txn),
                    try env.openDatabase("runs", flags: [.duplicateSort, .duplicateFixed], create: true, in: txn)
                )
            }
            var rng = SplitMix(seed: 5)
            // Several transactions, each over what the ones before stored; runs filed
            // every few entries, and a last one at the end.
            var seq: UInt64 = 0
            for round in 0..<4 {
                try env.write { txn in
                    try txn.withCursor(direct) { directCursor in
                        try txn.withCursor(runs) { runCursor in
                            let run = IndexRun()
                            for n in 0..<3000 {
                                seq += 1
                                let key =
                                    n % 3 == 0
                                    ? Self.awkwardKeys[Int(rng.next() % UInt64(Self.awkwardKeys.count))]
                                    : Array("key-\(rng.next() % 400)".utf8)
                                try key.withUnsafeBytes { k in
                                    _ = try withUnsafeBytes(of: seq.bigEndian) {
                                        try directCursor.put(k, $0, flags: .appendDuplicate)
                                    }
                                    run.add(k, seq: seq)
                                }
                                if n % (500 + round * 300) == 499 { try run.file(through: runCursor, duplicates: true) }
                            }
                            try run.file(through: runCursor, duplicates: true)
                            #expect(run.count == 0)
                        }
                    }
                }
            }
            let expected = try Self.entries(env, direct)
            #expect(expected.count == 12_000)
            #expect(try Self.entries(env, runs) == expected)
        }
    }

    @Test(
        "a plain database filed in runs holds every new key once; a key filed twice is an error, not a silent overwrite"
    )
    func uniqueKeys() throws {
        try Self.withPlainDatabase { env, db in
            var keys = Self.awkwardKeys + (0..<2000).map { Array("a-4cb8e3da-\($0)".utf8) }
            var rng = SplitMix(seed: 9)
            keys.shuffle(using: &rng)
            try Self.fileNewKeys(keys.enumerated().map { ($0.element, UInt64($0.offset + 1)) }, into: db, of: env)
            let stored = try Self.entries(env, db)
            let expected = keys.enumerated().map { ($0.element, UInt64($0.offset + 1)) }
                .sorted { $0.0.lexicographicallyPrecedes($1.0) }
                .map { $0.0 + [0xAA] + withUnsafeBytes(of: $0.1.bigEndian) { Array($0) } }
            #expect(stored == expected)

            // The same key again, in a later transaction: refused, and nothing changes.
            #expect(throws: StoreError.self) { try Self.fileNewKeys([(keys[7], 99_999)], into: db, of: env) }
            #expect(try Self.entries(env, db) == stored)
        }
    }

    @Test(
        "a run with lookup finds every key added since it was last filed, whatever its table has grown to, and no other"
    )
    func lookup() throws {
        try Self.withPlainDatabase { env, db in
            let run = IndexRun(lookup: true)
            func seq(_ key: [UInt8]) -> UInt64? { key.withUnsafeBytes { run.seq(of: $0, hash: KeyFilter.hash($0)) } }
            // 5,000 keys: the table starts at 1,024 slots and doubles while kept half full.
            let keys = Self.awkwardKeys + (0..<5000).map { Array("n-\($0)".utf8) }
            for (n, key) in keys.enumerated() {
                key.withUnsafeBytes { run.add($0, seq: UInt64(n + 1), hash: KeyFilter.hash($0)) }
            }
            #expect(keys.enumerated().allSatisfy { seq($0.element) == UInt64($0.offset + 1) })
            // Absent keys, some a prefix or an extension of a present one.
            for absent in [Array("n-5000".utf8), Array("n-".utf8), Array("n-10".utf8) + [0], Array("abcdefg".utf8), []]
            {
                #expect(seq(absent) == nil, "\(absent)")
            }
            try env.write { txn in try txn.withCursor(db) { try run.file(through: $0, duplicates: false) } }
            #expect(keys.allSatisfy { seq($0) == nil })
            Array("again".utf8).withUnsafeBytes { run.add($0, seq: 7, hash: KeyFilter.hash($0)) }
            #expect(seq(Array("again".utf8)) == 7)
        }
    }
}

/// A small deterministic generator for shuffles and picks.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return KeyFilter.mix(state)
    }
}
