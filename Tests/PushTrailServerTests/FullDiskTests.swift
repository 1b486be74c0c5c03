import Foundation
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `POST /v1/events` when the disk is full: the store on a small tmpfs, filled by
/// appends until the server refuses one. A refused body leaves nothing of itself, the
/// reads go on, and once there is room again an append is taken.
@Suite("pushtrail-server: a full disk")
struct FullDiskTests {
    static let size = "8m"
    static let bodyEvents = 2000

    /// Mounts a tmpfs of `size` at `path`.
    static func mount(_ path: String, size: String) -> Bool {
        Glibc.mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0700") == 0
    }

    /// Unmounts `path`; when something still holds it open, detaches it (the memory is
    /// freed when the last file closes).
    static func unmount(_ path: String) {
        if umount2(path, 0) != 0 { _ = umount2(path, Int32(MNT_DETACH)) }
    }

    /// Whether this process may mount a tmpfs: it needs root (CAP_SYS_ADMIN) outside a
    /// container that forbids mounts. Probed once, by mounting and unmounting a small one.
    static let canMount: Bool = {
        let path = NSTemporaryDirectory() + "pushtrail-mount-probe-\(UUID().uuidString)"
        guard (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil
        else { return false }
        defer { rmdir(path) }
        guard mount(path, size: "64k") else { return false }
        unmount(path)
        return true
    }()

    /// A body of `bodyEvents` new notifications, their ids `full-N-I`: `newEvent`'s line
    /// (made once, as it reads the samples) under each id.
    static func body(_ n: Int) -> (ids: [String], bytes: [UInt8]) {
        let ids = (0..<bodyEvents).map { "full-\(n)-\($0)" }
        return (ids, AppendTests.body(ids.map { template.replacingOccurrences(of: "\"full-ID\"", with: "\"\($0)\"") }))
    }

    static let template = ServerFixture.newEvent("full-ID")

    @Test(
        "a full disk: 503 saying nothing was stored, the head unchanged, verify ok, reads served; room again, appends",
        .enabled(if: ServerFixture.haveCurl),
        .enabled(if: canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN) and a host that allows mounts"))
    func fullDisk() throws {
        let point = NSTemporaryDirectory() + "pushtrail-full-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        defer { rmdir(point) }
        try #require(Self.mount(point, size: Self.size), "mount tmpfs at \(point): \(String(cString: strerror(errno)))")
        defer { Self.unmount(point) }
        // The fixture lives inside `fill`, so that the store is closed before the unmount.
        try fill(point)
    }

    func fill(_ point: String) throws {
        let fixture = try ServerFixture(samples: false, storePath: point + "/store")
        // Room to free later: written first, while the disk has space.
        let filler = point + "/filler"
        try Data(repeating: 0x55, count: 3 << 20).write(to: URL(fileURLWithPath: filler))
        func head() throws -> ChainHead { try fixture.store.read { try $0.head() } }
        func post(_ bytes: [UInt8]) throws -> ServerFixture.Answer {
            try fixture.request("POST", "/v1/events", headers: AppendTests.ndjson, body: bytes, timeout: 60)
        }

        var accepted: [[String]] = []
        var refused: [(ids: [String], bytes: [UInt8])] = []
        var message = ""
        for n in 0..<50 {
            let body = Self.body(n)
            let before = try head()
            let answer = try post(body.bytes)
            if answer.status == 200 {
                #expect(answer.json["appended"] as? Int == Self.bodyEvents, "body \(n): \(answer.text)")
                accepted.append(body.ids)
                continue
            }
            #expect(answer.status == 503, "body \(n): \(answer.status) \(answer.text)")
            #expect(answer.headers.contains("application/json"), "\(answer.headers)")
            message = answer.json["error"] as? String ?? ""
            #expect(message.hasSuffix("nothing of this body was stored"), "body \(n): \(answer.text)")
            // A full disk is named as one, and the server's paths stay its own.
            #expect(message.contains("No space left on device"), "body \(n): \(answer.text)")
            #expect(!answer.text.contains(fixture.storePath), "body \(n): \(answer.text)")
            #expect(try head() == before, "body \(n) was refused, but the head moved")
            refused.append(body)
            break
        }
        try #require(!refused.isEmpty, "50 bodies of \(Self.bodyEvents) events fit in \(Self.size)")
        #expect(!accepted.isEmpty, "the first body was refused: \(message)")
        var disk = statvfs()
        statvfs(point, &disk)
        print(
            "full disk: \(accepted.count) bodies of \(Self.bodyEvents) events stored, then 503 with "
                + "\(disk.f_bavail * disk.f_frsize) bytes free: \(message)")
        // The same body again, and another of its size: each refused, the head as it was.
        for body in [refused[0], Self.body(100)] {
            let before = try head()
            let answer = try post(body.bytes)
            #expect(answer.status == 503, "\(answer.status) \(answer.text)")
            #expect((answer.json["error"] as? String)?.hasSuffix("nothing of this body was stored") == true)
            #expect(try head() == before)
            refused.append(body)
        }

        // The store holds the accepted bodies whole, in order, and nothing of the refused ones.
        let full = try head()
        #expect(full.seq == UInt64(accepted.count * Self.bodyEvents))
        let stored = try fixture.store.read { reader in
            var ids: [String] = []
            try reader.log(LogQuery()) {
                ids.append($0.event.id)
                return true
            }
            return ids
        }
        #expect(stored == accepted.flatMap { $0 }, "the store holds other events than the accepted bodies'")
        let verify = fixture.cli(["verify"])
        #expect(verify.status == 0, "verify: \(verify.stderr)")
        for ids in accepted {
            for id in [ids[0], ids[ids.count / 2], ids[ids.count - 1]] {
                #expect(fixture.cli(["show", id, "--json"]).status == 0, "\(id) of an accepted body")
            }
        }
        for body in refused {
            for id in [body.ids[0], body.ids[body.ids.count - 1]] {
                #expect(fixture.cli(["show", id, "--json"]).status == 1, "\(id) of a refused body is stored")
            }
        }

        // Reads go on while the disk is full.
        #expect(try fixture.request("GET", "/healthz").status == 200)
        let task = try #require(ServerFixture.sampleLines[0].firstMatch(of: /"task_id":"?(\d+)/)?.1)
        for (route, argv) in [
            ("/v1/head", ["head", "--json"]), ("/v1/tasks/\(task)", ["task", String(task), "--json"]),
            ("/v1/events?limit=20&order=desc", ["log", "--json", "-n", "20", "-r"]),
        ] {
            let answer = try fixture.request("GET", route)
            #expect(answer.status == 200, "\(route) while full: \(answer.status) \(answer.text)")
            #expect(answer.body == fixture.cli(argv).stdout, "\(route) while full")
        }

        // Room again: the refused body is taken whole.
        try FileManager.default.removeItem(atPath: filler)
        let again = try post(refused[0].bytes)
        #expect(again.status == 200, "after freeing space: \(again.status) \(again.text)")
        #expect(again.json["appended"] as? Int == Self.bodyEvents, "\(again.text)")
        #expect(try head().seq == full.seq + UInt64(Self.bodyEvents))
        #expect(fixture.cli(["show", refused[0].ids[Self.bodyEvents - 1], "--json"]).status == 0)
        let after = fixture.cli(["verify"])
        #expect(after.status == 0, "verify after freeing space: \(after.stderr)")
    }
}
