import LMDBKit
import Testing

@Suite("Cursor")
struct CursorTests {
    /// A plain database holding a, b, d, e (values A, B, D, E).
    func lettersDatabase(_ dir: String) throws -> (Environment, Database) {
        let (env, db) = try openEnvironment(dir)
        try env.write { txn throws in
            // Put out of order: the database sorts them.
            for k in ["d", "a", "e", "b"] { try db.put(bytes(k), bytes(k.uppercased()), in: txn) }
        }
        return (env, db)
    }

    @Test("first, next, last and previous walk the keys in byte order")
    func walk() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try lettersDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try key(cursor.first()) == "a")
                    #expect(try value(cursor.current()) == "A")
                    #expect(try key(cursor.next()) == "b")
                    #expect(try key(cursor.next()) == "d")
                    #expect(try key(cursor.next()) == "e")
                    #expect(try cursor.next() == nil)
                    #expect(try key(cursor.last()) == "e")
                    #expect(try value(cursor.previous()) == "D")
                    #expect(try key(cursor.previous()) == "b")
                    #expect(try key(cursor.previous()) == "a")
                    #expect(try cursor.previous() == nil)
                }
            }
        }
    }

    @Test("a cursor on an empty database finds nothing")
    func emptyDatabase() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try cursor.first() == nil)
                    #expect(try cursor.last() == nil)
                    #expect(try bytes("a").withUnsafeBytes { try cursor.seek($0) } == nil)
                }
            }
        }
    }

    @Test("seek lands on the first key at or after the one given")
    func seek() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try lettersDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try key(bytes("b").withUnsafeBytes { try cursor.seek($0) }) == "b")
                    #expect(try key(bytes("c").withUnsafeBytes { try cursor.seek($0) }) == "d")
                    #expect(try key(bytes("0").withUnsafeBytes { try cursor.seek($0) }) == "a")
                    #expect(try bytes("f").withUnsafeBytes { try cursor.seek($0) } == nil)
                    // The cursor continues from where seek put it.
                    #expect(try key(bytes("c").withUnsafeBytes { try cursor.seek($0) }) == "d")
                    #expect(try key(cursor.next()) == "e")
                }
            }
        }
    }

    @Test("find lands only on exactly the key given")
    func find() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try lettersDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    let found = try bytes("d").withUnsafeBytes { try cursor.find($0) }
                    #expect(key(found) == "d")
                    #expect(value(found) == "D")
                    #expect(try bytes("c").withUnsafeBytes { try cursor.find($0) } == nil)
                    #expect(try bytes("dd").withUnsafeBytes { try cursor.find($0) } == nil)
                }
            }
        }
    }

    @Test("a cursor put stores the entry and append through a cursor keeps order")
    func cursorPut() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn throws in
                try txn.withCursor(db) { cursor throws in
                    for i in UInt64(1)...10 {
                        let ok = try be64(i).withUnsafeBytes { k in
                            try bytes("v\(i)").withUnsafeBytes { v in try cursor.put(k, v, flags: .append) }
                        }
                        #expect(ok)
                    }
                }
            }
            try env.read { txn throws in
                #expect(try db.statistics(in: txn).entries == 10)
                #expect(try db.get(be64(10), in: txn).map(text) == "v10")
            }
        }
    }

    @Test("a cursor put with append out of order throws an LMDB error")
    func cursorAppendOutOfOrder() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn in _ = try db.put(be64(9), bytes("nine"), in: txn) }
            #expect(throws: LMDBError.self) {
                try env.write { txn throws in
                    try txn.withCursor(db) { cursor throws in
                        try be64(3).withUnsafeBytes { k in
                            try bytes("three").withUnsafeBytes { v in try cursor.put(k, v, flags: .append) }
                        }
                    }
                }
            }
            #expect(try env.read { try db.get(be64(3), in: $0) } == nil)
        }
    }
}

