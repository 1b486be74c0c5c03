import Foundation
import Testing

@Suite("Exit statuses, usage and help")
struct ExitStatusTests {
    static let commands = ["ingest", "import", "show", "head", "stats", "verify"]
    static let readingCommands: [[String]] = [
        ["show", "@1"], ["head"], ["stats"], ["verify"], ["show", "--json", "x"], ["stats", "--json"],
    ]

    @Test(
        "a reading command on a missing store is exit 74 with one line, and creates nothing", arguments: readingCommands
    )
    func missingStore(_ argv: [String]) throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, argv)
        #expect(r.status == 74, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrLines.count == 1, "\(r)")
        #expect(r.stderr.hasPrefix("pushtrail: "))
        #expect(r.stderr.contains(dir.store))
        #expect(r.stderr.contains("ingest events first, or pass --store DIR"), "it says what to do: \(r.stderr)")
        #expect(!exists(dir.store), "a reading command must not create the store")
    }

    @Test("a directory without a store in it counts as a missing store for reading commands")
    func emptyDirectory() throws {
        let dir = try TempDir()
        try FileManager.default.createDirectory(
            atPath: dir.store, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let r = CLI.run(store: dir.store, ["stats"])
        #expect(r.status == 74)
        #expect(r.stderrLines.count == 1)
        #expect(!exists(dir.store + "/data.mdb"))
    }

    @Test("a store path that is a file is exit 74")
    func storeIsAFile() throws {
        let dir = try TempDir()
        let file = try dir.write("plain", bytes: Array("x".utf8))
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d")])
        #expect(CLI.run(store: file, ["stats"]).status == 74)
        #expect(CLI.run(store: file, ["ingest", input]).status == 74)
    }

    @Test("an unknown command is exit 2 with a pointer to --help")
    func unknownCommand() {
        let r = CLI.run(["frobnicate"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("frobnicate"))
        #expect(r.stderr.contains("--help"))
        #expect(r.stdout.isEmpty)
    }

    @Test("an unknown option is exit 2 with a pointer to --help", arguments: commands)
    func unknownOption(_ command: String) throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, [command, "--no-such-option"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("--no-such-option"))
        #expect(r.stderr.contains("--help"))
        #expect(!exists(dir.store))
    }

    @Test("an unknown option before the command is exit 2 with a pointer to --help")
    func unknownGlobalOption() {
        let r = CLI.run(["--bogus", "stats"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--help"))
    }

    @Test("no command at all is a usage error that shows the commands")
    func noCommand() {
        let r = CLI.run([])
        #expect(r.status == 2)
        #expect(r.stderr.contains("Usage:"))
    }

    @Test("--help on every command is exit 0 with a Usage: text naming the command", arguments: commands)
    func help(_ command: String) {
        for argv in [[command, "--help"], [command, "-h"], ["help", command], ["--help", command]] {
            let r = CLI.run(argv)
            #expect(r.status == 0, "\(argv): \(r)")
            #expect(r.stdout.contains("Usage:"), "\(argv)")
            #expect(r.stdout.contains("pushtrail \(command)"), "\(argv)")
            #expect(r.stderr.isEmpty)
        }
    }

    @Test("--help wins over missing arguments and needs no store")
    func helpNeedsNothing() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["show", "--help"])
        #expect(r.status == 0)
        #expect(!exists(dir.store))
    }

    @Test("the root --help lists every command")
    func rootHelp() {
        let r = CLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Usage:"))
        for c in ExitStatusTests.commands { #expect(r.stdout.contains(c)) }
    }

    @Test("an option missing its value is a usage error")
    func missingValue() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["ingest", "--rejects"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--rejects"))
    }

    @Test("the real process exits 0, 1, 2, 65 and 74, the exit statuses")
    func realProcessStatuses() throws {
        let dir = try TempDir()
        let good = try dir.write("good.ndjson", lines: [Line.delivery("d-1")])
        let bad = try dir.write("bad.ndjson", lines: [Line.delivery("d-2"), "{"])
        #expect(try Binary.run(["--store", dir.store, "stats"]).status == 74)
        #expect(try Binary.run(["--store", dir.store, "ingest", good]).status == 0)
        #expect(try Binary.run(["--store", dir.store, "ingest", bad]).status == 65)
        #expect(try Binary.run(["--store", dir.store, "show", "nope"]).status == 1)
        #expect(try Binary.run(["--store", dir.store, "nope"]).status == 2)
        #expect(try Binary.run(["--store", dir.store, "verify"]).status == 0)
        let help = try Binary.run(["ingest", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Usage:"))
        let version = try Binary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("pushtrail "))
    }
}

@Suite("Store permissions")
struct PermissionTests {
    @Test("ingest into a new store creates the directory 0700 and its files 0600, even under umask 000")
    func newStoreModes() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        let r = try Binary.run(["--store", dir.store, "ingest", input], umask: "000")
        #expect(r.status == 0, "\(r)")
        #expect(mode(of: dir.store) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.store)
        #expect(files.contains("data.mdb"))
        #expect(files.contains("lock.mdb"))
        for f in files {
            #expect(
                mode(of: dir.store + "/" + f) == 0o600,
                "\(f) has mode \(String(mode(of: dir.store + "/" + f) ?? 0, radix: 8))")
        }
    }

    @Test("ingest in-process also creates 0700 and 0600")
    func newStoreModesInProcess() throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        #expect(mode(of: dir.store) == 0o700)
        #expect(mode(of: dir.store + "/data.mdb") == 0o600)
        #expect(mode(of: dir.store + "/lock.mdb") == 0o600)
    }

    @Test(
        "a store directory writable by others (0777, 0722) is refused with exit 74, for writing and reading",
        arguments: [0o777, 0o722] as [Int])
    func insecureStore(_ permissions: Int) throws {
        let dir = try TempDir()
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        #expect(CLI.run(store: dir.store, ["ingest", input]).status == 0)
        chmod(dir.store, mode_t(permissions))
        defer { chmod(dir.store, 0o700) }

        let ingest = CLI.run(store: dir.store, ["ingest", input])
        #expect(ingest.status == 74, "\(ingest)")
        #expect(ingest.stderrLines.count == 1)
        #expect(ingest.stderr.contains("chmod 700"), "the message should say what to do: \(ingest.stderr)")
        let stats = CLI.run(store: dir.store, ["stats"])
        #expect(stats.status == 74)
        #expect(stats.stderrLines.count == 1)
        let real = try Binary.run(["--store", dir.store, "verify"])
        #expect(real.status == 74)
    }

    @Test("an existing world-writable directory is refused before a store is created in it")
    func insecureNewDirectory() throws {
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.store, withIntermediateDirectories: false)
        chmod(dir.store, 0o777)
        defer { chmod(dir.store, 0o700) }
        let input = try dir.write("in.ndjson", lines: [Line.delivery("d-1")])
        let r = CLI.run(store: dir.store, ["ingest", input])
        #expect(r.status == 74)
        #expect(!exists(dir.store + "/data.mdb"))
    }
}
