import Foundation
import LMDBKit
import Testing

import class TestSupport.Messages
import func TestSupport.onThread

@Suite("Environment")
struct EnvironmentTests {
    @Test("an environment opens in an empty directory and creates data.mdb and lock.mdb")
    func opensInEmptyDirectory() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            #expect(env.path == dir)
            #expect(!env.isReadOnly)
            #expect(FileManager.default.fileExists(atPath: dir + "/data.mdb"))
            #expect(FileManager.default.fileExists(atPath: dir + "/lock.mdb"))
            #expect(env.pageSize >= 4096)
            #expect(env.mapSize == EnvironmentOptions().mapSize)
        }
    }

    @Test("a committed write is visible to a later read")
    func writeThenRead() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            let before = env.lastTransactionID
            try env.write { txn throws in
                #expect(txn.isWritable)
                try db.put(bytes("alpha"), bytes("one"), in: txn)
                try db.put(bytes("beta"), bytes("two"), in: txn)
            }
            #expect(env.lastTransactionID > before)
            try env.read { txn throws in
                #expect(!txn.isWritable)
                #expect(try stored(db, "alpha", in: txn) == "one")
                #expect(try stored(db, "beta", in: txn) == "two")
                #expect(try stored(db, "gamma", in: txn) == nil)
            }
        }
    }

    @Test("a write is durable across closing and reopening the environment")
    func durableAcrossReopen() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let (env, db) = try openEnvironment(dir)
                try env.write { txn in _ = try db.put(bytes("k"), bytes("v"), in: txn) }
            }
            var options = EnvironmentOptions()
            options.readOnly = true
            let env = try Environment(path: dir, options: options)
            #expect(env.isReadOnly)
            let db = try env.openDatabases { txn in try env.openDatabase("kv", create: false, in: txn) }
            #expect(try env.read { try stored(db, "k", in: $0) } == "v")
        }
    }

    @Test("a write whose body throws stores nothing and rethrows the error")
    func abortOnThrow() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn in _ = try db.put(bytes("kept"), bytes("1"), in: txn) }
            #expect(throws: Boom.self) {
                try env.write { txn throws in
                    try db.put(bytes("lost"), bytes("2"), in: txn)
                    try db.put(bytes("kept"), bytes("changed"), in: txn)
                    throw Boom()
                }
            }
            try env.read { txn throws in
                #expect(try stored(db, "lost", in: txn) == nil)
                #expect(try stored(db, "kept", in: txn) == "1")
            }
        }
    }

    @Test("the value returned by a write body is handed back after the commit")
    func writeReturnsResult() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            let result = try env.write { txn -> Int in
                try db.put(bytes("k"), bytes("v"), in: txn)
                return 42
            }
            #expect(result == 42)
        }
    }

    @Test("a read transaction begun before a write keeps seeing its snapshot")
    func snapshotIsolation() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn in _ = try db.put(bytes("k"), bytes("old"), in: txn) }
            try env.read { snapshot throws in
                #expect(try stored(db, "k", in: snapshot) == "old")
                try env.write { txn throws in
                    try db.put(bytes("k"), bytes("new"), in: txn)
                    try db.put(bytes("added"), bytes("x"), in: txn)
                }
                #expect(try stored(db, "k", in: snapshot) == "old")
                #expect(try stored(db, "added", in: snapshot) == nil)
                #expect(try db.statistics(in: snapshot).entries == 1)
            }
            try env.read { txn throws in
                #expect(try stored(db, "k", in: txn) == "new")
                #expect(try stored(db, "added", in: txn) == "x")
            }
        }
    }

    @Test("a read transaction sees the id of the snapshot it reads")
    func transactionID() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir)
            try env.write { txn in _ = try db.put(bytes("k"), bytes("v"), in: txn) }
            let id = try env.read { $0.id }
            #expect(id == env.lastTransactionID)
        }
    }

    @Test("clearing stale readers on a clean environment clears none")
    func clearStaleReadersOnCleanEnvironment() throws {
        try withTemporaryDirectory { dir throws in
            let (env, _) = try openEnvironment(dir)
            #expect(try env.clearStaleReaders() == 0)
            try env.read { _ throws in #expect(try env.clearStaleReaders() == 0) }
        }
    }

    @Test("opening a directory that does not exist fails with an error naming mdb_env_open")
    func openMissingDirectory() throws {
        try withTemporaryDirectory { dir throws in
            let missing = dir + "/no-such-dir"
            let error = #expect(throws: LMDBError.self) { try Environment(path: missing) }
            #expect(error?.code == ENOENT)
            #expect(error?.operation.contains("mdb_env_open") == true)
            #expect(error?.description.contains("mdb_env_open") == true)
            #expect(error?.description.contains(missing) == true)
            #expect(error?.description.contains(String(cString: strerror(ENOENT))) == true)
        }
    }

    @Test("an LMDB error describes its operation and the library's message")
    func errorDescription() {
        let notFound = LMDBError(code: -30798, operation: "mdb_get")  // MDB_NOTFOUND
        #expect(notFound.description.hasPrefix("mdb_get: "))
        #expect(notFound.description.contains("MDB_NOTFOUND"))
        let errno = LMDBError(code: EACCES, operation: "mdb_env_open /x")
        #expect(errno.description == "mdb_env_open /x: \(String(cString: strerror(EACCES)))")
    }

    @Test("LMDB error predicates recognise their return codes")
    func errorPredicates() {
        #expect(LMDBError(code: -30792, operation: "put").isMapFull)  // MDB_MAP_FULL
        #expect(LMDBError(code: -30785, operation: "begin").isMapResized)  // MDB_MAP_RESIZED
        #expect(LMDBError(code: -30793, operation: "open").isCorruption)  // MDB_INVALID
        #expect(LMDBError(code: -30796, operation: "get").isCorruption)  // MDB_CORRUPTED
        #expect(LMDBError(code: -30799, operation: "put").isKeyExists)  // MDB_KEYEXIST
        let other = LMDBError(code: EIO, operation: "x")
        #expect(!other.isMapFull && !other.isMapResized && !other.isCorruption && !other.isKeyExists)
    }
}

