import Foundation
import LMDBKit
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store appears whole or not at all: `data.mdb` is linked into the store directory
/// only once it holds a committed, initialised store. Before this, an ingest killed in
/// its first milliseconds left an LMDB file with no databases, which every reader
/// refused as "not a pushtrail store" (the 500-point crash test found it).
@Suite("store creation: whole or not at all")
struct StoreCreationTests {
    /// An LMDB file that was opened and never committed: what a creator killed before
    /// its first commit leaves behind.
    static func halfMade(_ dir: String) throws {
        #expect(mkdir(dir, 0o700) == 0)
        _ = try Environment(path: dir, options: EnvironmentOptions())
        #expect(exists(dir + "/data.mdb"))
    }

    @Test("a creator's private directory, left by a killed process, is neither read nor kept")
    func abandonedScratch() throws {
        let dir = try TempDir()
        #expect(mkdir(dir.store, 0o700) == 0)
        // A pid that is not running: the highest pid the kernel hands out is below this.
        try Self.halfMade(dir.store + "/.creating-2147483646")
        let reader = try Binary.run(["--store", dir.store, "verify"])
        #expect(reader.status == 74 && reader.stderr.contains("no store at"), "\(reader)")

        let input = try dir.write("in.ndjson", lines: Line.deliveries("d", count: 3))
        let ingest = try Binary.run(["--store", dir.store, "ingest", input])
        #expect(ingest.status == 0, "\(ingest)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.store).sorted() == ["data.mdb", "lock.mdb"])
        #expect(try Binary.run(["--store", dir.store, "verify"]).status == 0)
    }

    @Test("ingests killed in their first milliseconds never leave a store that verify refuses")
    func killedAtBirth() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: Line.deliveries("d", count: 2000))
        var created = 0
        // Every half millisecond from 0 to 40 ms: store creation happens in there (a
        // millisecond or two after start in release builds, later in debug ones).
        for i in 0..<80 {
            let store = dir.file("s\(i)")
            let running = try Binary.start(["--store", store, "ingest", "-q", input])
            usleep(UInt32(i) * 500)
            kill(running.process.processIdentifier, SIGKILL)
            _ = try? running.wait()
            guard exists(store + "/data.mdb") else { continue }
            created += 1
            let verify = try Binary.run(["--store", store, "verify"])
            #expect(verify.status == 0, "kill after \(Double(i) / 2) ms: \(verify)")
        }
        print("store creation: \(created) of 80 early-killed ingests left a store; all verified")
    }

    @Test("a file that never saw a commit is refused by readers but completed by the next ingest")
    func neverCommitted() throws {
        let dir = try TempDir()
        try Self.halfMade(dir.store)
        let reader = try Binary.run(["--store", dir.store, "stats"])
        #expect(reader.status == 74 && reader.stderr.contains("not a pushtrail store"), "\(reader)")
        let input = try dir.write("in.ndjson", lines: Line.deliveries("d", count: 5))
        #expect(try Binary.run(["--store", dir.store, "ingest", input]).status == 0)
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 5)
    }
}
