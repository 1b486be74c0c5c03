import Foundation
import LMDBKit
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store directory that is not what pushtrail wrote: how it was spoiled.
enum SpoiledStore: String, CaseIterable, CustomTestStringConvertible {
    case dataEmpty = "data.mdb truncated to 0 bytes"
    case data100 = "data.mdb truncated to 100 bytes"
    case data5000 = "data.mdb truncated to 5,000 bytes"
    case dataHalf = "data.mdb truncated to half its size"
    case garbage = "data.mdb replaced by 64 KiB of random bytes"
    case garbagePages = "data.mdb with its meta pages intact and every other page random"
    case newerFormat = "a valid LMDB environment whose meta/format is 5"
    case storeIsFile = "the store path is a regular file"

    var testDescription: String { rawValue }

    /// Builds the spoiled store at `dir.store`: first a real one of ~3,000 events
    /// (a data.mdb of well over a megabyte, so that half of it cuts through B-tree
    /// pages), then the damage.
    func make(in dir: TempDir) throws {
        let input = try dir.write("seed.ndjson", lines: TamperKit.lines(count: 6000, seed: 31))
        let r = CLI.run(store: dir.store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        let data = dir.store + "/data.mdb"
        let size = try FileManager.default.attributesOfItem(atPath: data)[.size] as! Int
        var rng = TamperRandom(seed: 0x5F0)
        func randomBytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        switch self {
        case .dataEmpty: try truncate(data, to: 0)
        case .data100: try truncate(data, to: 100)
        case .data5000: try truncate(data, to: 5000)
        case .dataHalf:
            #expect(size > 1 << 20, "data.mdb is \(size) bytes")
            try truncate(data, to: size / 2)
        case .garbage:
            try Data(randomBytes(64 << 10)).write(to: URL(fileURLWithPath: data))
        case .garbagePages:
            // Pages 0 and 1 are LMDB's meta pages (page size 4096 here): they still say
            // "a valid environment", while the trees they point into are noise.
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: data)))
            let page = 4096
            bytes.replaceSubrange((2 * page)..<bytes.count, with: randomBytes(bytes.count - 2 * page))
            try Data(bytes).write(to: URL(fileURLWithPath: data))
        case .newerFormat:
            _ = try Tampering.write(dir.store, database: "meta") { meta, txn in
                try meta.put(Array("format".utf8), [0, 0, 0, 5], in: txn)
            }
        case .storeIsFile:
            try FileManager.default.removeItem(atPath: dir.store)
            try dir.write("store", bytes: randomBytes(64 << 10))
        }
    }

    private func truncate(_ path: String, to size: Int) throws {
        guard Glibc.truncate(path, off_t(size)) == 0 else { throw HarnessError("truncate \(path): \(errno)") }
    }
}

@Suite("untrusted store: a damaged, foreign or newer store is a clear error, exit 74, never a crash")
struct UntrustedStoreTests {
    /// Every command that only reads the store.
    static let readingCommands: [[String]] = [
        ["stats"], ["head"], ["verify"], ["log"], ["thread", "x"], ["task", "1"], ["show", "@1"], ["audit"],
        ["log", "--json"], ["verify", "--json"],
    ]

    /// Runs `argv` through the real executable, so that a crash shows as a signal
    /// (a status that is not 74: 7 for SIGBUS, 11 for SIGSEGV) rather than taking the
    /// test runner down; a hang is killed and fails after 30 s.
    func run(_ argv: [String], store: String) throws -> Outcome {
        try PathSafetyKit.run(["--store", store] + argv, in: NSTemporaryDirectory(), timeout: 30)
    }

    func expectRefused(_ r: Outcome, _ what: String, _ argv: [String]) {
        #expect(r.status == 74, "\(what): pushtrail \(argv.joined(separator: " ")): \(r)")
        #expect(r.stderrLines.count == 1, "\(what): \(argv): one line on stderr: \(r)")
        #expect(r.stderrLines.first?.hasPrefix("pushtrail: ") == true, "\(what): \(argv): \(r)")
        #expect(r.stdout.isEmpty, "\(what): \(argv): nothing on stdout: \(r)")
    }

    @Test("every reading command exits 74 with one line on stderr", arguments: SpoiledStore.allCases)
    func refusedByReaders(_ spoiled: SpoiledStore) throws {
        let dir = try TempDir()
        try spoiled.make(in: dir)
        for argv in UntrustedStoreTests.readingCommands {
            expectRefused(try run(argv, store: dir.store), spoiled.rawValue, argv)
        }
    }

