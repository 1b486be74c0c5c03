import Foundation
import PushTrailModel
import Testing

@testable import PushTrailCLI

/// `pushtrail serve`: its options are checked here, and the process becomes
/// `pushtrail-server`, found beside pushtrail or on PATH, with the store every command
/// would use. Never run in-process past parsing: it would replace the test runner.
@Suite("serve: finding pushtrail-server and handing it the command line")
struct ServeCommandTests {
    /// The options `argv` gives `serve`.
    static func parse(_ argv: [String]) throws -> ServeCommand.Options {
        try ServeCommand.options(argv, clock: { CLI.now })
    }

    /// An executable shell script at `path` that writes its argv[0] and arguments, one a
    /// line, to `record`, then (on Linux) its ignored signals, and exits 7. Builtins only:
    /// the tests run it with a PATH that holds nothing.
    static func fakeServer(_ path: String, record: String) throws {
        let script = """
            #!/bin/sh
            printf '%s\\n' "$0" "$@" > '\(record)'
            if [ -r /proc/$$/status ]; then
                while read -r key value; do
                    if [ "$key" = SigIgn: ]; then echo "$key $value" >> '\(record)'; fi
                done < /proc/$$/status
            fi
            exit 7

            """
        guard FileManager.default.createFile(atPath: path, contents: Data(script.utf8)) else {
            throw HarnessError("cannot write \(path)")
        }
        chmod(path, 0o755)
    }