@Suite("Map growth")
struct MapGrowthTests {
    static let tinyMap = 64 << 10

    func tinyOptions() -> EnvironmentOptions {
        var options = EnvironmentOptions()
        options.mapSize = MapGrowthTests.tinyMap
        options.noSync = true  // the map is under test, not durability
        return options
    }

    /// A recognisable value for item `i`: its number, then a fill byte that depends on it.
    func payload(_ i: Int, size: Int) -> [UInt8] {
        var value = [UInt8](repeating: UInt8(truncatingIfNeeded: i &* 7 &+ 1), count: size)
        value.replaceSubrange(0..<8, with: be64(UInt64(i)))
        return value
    }

    /// How many of items `0..<count` do not read back as written.
    func mismatches(_ env: Environment, _ db: Database, count: Int, size: Int) throws -> Int {
        try env.read { txn throws in
            try (0..<count).filter { i in
                try db.get(be64(UInt64(i)), in: txn).map { Array($0) } != payload(i, size: size)
            }.count
        }
    }

    @Test("several MiB written in one transaction into a 64 KiB map grow the map and all read back")
    func oneLargeTransaction() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir, options: tinyOptions())
            #expect(env.mapSize == MapGrowthTests.tinyMap)
            let count = 512
            let size = 8 << 10  // 4 MiB in all
            var runs = 0
            try env.write { txn throws in
                runs += 1
                for i in 0..<count {
                    try db.put(be64(UInt64(i)), payload(i, size: size), in: txn)
                }
            }
            #expect(runs > 1, "the body should have been retried after the map grew")
            #expect(env.mapSize >= count * size)
            #expect(try env.read { try db.statistics(in: $0).entries } == count)
            #expect(try mismatches(env, db, count: count, size: size) == 0)
        }
    }

    @Test("many small transactions into a 64 KiB map grow the map and all read back")
    func manySmallTransactions() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir, options: tinyOptions())
            let transactions = 96
            let perTransaction = 8
            let size = 8 << 10  // 6 MiB in all
            for t in 0..<transactions {
                try env.write { txn throws in
                    for j in 0..<perTransaction {
                        let i = t * perTransaction + j
                        try db.put(be64(UInt64(i)), payload(i, size: size), in: txn)
                    }
                }
            }
            let total = transactions * perTransaction
            #expect(env.mapSize >= total * size)
            #expect(try env.read { try db.statistics(in: $0).entries } == total)
            #expect(try mismatches(env, db, count: total, size: size) == 0)
        }
    }

    @Test("a reopened environment adopts the size of a grown map")
    func reopenAfterGrowth() throws {
        try withTemporaryDirectory { dir throws in
            var grown = 0
            do {
                let (env, db) = try openEnvironment(dir, options: tinyOptions())
                try env.write { txn throws in
                    for i in 0..<64 { try db.put(be64(UInt64(i)), payload(i, size: 16 << 10), in: txn) }
                }
                grown = env.mapSize
            }
            #expect(grown > MapGrowthTests.tinyMap)
            let (env, db) = try openEnvironment(dir, options: tinyOptions())
            #expect(env.mapSize >= 64 * (16 << 10))
            try env.read { txn throws in
                #expect(try db.get(be64(63), in: txn).map { Array($0) } == payload(63, size: 16 << 10))
            }
        }
    }
}