    @Test("the messages say what is wrong", arguments: SpoiledStore.allCases)
    func messages(_ spoiled: SpoiledStore) throws {
        let dir = try TempDir()
        try spoiled.make(in: dir)
        let line = try run(["stats"], store: dir.store).stderr
        switch spoiled {
        case .newerFormat:
            #expect(line.contains("format 5") && line.contains("upgrade"), "\(line)")
        case .storeIsFile:
            #expect(line.contains("not a directory"), "\(line)")
        case .dataEmpty:
            // An empty data.mdb is what a first open on a full disk leaves: read as
            // "no store yet".
            #expect(line.contains("no store"), "\(line)")
        default:
            #expect(
                line.contains("not a pushtrail store") || line.contains("damaged") || line.contains("verify"), "\(line)"
            )
        }
        // A fault deep inside LMDB (garbage pages behind valid meta pages) may only be
        // caught where the path is no longer at hand; every other case names the store.
        if spoiled != .garbagePages { #expect(line.contains(dir.store), "the message names the store: \(line)") }
    }

    @Test(
        "ingest refuses to write into a newer-format or garbage store, and leaves data.mdb as it found it",
        arguments: [SpoiledStore.newerFormat, .garbage, .garbagePages, .dataHalf])
    func refusedByIngest(_ spoiled: SpoiledStore) throws {
        let dir = try TempDir()
        try spoiled.make(in: dir)
        let before = try dir.read("store/data.mdb")
        let input = try dir.write("more.ndjson", lines: [Line.delivery("late-1")])
        let r = try run(["ingest", input], store: dir.store)
        expectRefused(r, spoiled.rawValue, ["ingest"])
        #expect(try dir.read("store/data.mdb") == before, "data.mdb unchanged")
    }

    @Test("a store whose lock.mdb was deleted still reads: LMDB recreates the lock file (0600), and verify is ok")
    func lockFileDeleted() throws {
        // lock.mdb holds only LMDB's reader table and writer mutex, no data (docs/STORE.md):
        // a missing one is not damage, so this is not a refusal. It must not crash or
        // lose anything either.
        let dir = try TempDir()
        let input = try dir.write("seed.ndjson", lines: TamperKit.lines(count: 300, seed: 37))
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        let head = try CLI.head(dir.store)
        let before = try UntrustedStoreTests.readingCommands.map { try run($0, store: dir.store) }
        try FileManager.default.removeItem(atPath: dir.store + "/lock.mdb")
        for (argv, was) in zip(UntrustedStoreTests.readingCommands, before) {
            // The same answers as with the lock file (`thread x`, `task 1` find nothing:
            // exit 1 both times); human `verify` prints its timing, so only its status.
            let r = try run(argv, store: dir.store)
            #expect(r.status == was.status, "\(argv): \(r)")
            #expect(r.stderr == was.stderr, "\(argv): \(r)")
            if argv != ["verify"] { #expect(r.stdout == was.stdout, "\(argv)") }
        }
        let verify = try run(["verify", "--json"], store: dir.store)
        #expect(try verify.json()["head"] == head)
        if exists(dir.store + "/lock.mdb") { #expect(mode(of: dir.store + "/lock.mdb") == 0o600) }
        let more = try dir.write("more.ndjson", lines: [Line.delivery("after-lock-1")])
        #expect(try run(["ingest", more], store: dir.store).status == 0)
        #expect(try CLI.stats(dir.store)["events"]?.int == 301)
    }

    @Test("an unreadable store directory (chmod 000) is exit 74 with one line, for a user other than root")
    func unreadableDirectory() throws {
        let dir = try TempDir()
        let input = try dir.write("seed.ndjson", lines: TamperKit.lines(count: 50, seed: 41))
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        #expect(chmod(dir.store, 0) == 0)
        defer { chmod(dir.store, 0o700) }
        for argv in UntrustedStoreTests.readingCommands {
            let r = try run(argv, store: dir.store)
            if geteuid() == 0 {
                // Root bypasses permission bits, so the store is simply read. Only the
                // "no crash, no hang, a defined status" part can be checked here.
                #expect([0, 1].contains(r.status), "\(argv): \(r)")
            } else {
                expectRefused(r, "chmod 000", argv)
            }
        }
    }
}
