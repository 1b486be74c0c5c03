import LMDBKit
import Testing

@Suite("Database")
struct DatabaseTests {
    @Test("a put with noOverwrite on an existing key returns false and keeps the old value")
    func noOverwrite() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            let (first, second, third) = try env.write { txn throws in
                (
                    try db.put(bytes("k"), bytes("first"), flags: .noOverwrite, in: txn),
                    try db.put(bytes("k"), bytes("second"), flags: .noOverwrite, in: txn),
                    try db.put(bytes("other"), bytes("x"), flags: .noOverwrite, in: txn)
                )
            }
            #expect(first)
            #expect(!second)
            #expect(third)
            #expect(try env.read { try stored(db, "k", in: $0) } == "first")
        }
    }

    @Test("a plain put overwrites an existing key")
    func plainPutOverwrites() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn throws in
                #expect(try db.put(bytes("k"), bytes("a"), in: txn))
                #expect(try db.put(bytes("k"), bytes("b"), in: txn))
            }
            #expect(try env.read { try stored(db, "k", in: $0) } == "b")
        }
    }

    @Test("puts with append in ascending key order all store")
    func appendInOrder() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn throws in
                for i in UInt64(1)...100 {
                    #expect(try db.put(be64(i), bytes("v\(i)"), flags: .append, in: txn))
                }
            }
            try env.read { txn throws in
                #expect(try db.statistics(in: txn).entries == 100)
                #expect(try db.get(be64(57), in: txn).map(text) == "v57")
            }
        }
    }

    @Test("a put with append of a key that sorts before the last key throws an LMDB error")
    func appendOutOfOrderThrows() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn throws in
                try db.put(be64(5), bytes("five"), flags: .append, in: txn)
                try db.put(be64(9), bytes("nine"), flags: .append, in: txn)
            }
            let smaller = #expect(throws: LMDBError.self) {
                try env.write { txn in _ = try db.put(be64(7), bytes("seven"), flags: .append, in: txn) }
            }
            #expect(smaller?.description.contains("mdb_put") == true)
            // Appending the last key again is out of order too: it must not silently do nothing.
            #expect(throws: LMDBError.self) {
                try env.write { txn in _ = try db.put(be64(9), bytes("NINE"), flags: .append, in: txn) }
            }
            try env.read { txn throws in
                #expect(try db.get(be64(7), in: txn) == nil)
                #expect(try db.get(be64(9), in: txn).map(text) == "nine")
                #expect(try db.statistics(in: txn).entries == 2)
            }
        }
    }

    @Test("deleting a key removes it and deleting it again reports it absent")
    func delete() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn throws in
                try db.put(bytes("a"), bytes("1"), in: txn)
                try db.put(bytes("b"), bytes("2"), in: txn)
            }
            #expect(try env.write { try db.delete(bytes("a"), in: $0) })
            #expect(try !env.write { try db.delete(bytes("a"), in: $0) })
            #expect(try !env.write { try db.delete(bytes("never"), in: $0) })
            try env.read { txn throws in
                #expect(try stored(db, "a", in: txn) == nil)
                #expect(try stored(db, "b", in: txn) == "2")
            }
        }
    }

    @Test("deleting one value of a duplicate-sort key keeps its other values")
    func deleteOneDuplicate() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir, flags: [.duplicateSort, .duplicateFixed])
            try env.write { txn throws in
                for v in UInt64(1)...3 { try db.put(bytes("k"), be64(v), in: txn) }
            }
            #expect(try env.write { try db.delete(bytes("k"), value: be64(2), in: $0) })
            #expect(try !env.write { try db.delete(bytes("k"), value: be64(2), in: $0) })
            let left = try env.read { txn throws in
                try txn.withCursor(db) { cursor -> [UInt64] in
                    var out: [UInt64] = []
                    var entry = try bytes("k").withUnsafeBytes { try cursor.find($0) }
                    while let e = entry {
                        out.append(readBE64(e.value))
                        entry = try cursor.nextDuplicate()
                    }
                    return out
                }
            }
            #expect(left == [1, 3])
        }
    }

    @Test("a duplicate-sort put with noDuplicateData of a value already there returns false")
    func noDuplicateData() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir, flags: [.duplicateSort, .duplicateFixed])
            try env.write { txn throws in
                #expect(try db.put(bytes("k"), be64(1), flags: .noDuplicateData, in: txn))
                #expect(try !db.put(bytes("k"), be64(1), flags: .noDuplicateData, in: txn))
                #expect(try db.put(bytes("k"), be64(2), flags: .noDuplicateData, in: txn))
            }
            #expect(try env.read { try db.statistics(in: $0).entries } == 2)
        }
    }

    @Test("statistics count entries and the pages a database occupies")
    func statistics() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            let empty = try env.read { try db.statistics(in: $0) }
            #expect(empty.entries == 0)
            #expect(empty.bytes == 0)
            try env.write { txn throws in
                for i in UInt64(0)..<200 { try db.put(be64(i), bytes("value \(i)"), in: txn) }
                // Far larger than a page: it goes to overflow pages.
                try db.put(bytes("big"), [UInt8](repeating: 7, count: 20_000), in: txn)
            }
            let stats = try env.read { try db.statistics(in: $0) }
            #expect(stats.entries == 201)
            #expect(stats.pageSize == env.pageSize)
            #expect(stats.depth >= 1)
            #expect(stats.leafPages >= 1)
            #expect(stats.overflowPages * stats.pageSize >= 20_000)
            #expect(stats.bytes == (stats.branchPages + stats.leafPages + stats.overflowPages) * stats.pageSize)
        }
    }

    @Test("databases of one environment are separate key spaces")
    func separateDatabases() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let (a, b) = try env.openDatabases { txn in
                (try env.openDatabase("a", create: true, in: txn), try env.openDatabase("b", create: true, in: txn))
            }
            try env.write { txn throws in
                try a.put(bytes("k"), bytes("in a"), in: txn)
                try b.put(bytes("k"), bytes("in b"), in: txn)
            }
            try env.read { txn throws in
                #expect(try stored(a, "k", in: txn) == "in a")
                #expect(try stored(b, "k", in: txn) == "in b")
            }
            #expect(b.flags == [])
        }
    }

    @Test("opening a database that does not exist without create fails")
    func openMissingDatabase() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let error = #expect(throws: LMDBError.self) {
                try env.openDatabases { txn in try env.openDatabase("nope", create: false, in: txn) }
            }
            #expect(error?.code == -30798)  // MDB_NOTFOUND
            #expect(error?.description.contains("nope") == true)
        }
    }
}
