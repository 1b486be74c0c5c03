import Foundation
import PushTrailModel
import PushTrailStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several writers and readers on one store at once, writers killed while holding the
/// write lock, readers killed mid-read, and a map that must grow under all of them.
/// Real processes, real LMDB locks.
@Suite("Concurrency: many writers, readers, and killed processes on one store")
struct ConcurrencyTests {
    /// Reader table entries (pids) as `mdb_stat -r` lists them.
    static func readerPIDs(_ store: String) throws -> [Int32] {
        // Not `Tool.output`: LMDB 0.9.24's `mdb_stat -r` exits 1 after listing them.
        let (_, text) = try Tool.run("mdb_stat", ["-r", store])
        // Rows: "    pid     thread     txnid"
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return pid
        }
    }

    @Test("8 ingest processes × 1,000 events with readers looping: exactly 8,000 events, no gaps, no reader error")
    func eightWritersAndReaders() throws {
        let dir = try TempDir()
        // A thread to read while the writers run.
        let seed = try dir.write(
            "seed.ndjson",
            lines: [
                Line.notification("11111111-1111-4111-8111-111111111111", thread: "task-1", task: 1)
            ])
        #expect(try Binary.run(["--store", dir.store, "ingest", "-q", seed]).status == 0)
        let inputs = try (0..<8).map { p in
            try dir.write("in\(p).ndjson", lines: Line.deliveries("w\(p)", count: 1000, user: "u\(p)"))
        }
        let writers = try inputs.map { try Binary.start(["--store", dir.store, "ingest", "--json", $0]) }
        var readerRuns = 0
        var readerFailures: [String] = []
        var writersDone = false
        while !writersDone {
            for argv in [["thread", "task-1"], ["log", "-n", "5", "--json"], ["stats", "--json"]] {
                let r = try Binary.run(["--store", dir.store] + argv)
                readerRuns += 1
                if r.status != 0 { readerFailures.append("\(argv): \(r)") }
            }
            writersDone = writers.allSatisfy { !$0.process.isRunning }
        }
        for w in writers {
            let o = try w.wait()
            #expect(o.status == 0, "\(o)")
            #expect(try o.json()["appended"]?.int == 1000)
        }
        #expect(readerFailures.isEmpty, "\(readerFailures.prefix(3))")
        #expect(readerRuns >= 3)
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        // verify checks that seqs run 1, 2, 3… without gaps.
        #expect(try verify.json()["events"]?.int == 8001)
    }

    @Test("verify while 40 ingests commit: every run passes on the snapshot it reads, and the counts only grow")
    func verifyWhileWriting() throws {
        let dir = try TempDir()
        // Enough events that verify's threads share ranges of them.
        let first = try dir.write("first.ndjson", lines: Line.deliveries("v0", count: 3000))
        #expect(try Binary.run(["--store", dir.store, "ingest", "-q", first]).status == 0)
        let inputs = try (1...40).map { p in try dir.write("in\(p).ndjson", lines: Line.deliveries("v\(p)", count: 100))
        }
        let writers = try inputs.map { try Binary.start(["--store", dir.store, "ingest", "-q", $0]) }
        var runs = 0
        var failures: [String] = []
        var last = 0
        var writersDone = false
        // At least two runs even when the writers all finish during the first (a loaded
        // machine: the whole suite at once), so that the counts are compared.
        while !writersDone || runs < 2 {
            let r = try Binary.run(["--store", dir.store, "verify", "--json"])
            runs += 1
            if r.status != 0 {
                failures.append("\(r)")
            } else if let events = try r.json()["events"]?.int {
                if events < last { failures.append("events went from \(last) to \(events)") }
                last = events
            }
            writersDone = writers.allSatisfy { !$0.process.isRunning }
        }
        for w in writers {
            let r = try w.wait()
            #expect(r.status == 0, "a writer: \(r)")
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(runs >= 2)
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 3000 + 40 * 100)
    }

    @Test("a writer killed while it holds the write transaction does not block the others")
    func killedWriterHoldingTheLock() throws {
        let dir = try TempDir()
        // Big enough that even a release build is still writing half a second in.
        let big = try dir.write("big.ndjson", lines: Line.deliveries("big", count: 400_000))
        // --strict holds one write transaction for the whole input.
        let holder = try Binary.start(["--store", dir.store, "ingest", "--strict", "-q", big])
        // Wait until it has the store open and is writing.
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: dir.store + "/lock.mdb") && Date() < deadline { usleep(20_000) }
        usleep(500_000)
        #expect(holder.process.isRunning, "the strict ingest finished too soon to be killed mid-transaction")
        kill(holder.process.processIdentifier, SIGKILL)
        _ = try? holder.wait()

        let inputs = try (0..<3).map { p in try dir.write("in\(p).ndjson", lines: Line.deliveries("k\(p)", count: 1000))
        }
        let writers = try inputs.map { try Binary.start(["--store", dir.store, "ingest", "--json", $0], timeout: 120) }
        for w in writers {
            let o = try w.wait()
            #expect(o.status == 0, "\(o)")
            #expect(try o.json()["appended"]?.int == 1000)
        }
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        // Nothing of the killed all-or-nothing ingest is visible.
        #expect(try verify.json()["events"]?.int == 3000)
    }

    @Test("a reader killed mid-read leaves a stale slot that the next writer clears")
    func staleReaderSlotCleared() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: Line.deliveries("r", count: 20_000, padding: 300))
        #expect(try Binary.run(["--store", dir.store, "ingest", "-q", input]).status == 0)

        // LMDB resets the reader table when the first process opens the store, so a
        // stale slot only matters while others keep it open: a follower does.
        let follower = try Binary.start(["--store", dir.store, "log", "-f", "-n", "0"], timeout: 120)
        defer { kill(follower.process.processIdentifier, SIGKILL) }
        usleep(300_000)

        // `log --raw` into a pipe nobody reads blocks while it holds its read transaction.
        let executable = try Binary.path()
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: executable)
        reader.arguments = ["--store", dir.store, "log", "--raw"]
        let pipe = Pipe()
        reader.standardOutput = pipe
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        let pid = reader.processIdentifier
        defer { if reader.isRunning { kill(pid, SIGKILL) } }
        let deadline = Date().addingTimeInterval(20)
        var listed = false
        while !listed && Date() < deadline {
            listed = try Self.readerPIDs(dir.store).contains(pid)
            if !listed { usleep(50_000) }
        }
        #expect(listed, "the blocked reader should hold a reader slot")
        kill(pid, SIGKILL)
        reader.waitUntilExit()
        #expect(try Self.readerPIDs(dir.store).contains(pid), "LMDB keeps the dead reader's slot until someone checks")

        let one = try dir.write("one.ndjson", lines: Line.deliveries("after", count: 1))
        #expect(try Binary.run(["--store", dir.store, "ingest", "-q", one]).status == 0)
        #expect(try !Self.readerPIDs(dir.store).contains(pid), "the writer's open should clear the stale slot")
        try? pipe.fileHandleForReading.close()
    }

    @Test("four processes ingest 50 MiB into a store whose map starts at 1 MiB: no error, nothing lost")
    func fiftyMebibytesFromATinyMap() throws {
        let dir = try TempDir()
        // 4 × 12,000 events of about 1.1 KB: about 50 MiB in all.
        let inputs = try (0..<4).map { p in
            try dir.write("in\(p).ndjson", lines: Line.deliveries("m\(p)", count: 12_000, padding: 1000))
        }
        let total = try inputs.reduce(0) {
            $0 + (try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int ?? 0)
        }
        #expect(total >= 50 << 20, "inputs are \(total) bytes")
        let env = ["PUSHTRAIL_MAP_SIZE": "1048576"]
        let writers = try inputs.map {
            try Binary.start(["--store", dir.store, "ingest", "--json", $0], environment: env, timeout: 600)
        }
        for w in writers {
            let o = try w.wait()
            #expect(o.status == 0, "\(o)")
            #expect(try o.json()["appended"]?.int == 12_000)
        }
        let verify = try Binary.run(["--store", dir.store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 48_000)
    }
}