    @Test("the options are passed on as given after --store, --max-body in plain bytes")
    func arguments() throws {
        let options = try Self.parse([
            "--max-body", "2M", "--tls-key", "k.pem", "--listen", "0.0.0.0:8443", "--tls-cert", "c.pem",
        ])
        #expect(
            options == .init(listen: "0.0.0.0:8443", tlsCertificate: "c.pem", tlsKey: "k.pem", maxBody: 2_097_152))
        #expect(
            ServeCommand.serverArguments(store: "/srv/s", options)
                == [
                    "--store", "/srv/s", "--listen", "0.0.0.0:8443", "--tls-cert", "c.pem", "--tls-key", "k.pem",
                    "--max-body", "2097152",
                ])
        #expect(
            ServeCommand.serverArguments(store: "pushtrail.lmdb", try Self.parse([])) == ["--store", "pushtrail.lmdb"])
        #expect(
            ServeCommand.serverArguments(store: "s", try Self.parse(["--listen=[::1]:0"]))
                == ["--store", "s", "--listen", "[::1]:0"])
    }

    @Test("--max-body takes bytes, K, M or G (binary multiples)")
    func byteCounts() {
        let good: [(String, Int64)] = [
            ("1", 1), ("65536", 65536), ("64K", 65536), ("64k", 65536), ("64M", 67_108_864), ("1G", 1_073_741_824),
            ("3g", 3 << 30),
        ]
        for (text, bytes) in good { #expect(ServeCommand.byteCount(text) == bytes, "\(text)") }
        for text in ["", "0", "0K", "M", "-1", "+5", "1.5M", "64MB", "64 M", "1T", "x", "99999999999G", " 1"] {
            #expect(ServeCommand.byteCount(text) == nil, "\(text)")
        }
    }

    @Test(
        "a bad --max-body or half a TLS pair is exit 2 with one line and the pointer to --help",
        arguments: [
            (
                ["serve", "--max-body", "64MB"],
                "--max-body takes a number of bytes, with K, M or G for KiB, MiB or GiB (like 64M), not 64MB"
            ),
            (
                ["serve", "--max-body", "0"],
                "--max-body takes a number of bytes, with K, M or G for KiB, MiB or GiB (like 64M), not 0"
            ),
            (["serve", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together: HTTPS needs both"),
            (["serve", "--tls-key", "k.pem"], "--tls-cert and --tls-key go together: HTTPS needs both"),
            (["serve", "--listen"], "--listen needs a value (ADDR:PORT)"),
            (["serve", "extra"], "'serve' takes no operands, but got extra"),
        ])
    func usageErrors(_ argv: [String], _ message: String) {
        let r = CLI.run(argv)
        #expect(r.status == ExitStatus.usage, "\(r)")
        #expect(r.stderrLines == ["pushtrail serve: \(message)", "Run 'pushtrail serve --help' for usage."], "\(r)")
    }

    @Test("pushtrail-server is looked for beside pushtrail first, then on PATH, and must be an executable file")
    func lookup() throws {
        let dir = try TempDir()
        for d in ["bin", "path1", "path2", "empty"] { mkdir(dir.file(d), 0o700) }
        let pushtrail = dir.file("bin/pushtrail")
        let onPath = dir.file("path1:") + dir.file("path2")
        #expect(ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath) == nil)
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: nil) == nil
                || exists("/usr/bin/pushtrail-server"))

        try Self.fakeServer(dir.file("path2/pushtrail-server"), record: "/dev/null")
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath)
                == dir.file("path2/pushtrail-server"))
        try Self.fakeServer(dir.file("path1/pushtrail-server"), record: "/dev/null")
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath)
                == dir.file("path1/pushtrail-server"))

        // Not executable, or a directory: passed over.
        try dir.write("bin/pushtrail-server", bytes: Array("#!/bin/sh\n".utf8))
        chmod(dir.file("bin/pushtrail-server"), 0o644)
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath)
                == dir.file("path1/pushtrail-server"))
        unlink(dir.file("bin/pushtrail-server"))
        mkdir(dir.file("bin/pushtrail-server"), 0o700)
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath)
                == dir.file("path1/pushtrail-server"))
        rmdir(dir.file("bin/pushtrail-server"))

        try Self.fakeServer(dir.file("bin/pushtrail-server"), record: "/dev/null")
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: onPath)
                == dir.file("bin/pushtrail-server"))
        #expect(
            ServeCommand.companion("pushtrail-server", nextTo: pushtrail, path: "") == dir.file("bin/pushtrail-server"))
    }

    @Test("the running executable is this test runner, named by its real path")
    func runningExecutable() throws {
        let exe = try #require(ServeCommand.runningExecutable())
        #expect(exe.hasPrefix("/"))
        #expect(exists(exe))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: exe)) == nil, "not a link")
    }

    /// `path` with links and doubled slashes resolved, as the kernel names a running file.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A copy of the built pushtrail in `dir/bin`, so what sits beside it is the test's.
    static func copyOfPushtrail(_ dir: TempDir) throws -> String {
        mkdir(dir.file("bin"), 0o700)
        let copy = dir.file("bin/pushtrail")
        try FileManager.default.copyItem(atPath: try Binary.path(), toPath: copy)
        return copy
    }

    @Test("with no pushtrail-server beside pushtrail nor on PATH, serve is exit 74 with one line")
    func notInstalled() throws {
        let dir = try TempDir()
        let pushtrail = try Self.copyOfPushtrail(dir)
        let r = try Binary.run(["serve"], environment: ["PATH": dir.file("nowhere")], executable: pushtrail)
        #expect(r.status == ExitStatus.ioError, "\(r)")
        #expect(
            r.stderr
                == "pushtrail: pushtrail-server is not installed next to pushtrail nor on PATH: "
                + "run Scripts/install.sh\n")
        #expect(r.stdout.isEmpty)
    }

    @Test("serve becomes the pushtrail-server beside it, with --store resolved as every command resolves it")
    func execsServerBeside() throws {
        let dir = try TempDir()
        let pushtrail = try Self.copyOfPushtrail(dir)
        let record = dir.file("argv")
        try Self.fakeServer(dir.file("bin/pushtrail-server"), record: record)
        let r = try Binary.run(
            ["serve", "--listen", "127.0.0.1:0", "--max-body", "2K", "--tls-cert", "c", "--tls-key", "k"],
            environment: ["PATH": dir.file("nowhere"), "PUSHTRAIL_STORE": dir.store], executable: pushtrail)
        #expect(r.status == 7, "the exit status is the server's: \(r)")
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(
            Array(lines.prefix(11))
                == [
                    Self.canonical(dir.file("bin/pushtrail-server")), "--store", dir.store, "--listen", "127.0.0.1:0",
                    "--tls-cert",
                    "c",
                    "--tls-key", "k", "--max-body", "2048",
                ])
        #if os(Linux)
            // SIGPIPE is signal 13: bit 12 of the ignored mask.
            let ignored = try #require(lines.last { $0.hasPrefix("SigIgn:") })
            let mask = try #require(UInt64(ignored.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16))
            #expect(mask & (1 << 12) == 0, "the server starts with SIGPIPE at its default: \(ignored)")
        #endif

        // --store wins over PUSHTRAIL_STORE, before or after the command; the default is ./pushtrail.lmdb.
        for argv in [["--store", "/x", "serve"], ["serve", "--store=/x"]] {
            _ = try Binary.run(argv, environment: ["PUSHTRAIL_STORE": dir.store], executable: pushtrail)
            #expect(try String(contentsOfFile: record, encoding: .utf8).contains("\n--store\n/x\n"), "\(argv)")
        }
        _ = try Binary.run(["serve"], executable: pushtrail)
        #expect(try String(contentsOfFile: record, encoding: .utf8).contains("\n--store\npushtrail.lmdb\n"))
    }

    @Test("with none beside it, serve becomes the pushtrail-server on PATH")
    func execsServerOnPath() throws {
        let dir = try TempDir()
        let pushtrail = try Self.copyOfPushtrail(dir)
        mkdir(dir.file("path"), 0o700)
        let record = dir.file("argv")
        try Self.fakeServer(dir.file("path/pushtrail-server"), record: record)
        let r = try Binary.run(["serve"], environment: ["PATH": dir.file("path")], executable: pushtrail)
        #expect(r.status == 7, "\(r)")
        let argv0 = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").first.map(String.init)
        #expect(argv0 == dir.file("path/pushtrail-server"), "found on PATH, named as PATH names it")
    }

    @Test("help, the man page and the completions know serve's options; the TLS files complete as files")
    func declared() {
        let help = CLI.run(["serve", "--help"])
        #expect(help.status == 0)
        for text in [
            "pushtrail serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--max-body BYTES] [--store DIR]",
            "the address to listen on (default 127.0.0.1:8080)", "PEM certificate: serve HTTPS",
            "PEM private key: serve HTTPS", "the largest request body accepted (default 64M)",
        ] {
            #expect(help.stdout.contains(text), "\(text)")
        }
        let bash = CompletionCommand.bash()
        #expect(bash.contains("--tls-cert) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;"))
        #expect(bash.contains("--tls-key) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;"))
        #expect(CompletionCommand.zsh().contains("'--tls-cert[PEM certificate\\: serve HTTPS]:FILE:_files'"))
        #expect(CompletionCommand.fish().contains("-l tls-key -r -F"))
        let page = ManpageCommand.page()
        #expect(page.contains(".SS serve") && page.contains(".B \\-\\-max\\-body BYTES"))
    }
}
