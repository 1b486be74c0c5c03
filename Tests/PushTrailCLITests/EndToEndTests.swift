import Foundation
import PushTrailModel
import PushTrailStore
import Testing

@Suite("End to end through the executable: stdin, concurrency, map growth")
struct EndToEndTests {
    @Test("ingest - reads standard input (from a file), reports stdin lines by number")
    func stdinDash() throws {
        let dir = try TempDir()
        let lines = [Line.delivery("s-1"), "not json", Line.delivery("s-3")]
        let input = try dir.write("in.ndjson", lines: lines)
        let r = try Binary.run(["--store", dir.store, "ingest", "--json", "-"], input: .file(input))
        #expect(r.status == 65, "\(r)")
        #expect(r.stderrLines.count == 1)
        #expect(r.stderr.hasPrefix("pushtrail: "))
        #expect(r.stderr.contains(":2: invalid JSON"), "\(r)")
        let s = try r.json()
        #expect(s["read"]?.int == 3)
        #expect(s["appended"]?.int == 2)
        #expect(try CLI.show(dir.store, "s-3")?["event"] == JSON.parse(lines[2]))
    }

    @Test("ingest with no operand reads standard input (through a pipe)")
    func stdinPipe() throws {
        let dir = try TempDir()
        let lines = Line.deliveries("p", count: 300)
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        let r = try Binary.run(["--store", dir.store, "ingest", "--json"], input: .pipe(bytes))
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["appended"]?.int == 300)
        #expect(try CLI.stats(dir.store)["events"]?.int == 300)
        // The same again on stdin is all duplicates.
        let again = try Binary.run(["--store", dir.store, "ingest", "--json", "-"], input: .pipe(bytes))
        #expect(again.status == 0)
        #expect(try again.json()["duplicates"]?.int == 300)
    }

    @Test("ingest - mixed with files reads each once, in order")
    func stdinAndFiles() throws {
        let dir = try TempDir()
        let a = try dir.write("a.ndjson", lines: [Line.delivery("a-1")])
        let b = try dir.write("b.ndjson", lines: [Line.delivery("b-1")])
        let stdin = try dir.write("stdin.ndjson", lines: [Line.delivery("stdin-1")])
        let r = try Binary.run(["--store", dir.store, "ingest", a, "-", b], input: .file(stdin))
        #expect(r.status == 0, "\(r)")
        #expect(try CLI.show(dir.store, "a-1")?["seq"]?.int == 1)
        #expect(try CLI.show(dir.store, "stdin-1")?["seq"]?.int == 2)
        #expect(try CLI.show(dir.store, "b-1")?["seq"]?.int == 3)
    }

    @Test("ingest --strict - with a bad line stores nothing and leaves no spool file in the store")
    func strictStdin() throws {
        let dir = try TempDir()
        let seed = try dir.write("seed.ndjson", lines: [Line.delivery("seed")])
        #expect(try Binary.run(["--store", dir.store, "ingest", seed]).status == 0)
        let headBefore = try CLI.head(dir.store)
        let files = try Set(FileManager.default.contentsOfDirectory(atPath: dir.store))

        let bytes = Array((Line.delivery("x-1") + "\n" + Line.delivery("x-2") + "\n[]\n").utf8)
        let r = try Binary.run(["--store", dir.store, "ingest", "--strict", "-"], input: .pipe(bytes))
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains(":3: "))
        #expect(try CLI.head(dir.store) == headBefore)
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: dir.store)) == files)

        let good = Array((Line.delivery("y-1") + "\n" + Line.delivery("y-2") + "\n").utf8)
        let ok = try Binary.run(["--store", dir.store, "ingest", "--strict", "--json"], input: .pipe(good))
        #expect(ok.status == 0, "\(ok)")
        #expect(try ok.json()["appended"]?.int == 2)
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: dir.store)) == files)
    }

    /// Every (seq, id) in the store, read through PushTrailStore once no process writes.
    func storedSeqsAndIDs(_ path: String) throws -> [(UInt64, String)] {
        let store = try Store(path: path, create: false)
        return try store.read { reader in
            var out: [(UInt64, String)] = []
            try reader.forEachEvent { stored in
                out.append((stored.seq, try stored.decode().id))
                return true
            }
            return out
        }
    }

    @Test("four processes ingesting 500 events each at once: 2,000 events, seqs 1…2000 without gaps, verify ok")
    func concurrentIngest() throws {
        let dir = try TempDir()
        var expectedIDs: Set<String> = []
        var inputs: [String] = []
        for p in 0..<4 {
            let lines = Line.deliveries("proc\(p)", count: 500, user: "u_proc\(p)")
            expectedIDs.formUnion((0..<500).map { "proc\(p)-\($0)" })
            inputs.append(try dir.write("in\(p).ndjson", lines: lines))
        }
        let running = try inputs.map { try Binary.start(["--store", dir.store, "ingest", "--json", $0]) }
        let outcomes = try running.map { try $0.wait() }
        for o in outcomes {
            #expect(o.status == 0, "\(o)")
            #expect(try o.json()["appended"]?.int == 500)
        }

        let stats = try Binary.run(["--store", dir.store, "stats", "--json"])
        #expect(stats.status == 0)
        #expect(try stats.json()["events"]?.int == 2000)
        #expect(try stats.json()["users"]?.int == 4)
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["ok"]?.bool == true)
        #expect(try verify.json()["events"]?.int == 2000)
        #expect(try verify.json()["head"]?["seq"]?.int == 2000)

        let stored = try storedSeqsAndIDs(dir.store)
        #expect(stored.map(\.0) == Array(1...2000))
        #expect(Set(stored.map(\.1)) == expectedIDs)
        #expect(stored.count == Set(stored.map(\.1)).count, "no event stored twice")
    }

    @Test("readers run while four processes write: every verify along the way is ok and never goes backwards")
    func readersDuringWrites() throws {
        let dir = try TempDir()
        let seed = try dir.write("seed.ndjson", lines: [Line.delivery("seed")])
        #expect(try Binary.run(["--store", dir.store, "ingest", seed]).status == 0)
        let inputs = try (0..<4).map { p in
            try dir.write("in\(p).ndjson", lines: Line.deliveries("w\(p)", count: 3000, padding: 200))
        }
        let writers = try inputs.map { try Binary.start(["--store", dir.store, "ingest", "--json", $0]) }
        var seen: [Int] = []
        for _ in 0..<8 {
            let v = try Binary.run(["--store", dir.store, "verify", "--json"])
            #expect(v.status == 0, "\(v)")
            let json = try v.json()
            #expect(json["ok"]?.bool == true, "\(v)")
            seen.append(json["events"]?.int ?? -1)
        }
        for w in writers {
            let o = try w.wait()
            #expect(o.status == 0, "\(o)")
        }
        #expect(seen == seen.sorted(), "a later reader saw fewer events: \(seen)")
        let final = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(try final.json()["events"]?.int == 12_001)
        #expect(try final.json()["ok"]?.bool == true)
    }

    @Test("a 1 MiB initial map grows to hold ~5 MB of events: all stored, verify ok")
    func mapGrowth() throws {
        let dir = try TempDir()
        let lines = Line.deliveries("big", count: 5000, padding: 1000)
        let input = try dir.write("big.ndjson", lines: lines)
        let size = try FileManager.default.attributesOfItem(atPath: input)[.size] as? NSNumber
        #expect((size?.intValue ?? 0) > 5_000_000)

        let env = ["PUSHTRAIL_MAP_SIZE": "1048576"]
        let r = try Binary.run(["--store", dir.store, "ingest", "--json", input], environment: env)
        #expect(r.status == 0, "\(r)")
        #expect(try r.json()["appended"]?.int == 5000)
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"], environment: env)
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 5000)
        // The padding is random hex: compressed, still over twice the 1 MiB map.
        #expect(try CLI.stats(dir.store)["store_bytes"]?.int ?? 0 > 2_500_000)
        #expect(try CLI.show(dir.store, "big-4999")?["event"] == JSON.parse(lines[4999]))
    }

    @Test("--strict with a 1 MiB map: the run restarts after the map grows and stores each event once")
    func mapGrowthStrict() throws {
        let dir = try TempDir()
        let lines = Line.deliveries("strict", count: 5000, padding: 1000)
        let input = try dir.write("big.ndjson", lines: lines)
        let r = CLI.run(
            store: dir.store, ["ingest", "--strict", "--json", input], environment: ["PUSHTRAIL_MAP_SIZE": "1048576"])
        #expect(r.status == 0, "\(r)")
        let s = try r.json()
        #expect(s["appended"]?.int == 5000)
        #expect(s["read"]?.int == 5000)
        #expect(s["first_seq"]?.int == 1)
        #expect(s["last_seq"]?.int == 5000)
        let v = CLI.run(store: dir.store, ["verify", "--json"])
        #expect(v.status == 0, "\(v)")
        #expect(try v.json()["events"]?.int == 5000)
    }

    @Test("four processes with a 1 MiB map each grow it while the others write: nothing lost")
    func concurrentMapGrowth() throws {
        let dir = try TempDir()
        let inputs = try (0..<4).map { p in
            try dir.write("in\(p).ndjson", lines: Line.deliveries("g\(p)", count: 1500, padding: 1000))
        }
        let env = ["PUSHTRAIL_MAP_SIZE": "1048576"]
        let running = try inputs.map {
            try Binary.start(["--store", dir.store, "ingest", "--json", $0], environment: env)
        }
        for w in running {
            let o = try w.wait()
            #expect(o.status == 0, "\(o)")
            #expect(try o.json()["appended"]?.int == 1500)
        }
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 6000)
        let stored = try storedSeqsAndIDs(dir.store)
        #expect(stored.map(\.0) == Array(1...6000))
    }
}