@Suite("Duplicate-sort cursor")
struct DuplicateCursorTests {
    /// Key "k" holds 1...1000 (more than one page of 8-byte values), "j" holds only 7,
    /// "m" holds 10, 20, 30; values are 8-byte big-endian numbers.
    func duplicatesDatabase(_ dir: String) throws -> (Environment, Database) {
        let (env, db) = try openEnvironment(dir, name: "dups", flags: [.duplicateSort, .duplicateFixed])
        try env.write { txn throws in
            // Inserted in scrambled order: the database sorts values within a key.
            for v in (UInt64(1)...1000).reversed() { try db.put(bytes("k"), be64(v), in: txn) }
            try db.put(bytes("j"), be64(7), in: txn)
            for v: UInt64 in [30, 10, 20] { try db.put(bytes("m"), be64(v), in: txn) }
        }
        #expect(db.flags == [.duplicateSort, .duplicateFixed])
        return (env, db)
    }

    /// Every value of `name` read page by page with `multiple` / `nextMultiple`.
    func packedValues(_ cursor: Cursor, _ name: String) throws -> [UInt64] {
        guard try bytes(name).withUnsafeBytes({ try cursor.find($0) }) != nil else { return [] }
        var out: [UInt64] = []
        var page = try cursor.multiple()
        while let (_, values) = page {
            #expect(values.count % 8 == 0)
            for offset in stride(from: 0, to: values.count, by: 8) { out.append(readBE64(values, at: offset)) }
            page = try cursor.nextMultiple()
        }
        return out
    }

    @Test("first and next duplicate walk one key's values in sorted order")
    func walkDuplicates() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try key(bytes("m").withUnsafeBytes { try cursor.find($0) }) == "m")
                    #expect(try cursor.firstDuplicate().map { readBE64($0.value) } == 10)
                    #expect(try cursor.nextDuplicate().map { readBE64($0.value) } == 20)
                    #expect(try cursor.nextDuplicate().map { readBE64($0.value) } == 30)
                    #expect(try cursor.nextDuplicate() == nil)
                    #expect(try cursor.lastDuplicate().map { readBE64($0.value) } == 30)
                    #expect(try cursor.previousDuplicate().map { readBE64($0.value) } == 20)
                }
            }
        }
    }

    @Test("find lands on a key's first value")
    func findFirstValue() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    let entry = try bytes("k").withUnsafeBytes { try cursor.find($0) }
                    #expect(entry.map { readBE64($0.value) } == 1)
                }
            }
        }
    }

    @Test("duplicate count gives how many values the current key has")
    func duplicateCount() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    _ = try bytes("k").withUnsafeBytes { try cursor.find($0) }
                    #expect(try cursor.duplicateCount() == 1000)
                    _ = try bytes("j").withUnsafeBytes { try cursor.find($0) }
                    #expect(try cursor.duplicateCount() == 1)
                    _ = try bytes("m").withUnsafeBytes { try cursor.find($0) }
                    #expect(try cursor.duplicateCount() == 3)
                }
                #expect(try db.statistics(in: txn).entries == 1004)
            }
        }
    }

    @Test("next key skips the remaining values of the current key")
    func nextKey() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try key(cursor.first()) == "j")
                    let k = try cursor.nextKey()
                    #expect(key(k) == "k")
                    #expect(k.map { readBE64($0.value) } == 1)
                    _ = try cursor.nextDuplicate()
                    let m = try cursor.nextKey()
                    #expect(key(m) == "m")
                    #expect(m.map { readBE64($0.value) } == 10)
                    #expect(try cursor.nextKey() == nil)
                    #expect(try key(cursor.previousKey()) == "k")
                }
            }
        }
    }

    @Test("seeking a key and value lands on the first value at or after it under that key")
    func seekKeyAndValue() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    func seek(_ k: String, _ v: UInt64) throws -> UInt64? {
                        try bytes(k).withUnsafeBytes { kb in
                            try be64(v).withUnsafeBytes { vb in try cursor.seek(kb, value: vb) }
                        }.map { readBE64($0.value) }
                    }
                    #expect(try seek("m", 20) == 20)
                    #expect(try seek("m", 15) == 20)
                    #expect(try seek("m", 31) == nil)
                    #expect(try seek("j", 1) == 7)
                    #expect(try seek("zz", 1) == nil)
                }
            }
        }
    }

    @Test("multiple and next multiple return every value of a key packed, page by page")
    func multiplePages() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try packedValues(cursor, "k") == Array(1...1000))
                    #expect(try packedValues(cursor, "m") == [10, 20, 30])
                }
            }
        }
    }

    @Test("multiple returns the single value of a key that has only one")
    func multipleSingleValue() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try packedValues(cursor, "j") == [7])
                }
            }
        }
    }

    @Test(
        "append duplicates adds many values at once: to a new key, a key with one value, one whose values fill pages"
    )
    func appendDuplicates() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try duplicatesDatabase(dir)
            func packed(_ values: [UInt64]) -> [UInt8] { values.flatMap { be64($0) } }
            try env.write { txn throws in
                try txn.withCursor(db) { cursor throws in
                    // "j" holds one value inline; 3,000 more turn it into a tree of its own.
                    try bytes("j").withUnsafeBytes { k in
                        try packed(Array(8...3007)).withUnsafeBytes { try cursor.appendDuplicates(k, $0, size: 8) }
                    }
                    try bytes("k").withUnsafeBytes { k in
                        try packed([1001, 1002]).withUnsafeBytes { try cursor.appendDuplicates(k, $0, size: 8) }
                    }
                    try bytes("new").withUnsafeBytes { k in
                        try packed([5]).withUnsafeBytes { try cursor.appendDuplicates(k, $0, size: 8) }
                    }
                    try bytes("m").withUnsafeBytes { k in
                        try packed(Array(31...40)).withUnsafeBytes { try cursor.appendDuplicates(k, $0, size: 8) }
                    }
                }
            }
            try env.read { txn throws in
                try txn.withCursor(db) { cursor throws in
                    #expect(try packedValues(cursor, "j") == Array(7...3007))
                    #expect(try packedValues(cursor, "k") == Array(1...1002))
                    #expect(try packedValues(cursor, "new") == [5])
                    #expect(try packedValues(cursor, "m") == [10, 20, 30] + Array(31...40))
                }
            }
            // A value that does not sort after the key's last is refused.
            #expect(throws: LMDBError.self) {
                try env.write { txn throws in
                    try txn.withCursor(db) { cursor throws in
                        try bytes("m").withUnsafeBytes { k in
                            try packed([35, 50]).withUnsafeBytes { try cursor.appendDuplicates(k, $0, size: 8) }
                        }
                    }
                }
            }
            #expect(
                try env.read { txn in try txn.withCursor(db) { try packedValues($0, "m") } } == [10, 20, 30]
                    + Array(31...40))
        }
    }
}