@Suite("Map growth across threads")
struct ThreadedMapGrowthTests {
    let growth = MapGrowthTests()

    @Test("writers and readers on threads of one process keep working while the map grows under them")
    func writersAndReaders() throws {
        try withTemporaryDirectory { dir throws in
            let (env, db) = try openEnvironment(dir, options: growth.tinyOptions())
            let writers = 2
            let transactions = 48
            let perTransaction = 8
            let size = 8 << 10  // 6 MiB in all, from a 64 KiB map: seven growths at least
            let total = writers * transactions * perTransaction
            let failures = Messages()
            let done = Messages()
            let walks = Messages()
            // Readers walk every entry and compare its bytes, which lie in the map: a map
            // moved under an open transaction would fault or show other bytes.
            let readers = DispatchGroup()
            for r in 0..<3 {
                onThread(readers) {
                    while done.count < writers {
                        do {
                            try env.read { txn throws in
                                try txn.withCursor(db) { cursor throws in
                                    var entry = try cursor.first()
                                    var seen = 0
                                    while let (key, value) = entry {
                                        seen += 1
                                        if seen > total {
                                            failures.add("reader \(r): more entries than were written")
                                            return
                                        }
                                        let i = Int(readBE64(key))
                                        if Array(value) != growth.payload(i, size: size) {
                                            failures.add("reader \(r): item \(i) reads back wrong")
                                            return
                                        }
                                        entry = try cursor.next()
                                    }
                                }
                            }
                            walks.add("reader \(r)")
                        } catch {
                            failures.add("reader \(r): \(error)")
                        }
                    }
                }
            }
            // The writers start once every reader has walked at least once, and each
            // commit waits for a walk to end, so the growths land among open readers.
            while walks.count < 3 { usleep(1000) }
            let group = DispatchGroup()
            for w in 0..<writers {
                onThread(group) {
                    do {
                        for t in 0..<transactions {
                            let seen = walks.count
                            try env.write { txn throws in
                                for j in 0..<perTransaction {
                                    let i = (w * transactions + t) * perTransaction + j
                                    try db.put(be64(UInt64(i)), growth.payload(i, size: size), in: txn)
                                }
                            }
                            var waited = 0
                            while walks.count == seen && waited < 20_000 {
                                usleep(100)
                                waited += 1
                            }
                        }
                    } catch {
                        failures.add("writer \(w): \(error)")
                    }
                    done.add("writer \(w)")
                }
            }
            group.wait()
            readers.wait()
            #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")
            #expect(walks.count >= transactions)
            #expect(env.mapSize >= total * size)
            #expect(try env.read { try db.statistics(in: $0).entries } == total)
            #expect(try growth.mismatches(env, db, count: total, size: size) == 0)
        }
    }

