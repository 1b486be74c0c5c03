import Foundation
import PushTrailModel
import PushTrailStore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Running the executable in a chosen working directory (default export names are
/// relative to it), and listing a directory tree without following symlinks.
enum PathSafetyKit {
    /// Runs the built executable with `arguments` in `directory`, optionally under
    /// `umask`; fails after `timeout` seconds instead of hanging.
    static func run(
        _ arguments: [String], in directory: String, umask: String? = nil, timeout: TimeInterval = 30
    ) throws -> Outcome {
        try Binary.start(arguments, umask: umask, directory: directory, timeout: timeout).wait()
    }

    /// Every entry under `root` (symlinks listed, never followed), relative path →
    /// what it is: `dir`, `link -> target`, `fifo`, or `file <size> <sha256>`. Paths
    /// under `skipping` are listed by name only (a store's lock file changes on reads).
    static func tree(_ root: String, skipping: Set<String> = []) -> [String: String] {
        var out: [String: String] = [:]
        func walk(_ relative: String) {
            let full = relative.isEmpty ? root : root + "/" + relative
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: full) else { return }
            for name in names {
                let rel = relative.isEmpty ? name : relative + "/" + name
                let path = root + "/" + rel
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    out[rel] = "dir"
                    walk(rel)
                case S_IFLNK:
                    out[rel] = "link -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
                case S_IFREG:
                    if skipping.contains(where: { rel.hasPrefix($0) }) {
                        out[rel] = "file"
                    } else {
                        let bytes = Array(FileManager.default.contents(atPath: path) ?? Data())
                        out[rel] = "file \(bytes.count) " + SHA256.hex(bytes.withUnsafeBytes { SHA256.digest($0) })
                    }
                case S_IFIFO: out[rel] = "fifo"
                default: out[rel] = "other"
                }
            }
        }
        walk("")
        return out
    }

    /// Whether `name` is a file name export may build: letters, digits, `._-` only,
    /// not hidden, at most 255 bytes, ending `-<seq>.apns`.
    static func isSafeName(_ name: String, seq: Int) -> Bool {
        name.utf8.count <= 255 && !name.hasPrefix(".") && name.hasSuffix("-\(seq).apns")
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}

/// A test tree: `root/store` (a store of one notification per hostile thread id),
/// `root/outside` (a victim file, never to be touched), `root/work/out` (where exports go).
final class HostileTree {
    let dir: TempDir
    var root: String { dir.path }
    var store: String { dir.store }
    var out: String { dir.file("work/out") }
    var outside: String { dir.file("outside") }
    var victim: String { outside + "/victim" }
    static let victimText = "do not touch\n"
    /// An absolute path outside the tree, which must not appear.
    let farAway = NSTemporaryDirectory() + "/pushtrail-pathsafety-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// (thread id, seq) of every stored notification.
    private(set) var threads: [(thread: String, seq: Int)] = []

    /// 50 hostile thread ids: traversal, absolute paths, NUL and control characters,
    /// 255-byte names, Unicode look-alikes of `/` and `.`, shell and option syntax.
    func hostileIDs() -> [String] {
        [
            "../../x", "../x", "..", ".", "...", "/etc/passwd", root + "/outside/abs", "../outside/rel",
            "../../outside/rel2",
            farAway, "a/b/c", "a/../../b", "./x", "x/", "//x", "~", "~/x", "..\\..\\x", "\\\\server\\share",
            "a\u{0}b", "\u{0}", "x\ny", "x\ry", "x\ty", "x\u{7F}", "\u{1B}[31mred",
            String(repeating: "a", count: 255), String(repeating: "é", count: 127) + "a",
            String(repeating: "../", count: 85),
            String(repeating: "/", count: 255),
            "\u{2215}etc\u{2215}passwd",  // DIVISION SLASH
            "\u{FF0F}etc\u{FF0F}passwd",  // FULLWIDTH SOLIDUS
            "\u{2044}x",  // FRACTION SLASH
            "\u{2024}\u{2024}/x",  // ONE DOT LEADER
            "\u{FF0E}\u{FF0E}\u{FF0F}x",  // FULLWIDTH FULL STOP, SOLIDUS
            "t\u{0430}sk-1",  // Cyrillic a
            "\u{202E}txt.exe",  // RIGHT-TO-LEFT OVERRIDE
            "\u{200B}", "\u{FEFF}x", "task\u{00AD}1", "📁/x",
            "-rf", "--force", "$(touch pwned)", "`touch pwned`", "a;b|c&d", "*", "?", "%2e%2e%2fx", ".hidden",
        ]
    }

