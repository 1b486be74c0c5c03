import Foundation
import Testing

/// A full or failing disk under an ingest: one clear line and exit 74, whole
/// transactions only in the store, and a re-run that completes the work. Faults are
/// injected with an LD_PRELOAD shim (Tests/Fixtures/faulty_io.c) that fails writes to
/// the store's directory after a byte budget.
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

    @Test("a full disk mid-ingest exits 74 with one line, keeps whole batches, and a re-run completes", arguments: ["ENOSPC", "EIO"])
    func faultThenRerun(errno name: String) throws {
        let dir = try TempDir()
        let shim = try Self.buildShim(in: dir)
        let store = Self.canonicalStore(in: dir)
        let input = try dir.write("events.ndjson", lines: Self.events(40_000))
        // Small batches so that some commit before the disk "fills".
        let faulty = try Binary.run(
            ["--store", store, "ingest", "-q", input],
            environment: [
                "LD_PRELOAD": shim, "FAULT_DIR": store, "FAULT_AFTER_BYTES": "6000000", "FAULT_ERRNO": name,
                "PUSHTRAIL_BATCH_EVENTS": "2000",
            ])
        #expect(faulty.status == 74, "\(faulty)")
        let errorLines = faulty.stderr.split(separator: "\n")
        #expect(errorLines.count == 1, "one line on stderr: \(faulty.stderr)")
        let expected = name == "ENOSPC" ? "No space left on device" : "Input/output error"
        #expect(faulty.stderr.contains(expected) && faulty.stderr.contains("run the same command again"), "\(faulty.stderr)")

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