    @Test("growing the map from a thread that has a transaction open is refused instead of waiting for itself")
    func resizeInsideTransaction() throws {
        try withTemporaryDirectory { dir throws in
            let (env, _) = try openEnvironment(dir, options: growth.tinyOptions())
            let before = env.mapSize
            let error = #expect(throws: LMDBError.self) { try env.read { _ in try env.growMap() } }
            #expect(error?.code == EDEADLK)
            #expect(env.mapSize == before)
            try env.growMap()
            #expect(env.mapSize > before)
        }
    }

    @Test("while a growth waits for an open transaction, readIfReady declines and read waits for the growth")
    func pendingGrowth() throws {
        try withTemporaryDirectory { dir throws in
            let (env, _) = try openEnvironment(dir, options: growth.tinyOptions())
            let before = env.mapSize
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            onThread(group) {
                try? env.read { _ in
                    holding.signal()
                    release.wait()
                }
            }
            holding.wait()
            let grower = Messages()
            onThread(group) {
                do { try env.growMap() } catch { grower.add("\(error)") }
            }
            // The growth is pending once a new reader is turned away.
            var declined = false
            for _ in 0..<500 where !declined {
                declined = try env.readIfReady { _ in true } == nil
                if !declined { usleep(2000) }
            }
            #expect(declined, "readIfReady should decline while a growth waits")
            #expect(env.mapSize == before, "the map must not change while a transaction is open")
            release.signal()
            #expect(try env.read { _ in env.mapSize } > before)
            group.wait()
            #expect(grower.messages.isEmpty)
            #expect(try env.readIfReady { _ in true } == true)
        }
    }
}

@Suite("Environment: writable map")
struct WriteMapTests {
    @Test("with writeMap the file is as long as the map, and usedBytes counts only the pages in use")
    func fileIsTheMap() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.writeMap = true
            let (env, db) = try openEnvironment(dir, options: options)
            #expect(env.isWriteMap)
            try env.write { txn throws in
                for i in 0..<1000 { try db.put(bytes("key-\(i)"), [UInt8](repeating: 7, count: 100), in: txn) }
            }
            let size = try FileManager.default.attributesOfItem(atPath: dir + "/data.mdb")[.size] as? Int ?? -1
            #expect(size == env.mapSize)
            #expect(env.usedBytes > 100_000 && env.usedBytes < size)
            #expect(env.usedBytes % env.pageSize == 0)
            try env.read { txn throws in #expect(try stored(db, "key-999", in: txn)?.count == 100) }
        }
    }

    @Test("a read-only environment ignores writeMap")
    func readOnlyIgnoresWriteMap() throws {
        try withTemporaryDirectory { dir throws in
            _ = try openEnvironment(dir)
            var options = EnvironmentOptions()
            options.writeMap = true
            options.readOnly = true
            #expect(!(try Environment(path: dir, options: options)).isWriteMap)
        }
    }

    @Test("without retrying, a full map is thrown instead of growing the map and running the body again")
    func fullMapWithoutRetry() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.mapSize = MapGrowthTests.tinyMap
            let (env, db) = try openEnvironment(dir, options: options)
            var runs = 0
            #expect(throws: LMDBError.self) {
                try env.write(retryingWhenFull: false) { txn throws in
                    runs += 1
                    for i in 0..<10_000 { try db.put(bytes("key-\(i)"), [UInt8](repeating: 1, count: 200), in: txn) }
                }
            }
            #expect(runs == 1)
            #expect(env.mapSize == MapGrowthTests.tinyMap)
            try env.read { txn throws in #expect(try stored(db, "key-0", in: txn) == nil) }
        }
    }
}