/// Deleting through a cursor as it walks (the recent tier's folds rely on it): the next
/// move gives the entry after the one deleted, across page boundaries too.
@Suite("Deleting through a cursor")
struct CursorDeleteTests {
    @Test("after deleteCurrent, nextKey gives the key after the deleted one", arguments: [false, true])
    func deleteWhileWalking(duplicates: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let flags: DatabaseFlags = duplicates ? [.duplicateSort, .duplicateFixed] : []
            let (env, db) = try openEnvironment(dir, name: "walk", flags: flags)
            // 3,000 keys over many pages; with duplicates, some keys hold many values.
            let keys = (0..<3000).map { String(format: "key-%05d", $0) }
            try env.write { txn throws in
                for (i, k) in keys.enumerated() {
                    for v in 0..<(duplicates && i % 7 == 0 ? 600 : 1) { try db.put(bytes(k), be64(UInt64(v)), in: txn) }
                }
            }
            // Every other run of three keys deleted while walking; the others walked past.
            var seen: [String] = []
            try env.write { txn throws in
                let cursor = try txn.writeCursor(db)
                var entry = try cursor.first()
                var i = 0
                while let (k, _) = entry {
                    seen.append(text(k))
                    if (i / 3) % 2 == 0 { try cursor.deleteCurrent(allDuplicates: duplicates) }
                    entry = try cursor.nextKey()
                    i += 1
                }
            }
            #expect(seen == keys)
            let left = try env.read { txn throws in
                try txn.withCursor(db) { cursor throws -> [String] in
                    var out: [String] = []
                    var entry = try cursor.first()
                    while let (k, _) = entry {
                        out.append(text(k))
                        entry = try cursor.nextKey()
                    }
                    return out
                }
            }
            #expect(left == keys.enumerated().filter { ($0.offset / 3) % 2 == 1 }.map(\.element))
        }
    }
}
