import Foundation
import Testing

/// A full or failing disk under an ingest: one clear line and exit 74, whole
/// transactions only in the store, and a re-run that completes the work. Faults are
/// injected with an LD_PRELOAD shim (Tests/Fixtures/faulty_io.c) that, for files in the
/// store's directory, fails syncs after a count, fails writes after a byte budget, or
/// leaves the file short so that pages of the writable map fault.
@Suite("Disk full and I/O errors during ingest")
struct DiskFaultTests {
    static let shimSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/faulty_io.c").path

    /// Builds the shim with the system C compiler into `dir`.
    static func buildShim(in dir: TempDir) throws -> String {
        let output = dir.file("faulty_io.so")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["cc", "-shared", "-fPIC", "-o", output, shimSource, "-ldl"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "cc could not build the fault-injection shim")
        return output
    }

    /// The store path as the kernel reports it (the shim matches /proc/self/fd links).
    static func canonicalStore(in dir: TempDir) -> String {
        guard let resolved = realpath(dir.path, nil) else { return dir.file("store") }
        defer { free(resolved) }
        return String(cString: resolved) + "/store"
    }

    static func events(_ count: Int) -> [String] {
        (0..<count).map { i in
            Line.delivery("d\(i)", user: "u\(i % 7)", notification: "n\(i % 50)")
        }
    }

    @Test(
        "a full disk mid-ingest exits 74 with one line, keeps whole batches, and a re-run completes",
        arguments: ["ENOSPC", "EIO"])
    func faultThenRerun(errno name: String) throws {
        let dir = try TempDir()
        let shim = try Self.buildShim(in: dir)
        let store = Self.canonicalStore(in: dir)
        let input = try dir.write("events.ndjson", lines: Self.events(40_000))
        // Small transactions so that some commit before the disk "fills": each commit
        // syncs twice (pages, then the meta page), creating the store a few times.
        let faulty = try Binary.run(
            ["--store", store, "ingest", "-q", input],
            environment: [
                "LD_PRELOAD": shim, "FAULT_DIR": store, "FAULT_AFTER_SYNCS": "12", "FAULT_ERRNO": name,
                "PUSHTRAIL_BATCH_EVENTS": "2000",
            ])
        #expect(faulty.status == 74, "\(faulty)")
        let errorLines = faulty.stderr.split(separator: "\n")
        #expect(errorLines.count == 1, "one line on stderr: \(faulty.stderr)")
        let expected = name == "ENOSPC" ? "No space left on device" : "Input/output error"
        #expect(
            faulty.stderr.contains(expected) && faulty.stderr.contains("run the same command again"), "\(faulty.stderr)"
        )

        // Whole transactions only: verify passes and the count is a multiple of the batch.
        let verify = try Binary.run(["--store", store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        let stored = try verify.json()["events"]?.int ?? -1
        #expect(stored > 0 && stored < 40_000 && stored % 2000 == 0, "stored \(stored)")

        let rerun = try Binary.run(["--store", store, "ingest", "--json", input])
        #expect(rerun.status == 0, "\(rerun)")
        let summary = try rerun.json()
        #expect(summary["duplicates"]?.int == stored)
        #expect(summary["appended"]?.int == 40_000 - stored)
        let final = try Binary.run(["--store", store, "verify", "--json"])
        #expect(final.status == 0)
        #expect(try final.json()["events"]?.int == 40_000)
    }

    @Test(
        "a map page the disk cannot back (SIGBUS) exits 74 with one line, keeps the last commit, and a re-run completes"
    )
    func mapFaultThenRerun() throws {
        let dir = try TempDir()
        let shim = try Self.buildShim(in: dir)
        let store = Self.canonicalStore(in: dir)
        let all = Self.events(20_000)
        let first = try dir.write("first.ndjson", lines: Array(all.prefix(1000)))
        let input = try dir.write("events.ndjson", lines: all)
        let ingest = try Binary.run(["--store", store, "ingest", "-q", first])
        #expect(ingest.status == 0, "\(ingest)")
        // An ingest leaves the file no longer than its pages in use.
        let used = try Binary.run(["--store", store, "stats", "--json"]).json()["store_bytes"]?.int ?? -1
        let size = (try? FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as? Int) ?? -2
        #expect(used == size, "data.mdb is \(size) bytes, its pages \(used)")

        // The file cannot grow: the first page written past its end faults.
        let faulty = try Binary.run(
            ["--store", store, "ingest", "-q", input],
            environment: [
                "LD_PRELOAD": shim, "FAULT_DIR": store, "FAULT_NO_GROW": "1", "PUSHTRAIL_BATCH_EVENTS": "2000",
            ])
        #expect(faulty.status == 74, "\(faulty)")
        let lines = faulty.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line on stderr: \(faulty.stderr)")
        #expect(
            faulty.stderr.hasPrefix("pushtrail: cannot write store ") && faulty.stderr.contains("no space left")
                && faulty.stderr.contains("run the same command again"), "\(faulty.stderr)")

        let verify = try Binary.run(["--store", store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify)")
        #expect(try verify.json()["events"]?.int == 1000)
        let rerun = try Binary.run(["--store", store, "ingest", "--json", input])
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try rerun.json()["duplicates"]?.int == 1000)
        let final = try Binary.run(["--store", store, "verify", "--json"])
        #expect(final.status == 0)
        #expect(try final.json()["events"]?.int == 20_000)
    }

    @Test("a disk that fails at once leaves no half store behind and says so in one line")
    func failsAtOnce() throws {
        let dir = try TempDir()
        let shim = try Self.buildShim(in: dir)
        let store = Self.canonicalStore(in: dir)
        let input = try dir.write("events.ndjson", lines: Self.events(100))
        let faulty = try Binary.run(
            ["--store", store, "ingest", "-q", input],
            environment: ["LD_PRELOAD": shim, "FAULT_DIR": store, "FAULT_AFTER_BYTES": "0"])
        #expect(faulty.status == 74, "\(faulty)")
        #expect(faulty.stderr.split(separator: "\n").count == 1, "\(faulty.stderr)")
        let rerun = try Binary.run(["--store", store, "ingest", "-q", input])
        #expect(rerun.status == 0, "\(rerun)")
        let verify = try Binary.run(["--store", store, "verify", "--json"])
        #expect(try verify.json()["events"]?.int == 100)
    }
}
