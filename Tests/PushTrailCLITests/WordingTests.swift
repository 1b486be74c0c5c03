import Foundation
import Testing

/// Small things a user reads every day: counts, and usage errors that say what to do.
@Suite("Wording: counts agree with their nouns, usage errors name the fix")
struct WordingTests {
    @Test("one event, one duplicate and one conflict are singular; other counts plural")
    func plurals() throws {
        let dir = try TempDir()
        let first = try dir.write("a.ndjson", lines: [Line.delivery("d-1"), Line.delivery("d-2")])
        #expect(CLI.run(store: dir.store, ["ingest", first]).stdout.hasPrefix("appended 2 of 2 events"))
        let again = try dir.write(
            "b.ndjson", lines: [Line.delivery("d-1"), Line.delivery("d-2", status: 410), Line.delivery("d-3")])
        let r = CLI.run(store: dir.store, ["ingest", again])
        #expect(r.stdout.hasPrefix("appended 1 of 3 events (seq 3–3); 1 duplicate, 1 conflict, 0 rejected"), "\(r)")
        let one = try dir.write("c.ndjson", lines: [Line.delivery("d-4")])
        #expect(CLI.run(store: dir.store, ["ingest", one]).stdout.hasPrefix("appended 1 of 1 event (seq 4–4)"))
    }

    @Test("--store without its directory is a usage error that says so, not an unknown option")
    func storeWithoutValue() {
        let r = CLI.run(["--store"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("pushtrail: --store needs a value (DIR)\n"), "\(r.stderr)")
    }

    @Test("export of an event by id refuses --at instead of ignoring it")
    func exportByIDWithAt() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["export", "n-1", "--at", "2026-01-01", "-o", "-"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("--at goes with --thread or --task"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.store), "a usage error opens no store")
    }
}