    init() throws {
        dir = try TempDir()
        let fm = FileManager.default
        try fm.createDirectory(atPath: out, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: outside, withIntermediateDirectories: true)
        guard fm.createFile(atPath: victim, contents: Data(HostileTree.victimText.utf8)) else {
            throw HarnessError("victim")
        }
        let ids = hostileIDs()
        #expect(ids.count == 50)
        #expect(Set(ids).count == 50)
        let lines = ids.enumerated().map { i, thread in
            Line.notification(
                String(format: "00000000-0000-4000-8000-%012d", i + 1), thread: thread, task: 1100 + i,
                at: "2026-11-20T10:00:\(String(format: "%02d", i))Z", extra: ",\"topic\":\"com.example.app\"")
        }
        let input = try dir.write("hostile.ndjson", lines: lines)
        let r = CLI.run(store: store, ["ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        threads = ids.enumerated().map { (thread: $0.element, seq: $0.offset + 1) }
    }

    /// The tree as it stands, the store's files by name only.
    func snapshot() -> [String: String] { PathSafetyKit.tree(root, skipping: ["store/"]) }

    /// The entries of `after` that are new or changed since `before`, outside `allowed`.
    func changes(from before: [String: String], to after: [String: String], allowedUnder allowed: String) -> [String] {
        let prefix = allowed.hasPrefix(root + "/") ? String(allowed.dropFirst(root.count + 1)) + "/" : allowed
        var out: [String] = []
        for (path, what) in after where before[path] != what && !path.hasPrefix(prefix) && path + "/" != prefix {
            out.append("\(path): \(what)")
        }
        for path in before.keys where after[path] == nil { out.append("\(path): removed") }
        return out.sorted()
    }
}

@Suite(
    "path safety: export and --rejects never write outside the output dir, follow symlinks or overwrite without --force"
)
struct PathSafetyTests {
    @Test(
        "export EVENT_ID of 50 notifications with hostile thread ids: 50 safe names in the cwd, 0 writes elsewhere"
    )
    func defaultNames() throws {
        let tree = try HostileTree()
        let before = tree.snapshot()
        for (thread, seq) in tree.threads {
            let id = String(format: "00000000-0000-4000-8000-%012d", seq)
            let r = try PathSafetyKit.run(["--store", tree.store, "export", id], in: tree.out)
            #expect(r.status == 0, "thread \(thread.debugDescription): \(r)")
        }
        let after = tree.snapshot()
        #expect(tree.changes(from: before, to: after, allowedUnder: tree.out) == [])
        #expect(!exists(tree.farAway))
        #expect(!exists("/etc/passwd-1.apns") && !exists("/x-1.apns"))
        let names = try FileManager.default.contentsOfDirectory(atPath: tree.out)
        #expect(names.count == 50, "\(names.sorted())")
        for (thread, seq) in tree.threads {
            let mine = names.filter { $0.hasSuffix("-\(seq).apns") }
            #expect(mine.count == 1, "thread \(thread.debugDescription): \(mine)")
            guard let name = mine.first else { continue }
            #expect(PathSafetyKit.isSafeName(name, seq: seq), "\(name.debugDescription)")
            #expect(mode(of: tree.out + "/" + name) == 0o600)
            // The file is the notification, its thread id untouched inside.
            let json = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tree.out + "/" + name))))
            #expect(json.keys.first == "Simulator Target Bundle")
            #expect(json["aps"]?["thread-id"]?.string == thread, "\(name)")
        }
    }

    @Test(
        "export --thread X --all --dir DIR for every hostile thread id: one safe name each in DIR, 0 writes elsewhere"
    )
    func allIntoDirectory() throws {
        let tree = try HostileTree()
        let before = tree.snapshot()
        let dir = tree.out + "/all"
        var exported = 0
        for (thread, seq) in tree.threads {
            // A NUL cannot travel in argv; those threads are reached by event id above.
            if thread.contains("\u{0}") { continue }
            let r = CLI.run(store: tree.store, ["export", "--thread", thread, "--all", "--dir", dir])
            #expect(r.status == 0, "thread \(thread.debugDescription): \(r)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            let mine = names.filter { $0.hasSuffix("-\(seq).apns") }
            #expect(
                mine.count == 1 && mine.allSatisfy { $0.hasPrefix("01-") && PathSafetyKit.isSafeName($0, seq: seq) },
                "\(mine)")
            exported += 1
        }
        #expect(exported == 48)
        #expect(tree.changes(from: before, to: tree.snapshot(), allowedUnder: dir) == [])
        #expect((try FileManager.default.contentsOfDirectory(atPath: dir)).count == 48)
        #expect(!exists(tree.farAway))
    }

    @Test(
        "-o to a planted symlink (to a file, dangling, to a dir) is refused, --force or not; the target is untouched"
    )
    func symlinkAtOutput() throws {
        let tree = try HostileTree()
        let id = String(format: "00000000-0000-4000-8000-%012d", 1)
        let links = [
            ("to-victim.apns", tree.victim), ("dangling.apns", tree.outside + "/created-through-link"),
            ("to-dir.apns", tree.outside), ("relative.apns", "../../outside/victim"),
        ]
        for (name, target) in links {
            try FileManager.default.createSymbolicLink(atPath: tree.out + "/" + name, withDestinationPath: target)
        }
        let before = tree.snapshot()
        for (name, _) in links {
            for force in [false, true] {
                let r = CLI.run(
                    store: tree.store, ["export", id, "-o", tree.out + "/" + name] + (force ? ["--force"] : []))
                #expect(r.status == 74, "\(name) force \(force): \(r)")
                #expect(r.stderrLines.count == 1 && r.stderr.hasPrefix("pushtrail: "), "\(r)")
            }
        }
        #expect(tree.snapshot() == before)
        #expect(try String(contentsOfFile: tree.victim, encoding: .utf8) == HostileTree.victimText)
        #expect(!exists(tree.outside + "/created-through-link"))
    }

    @Test("a symlink planted at the default name or at an --all file name is refused with or without --force")
    func symlinkAtDefaultName() throws {
        let tree = try HostileTree()
        // Thread "../x" is seq 2: its default name is "_._x-2.apns".
        let id = String(format: "00000000-0000-4000-8000-%012d", 2)
        let name = SafeFileName.apns(stem: "../x", seq: 2)
        #expect(name == "_._x-2.apns")
        try FileManager.default.createSymbolicLink(atPath: tree.out + "/" + name, withDestinationPath: tree.victim)
        try FileManager.default.createDirectory(atPath: tree.out + "/all", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: tree.out + "/all/01-" + name, withDestinationPath: tree.victim)
        let before = tree.snapshot()
        for force in [false, true] {
            let f = force ? ["--force"] : []
            let r = try PathSafetyKit.run(["--store", tree.store, "export", id] + f, in: tree.out)
            #expect(r.status == 74, "default name, force \(force): \(r)")
            #expect(r.stderrLines.count == 1, "\(r)")
            let all = CLI.run(
                store: tree.store, ["export", "--thread", "../x", "--all", "--dir", tree.out + "/all"] + f)
            #expect(all.status == 74, "--all, force \(force): \(all)")
        }
        #expect(tree.snapshot() == before)
        #expect(try String(contentsOfFile: tree.victim, encoding: .utf8) == HostileTree.victimText)
    }

    @Test(
        "--all --dir naming a planted symlink to another dir is refused (DESIGN: export never writes through a symlink)"
    )
    func symlinkAsDirectory() throws {
        let tree = try HostileTree()
        try FileManager.default.createSymbolicLink(atPath: tree.out + "/linked", withDestinationPath: tree.outside)
        let before = tree.snapshot()
        let r = CLI.run(store: tree.store, ["export", "--thread", "../x", "--all", "--dir", tree.out + "/linked"])
        #expect(r.status == 74, "\(r)")
        #expect(tree.snapshot() == before, "nothing written into \(tree.outside) through the link")
    }

    @Test(
        "a file at -o, the default name or an --all name is kept without --force (exit 74) and replaced, 0600, with it"
    )
    func existingFile() throws {
        let tree = try HostileTree()
        let id = String(format: "00000000-0000-4000-8000-%012d", 3)  // thread ".."
        let old = Data("old contents\n".utf8)
        let defaultName = SafeFileName.apns(stem: "..", seq: 3)
        let targets = [tree.out + "/existing.apns", tree.out + "/" + defaultName]
        for t in targets {
            #expect(FileManager.default.createFile(atPath: t, contents: old, attributes: [.posixPermissions: 0o644]))
        }
        try FileManager.default.createDirectory(atPath: tree.out + "/all", withIntermediateDirectories: false)
        let allName = tree.out + "/all/01-" + defaultName
        #expect(FileManager.default.createFile(atPath: allName, contents: old, attributes: [.posixPermissions: 0o644]))
        let before = tree.snapshot()

        let runs: [(String, () throws -> Outcome)] = [
            ("-o", { CLI.run(store: tree.store, ["export", id, "-o", targets[0]]) }),
            ("default", { try PathSafetyKit.run(["--store", tree.store, "export", id], in: tree.out) }),
            (
                "--all",
                { CLI.run(store: tree.store, ["export", "--thread", "..", "--all", "--dir", tree.out + "/all"]) }
            ),
        ]
        for (what, run) in runs {
            let r = try run()
            #expect(r.status == 74, "\(what): \(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.contains("--force"), "\(what): \(r)")
        }
        #expect(tree.snapshot() == before, "nothing overwritten without --force")

        #expect(CLI.run(store: tree.store, ["export", id, "-o", targets[0], "--force"]).status == 0)
        #expect(try PathSafetyKit.run(["--store", tree.store, "export", id, "--force"], in: tree.out).status == 0)
        #expect(
            CLI.run(store: tree.store, ["export", "--thread", "..", "--all", "--dir", tree.out + "/all", "--force"])
                .status == 0)
        for path in targets + [allName] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(try JSON.parse(bytes)["Simulator Target Bundle"]?.string == "com.example.app", "\(path)")
            #expect(mode(of: path) == 0o600, "\(path): \(String(mode(of: path) ?? 0, radix: 8))")
        }
        #expect(tree.changes(from: before, to: tree.snapshot(), allowedUnder: tree.out) == [])
    }

    @Test("a directory or a FIFO at the output path is refused, not written into or waited on")
    func specialFiles() throws {
        let tree = try HostileTree()
        let id = String(format: "00000000-0000-4000-8000-%012d", 1)
        try FileManager.default.createDirectory(atPath: tree.out + "/a-dir.apns", withIntermediateDirectories: false)
        #expect(mkfifo(tree.out + "/a-fifo.apns", 0o600) == 0)
        let before = tree.snapshot()
        for name in ["a-dir.apns", "a-fifo.apns"] {
            for force in [false, true] {
                let r: Outcome
                do {
                    r = try PathSafetyKit.run(
                        ["--store", tree.store, "export", id, "-o", tree.out + "/" + name] + (force ? ["--force"] : []),
                        in: tree.out, timeout: 10)
                } catch {
                    Issue.record("\(name), force \(force): \(error)")
                    continue
                }
                #expect(r.status == 74, "\(name), force \(force): \(r)")
            }
        }
        #expect(tree.snapshot() == before)
    }

    @Test(
        "--rejects PATH via a planted symlink (file, dangling) or a FIFO is refused; target untouched, nothing ingested"
    )
    func rejectsPath() throws {
        let tree = try HostileTree()
        let input = try tree.dir.write("mixed.ndjson", lines: [Line.delivery("new-1"), "not json"])
        try FileManager.default.createSymbolicLink(atPath: tree.out + "/rejects-link", withDestinationPath: tree.victim)
        try FileManager.default.createSymbolicLink(
            atPath: tree.out + "/rejects-dangling", withDestinationPath: tree.outside + "/created-through-link")
        #expect(mkfifo(tree.out + "/rejects-fifo", 0o600) == 0)
        let eventsBefore = try CLI.stats(tree.store)["events"]?.int
        let before = tree.snapshot()
        for name in ["rejects-link", "rejects-dangling", "rejects-fifo"] {
            let r: Outcome
            do {
                r = try PathSafetyKit.run(
                    ["--store", tree.store, "ingest", input, "--rejects", tree.out + "/" + name], in: tree.out,
                    timeout: 10)
            } catch {
                Issue.record("\(name): \(error)")
                continue
            }
            #expect(r.status == 74, "\(name): \(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.hasPrefix("pushtrail: "), "\(name): \(r)")
        }
        #expect(tree.snapshot() == before)
        #expect(try String(contentsOfFile: tree.victim, encoding: .utf8) == HostileTree.victimText)
        #expect(!exists(tree.outside + "/created-through-link"))
        #expect(try CLI.stats(tree.store)["events"]?.int == eventsBefore)
    }
}
