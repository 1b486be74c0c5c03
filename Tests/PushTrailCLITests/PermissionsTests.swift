import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("permissions: the store directory 0700, every file pushtrail creates 0600, whatever the umask")
struct PermissionsTests {
    /// `path`'s mode in octal, for messages.
    func octal(_ path: String) -> String { mode(of: path).map { String($0, radix: 8) } ?? "missing" }

    @Test(
        "umask 000, 022: store and --all dirs 0700; data.mdb, lock.mdb, --rejects, exports, reports, --all files 0600",
        arguments: ["000", "022"])
    func createdModes(umask: String) throws {
        let dir = try TempDir()
        let work = dir.file("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        let input = try dir.write(
            "in.ndjson",
            lines: [
                Line.notification(
                    "00000000-0000-4000-8000-000000000001", thread: "task-7", task: 7, extra: ",\"topic\":\"b.c\""),
                Line.notification(
                    "00000000-0000-4000-8000-000000000002", thread: "task-7", task: 7, at: "2026-11-29T11:00:00Z",
                    extra: ",\"topic\":\"b.c\""),
                "not json",
            ])
        let rejects = dir.file("rejects.ndjson")
        let ingest = try PathSafetyKit.run(
            ["--store", dir.store, "ingest", input, "--rejects", rejects], in: work, umask: umask)
        #expect(ingest.status == 65, "\(ingest)")

        #expect(mode(of: dir.store) == 0o700, "store dir \(octal(dir.store))")
        for f in ["data.mdb", "lock.mdb"] {
            #expect(mode(of: dir.store + "/" + f) == 0o600, "\(f) \(octal(dir.store + "/" + f))")
        }
        // Nothing else (a spool file, a temporary) is left in the store.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.store).sorted() == ["data.mdb", "lock.mdb"])
        #expect(mode(of: rejects) == 0o600, "rejects \(octal(rejects))")

        let output = dir.file("one.apns")
        let one = try PathSafetyKit.run(
            ["--store", dir.store, "export", "--thread", "task-7", "-o", output], in: work, umask: umask)
        #expect(one.status == 0, "\(one)")
        #expect(mode(of: output) == 0o600, "export -o \(octal(output))")

        let named = try PathSafetyKit.run(["--store", dir.store, "export", "--task", "7"], in: work, umask: umask)
        #expect(named.status == 0, "\(named)")
        #expect(mode(of: work + "/task-7-2.apns") == 0o600, "default name \(octal(work + "/task-7-2.apns"))")

        let all = dir.file("all")
        let many = try PathSafetyKit.run(
            ["--store", dir.store, "export", "--thread", "task-7", "--all", "--dir", all], in: work, umask: umask)
        #expect(many.status == 0, "\(many)")
        #expect(mode(of: all) == 0o700, "--dir \(octal(all))")
        let files = try FileManager.default.contentsOfDirectory(atPath: all)
        #expect(files.count == 2)
        for f in files { #expect(mode(of: all + "/" + f) == 0o600, "\(f) \(octal(all + "/" + f))") }

        // An existing file replaced with --force ends 0600 too, whatever it was.
        let loose = dir.file("loose.apns")
        #expect(
            FileManager.default.createFile(
                atPath: loose, contents: Data("x".utf8), attributes: [.posixPermissions: 0o666]))
        let forced = try PathSafetyKit.run(
            ["--store", dir.store, "export", "--task", "7", "-o", loose, "--force"], in: work, umask: umask)
        #expect(forced.status == 0, "\(forced)")
        #expect(mode(of: loose) == 0o600, "forced over 0666: \(octal(loose))")

        // A lock file LMDB recreates for a reader is 0600 as well.
        try FileManager.default.removeItem(atPath: dir.store + "/lock.mdb")
        let stats = try PathSafetyKit.run(["--store", dir.store, "stats"], in: work, umask: umask)
        #expect(stats.status == 0, "\(stats)")
        if exists(dir.store + "/lock.mdb") {
            #expect(mode(of: dir.store + "/lock.mdb") == 0o600, "recreated lock.mdb \(octal(dir.store + "/lock.mdb"))")
        }

        // Reports: -o, the default name, and --force over a loose file.
        let page = dir.file("ticket.html")
        let report = try PathSafetyKit.run(
            ["--store", dir.store, "report", "--task", "7", "-o", page], in: work, umask: umask)
        #expect(report.status == 0, "\(report)")
        #expect(mode(of: page) == 0o600, "report -o \(octal(page))")
        let defaultReport = try PathSafetyKit.run(
            ["--store", dir.store, "report", "--thread", "task-7"], in: work, umask: umask)
        #expect(defaultReport.status == 0, "\(defaultReport)")
        #expect(
            mode(of: work + "/task-7-report.html") == 0o600,
            "report default name \(octal(work + "/task-7-report.html"))")
        let loosePage = dir.file("loose.html")
        #expect(
            FileManager.default.createFile(
                atPath: loosePage, contents: Data("x".utf8), attributes: [.posixPermissions: 0o666]))
        let forcedPage = try PathSafetyKit.run(
            ["--store", dir.store, "report", "--task", "7", "-o", loosePage, "--force"], in: work, umask: umask)
        #expect(forcedPage.status == 0, "\(forcedPage)")
        #expect(mode(of: loosePage) == 0o600, "report forced over 0666: \(octal(loosePage))")
    }

    @Test(
        "a group/other-writable store dir (0777, 0770) is refused for reads and writes: exit 74, one line naming chmod",
        arguments: [0o777, 0o770, 0o720, 0o702] as [Int])
    func writableByOthers(_ permissions: Int) throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        let data = try dir.read("store/data.mdb")
        #expect(chmod(dir.store, mode_t(permissions)) == 0)
        defer { chmod(dir.store, 0o700) }
        let more = try dir.write("more.ndjson", lines: [Line.delivery("d-2")])
        for argv in [
            ["ingest", more], ["stats"], ["log"], ["verify"], ["head"], ["export", "--task", "1", "-o", "-"],
        ] {
            let r = try Binary.run(["--store", dir.store] + argv)
            #expect(r.status == 74, "\(String(permissions, radix: 8)) \(argv): \(r)")
            #expect(r.stderrLines.count == 1, "\(argv): \(r)")
            #expect(r.stderr.hasPrefix("pushtrail: ") && r.stderr.contains("chmod"), "\(argv): \(r)")
            #expect(r.stderr.contains(dir.store), "names the directory: \(r)")
        }
        #expect(mode(of: dir.store) == permissions, "pushtrail does not silently change the mode")
        #expect(try dir.read("store/data.mdb") == data, "nothing written")
    }

    @Test("a new store inside a fresh directory is 0700 even when its parent is 0777")
    func loosParent() throws {
        let dir = try TempDir()
        let parent = dir.file("shared")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
        #expect(chmod(parent, 0o777) == 0)
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        let r = try Binary.run(["--store", parent + "/store", "ingest", input], umask: "000")
        #expect(r.status == 0, "\(r)")
        #expect(mode(of: parent + "/store") == 0o700)
        #expect(mode(of: parent + "/store/data.mdb") == 0o600)
    }
}
