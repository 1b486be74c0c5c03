import Foundation
import PushTrailModel
import PushTrailStore
import Testing

@testable import PushTrailCLI

/// `pushtrail token add | list | revoke`: a secret printed once on stdout alone, lists
/// without secrets, and the exit statuses of the other commands.
@Suite("token: adding, listing and revoking access tokens")
struct TokenCommandTests {
    @Test("add creates the store, prints only the secret on stdout, and says on stderr it is shown once")
    func add() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["token", "add", "ci", "--role", "ingest"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1] == "", "the secret and a line break: \(r.stdout.debugDescription)")
        let secret = String(lines[0])
        #expect(secret.hasPrefix("pt_") && secret.utf8.count == 46, "\(secret)")
        #expect(
            r.stderr
                == "pushtrail: added token ci (ingest); its secret is shown once, "
                + "and the store keeps only its SHA-256\n")
        #expect(exists(dir.store + "/data.mdb"), "the store exists, so a server can open it")
        #expect(mode(of: dir.store) == 0o700)
        #expect(mode(of: dir.store + "/tokens") == 0o600)
        let stored = try AccessTokens.load(storePath: dir.store)
        #expect(stored.matching(secret: Array(secret.utf8))?.name == "ci")
        #expect(stored.tokens.first?.created == CLI.now, "created at the context's clock")
        #expect(!String(decoding: try dir.read("store/tokens"), as: UTF8.self).contains(secret))
    }

    @Test("add --json prints the name, role, creation time and secret as one object")
    func addJSON() throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["token", "add", "ops", "--role=admin", "--json"])
        #expect(r.status == 0, "\(r)")
        let json = try r.json()
        #expect(json.keys == ["name", "role", "created", "secret"])
        #expect(json["name"]?.string == "ops" && json["role"]?.string == "admin")
        #expect(json["created"]?.string == CLI.nowText)
        let secret = try #require(json["secret"]?.string)
        #expect(try AccessTokens.load(storePath: dir.store).matching(secret: Array(secret.utf8))?.role == .admin)
    }

    @Test("list shows name, role and creation time, never a secret or a hash; --json the same as objects")
    func list() throws {
        let dir = try TempDir()
        let secrets = [("ci", "ingest"), ("support-desk", "read"), ("ops", "admin")].map { name, role in
            CLI.run(store: dir.store, ["token", "add", name, "--role", role]).stdout
        }
        let r = CLI.run(store: dir.store, ["token", "list"])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.stdout
                == """
                ci            ingest  \(CLI.nowText)
                support-desk  read    \(CLI.nowText)
                ops           admin   \(CLI.nowText)

                """)
        #expect(r.stderr.isEmpty)
        let j = CLI.run(store: dir.store, ["token", "list", "--json"])
        #expect(j.status == 0, "\(j)")
        let tokens = try #require(try j.json()["tokens"])
        #expect(tokens[0]?.keys == ["name", "role", "created"])
        #expect((0..<3).compactMap { tokens[$0]?["name"]?.string } == ["ci", "support-desk", "ops"])
        #expect((0..<3).compactMap { tokens[$0]?["role"]?.string } == ["ingest", "read", "admin"])
        #expect(tokens[3] == nil)
        let hashes = try AccessTokens.load(storePath: dir.store).tokens.map { SHA256.hex($0.hash) }
        for output in [r.stdout, j.stdout] {
            for secret in secrets { #expect(!output.contains(secret.dropLast())) }
            for hash in hashes { #expect(!output.contains(hash.prefix(16))) }
        }
    }

    @Test("an empty list is exit 0 with nothing on stdout and a hint on stderr; --json an empty array")
    func emptyList() throws {
        let dir = try TempDir()
        _ = CLI.run(store: dir.store, ["ingest", try dir.write("a.ndjson", lines: [Line.delivery("d-1")])])
        let r = CLI.run(store: dir.store, ["token", "list"])
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r)")
        #expect(
            r.stderr
                == "pushtrail: no tokens in \(dir.store): add one with pushtrail token add NAME --role ROLE\n")
        let j = CLI.run(store: dir.store, ["token", "list", "--json"])
        #expect(j.status == 0 && j.stdout == "{\"tokens\":[]}\n" && j.stderr.isEmpty, "\(j)")
    }

    @Test("list and revoke need an existing store, like every reading command, and create none")
    func missingStore() throws {
        let dir = try TempDir()
        for argv in [["token", "list"], ["token", "revoke", "ci"]] {
            let r = CLI.run(store: dir.store, argv)
            #expect(r.status == 74, "\(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.contains("no store at \(dir.store)"), "\(r)")
        }
        #expect(!exists(dir.store))
    }

    @Test("revoke is exit 0, and exit 1 with one line when there is no such token")
    func revoke() throws {
        let dir = try TempDir()
        let secret = CLI.run(store: dir.store, ["token", "add", "ci", "--role", "read"]).stdout
        let r = CLI.run(store: dir.store, ["token", "revoke", "ci"])
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r)")
        #expect(r.stderr == "pushtrail: revoked token ci\n")
        #expect(try AccessTokens.load(storePath: dir.store).matching(secret: Array(secret.dropLast().utf8)) == nil)
        let again = CLI.run(store: dir.store, ["token", "revoke", "ci"])
        #expect(again.status == ExitStatus.notFound, "\(again)")
        #expect(again.stderr == "pushtrail: no token named ci in \(dir.store)\n")
        #expect(again.stdout.isEmpty)
    }

    @Test("adding a name that exists is exit 65 with one line, and the first token keeps working")
    func duplicate() throws {
        let dir = try TempDir()
        let first = CLI.run(store: dir.store, ["token", "add", "ci", "--role", "ingest"]).stdout
        let r = CLI.run(store: dir.store, ["token", "add", "ci", "--role", "admin"])
        #expect(r.status == ExitStatus.dataError, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr
                == "pushtrail: a token named ci already exists in \(dir.store): "
                + "revoke it first, or choose another name\n")
        let tokens = try AccessTokens.load(storePath: dir.store)
        #expect(tokens.tokens.count == 1 && tokens.matching(secret: Array(first.dropLast().utf8))?.role == .ingest)
    }

    @Test(
        "a wrong command line is exit 2, one line and the pointer to --help, before any store exists",
        arguments: [
            (["token"], "name an action: add, list or revoke"),
            (["token", "remove", "ci"], "no token action remove: choose add, list or revoke"),
            (["token", "add", "--role", "read"], "token add needs a NAME"),
            (["token", "add", "a", "b", "--role", "read"], "token add takes one NAME, but got 2"),
            (["token", "add", "ci"], "token add needs --role ingest, read or admin"),
            (["token", "add", "ci", "--role", "writer"], "--role takes ingest, read or admin, not writer"),
            (["token", "add", "ci", "--role"], "--role needs a value (ROLE)"),
            (
                ["token", "add", "c i", "--role", "read"],
                "a token name is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not c i"
            ),
            (
                ["token", "add", String(repeating: "n", count: 65), "--role", "read"],
                "a token name is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not "
                    + String(repeating: "n", count: 65)
            ),
            (["token", "list", "ci"], "token list takes no NAME, but got ci"),
            (["token", "list", "--role", "read"], "--role goes with token add"),
            (["token", "revoke"], "token revoke needs a NAME"),
            (["token", "revoke", "ci", "--json"], "--json goes with token add and token list"),
            (["token", "revoke", "ci", "--role", "read"], "--role goes with token add"),
            (["token", "list", "--secret"], "unknown option --secret for 'token'"),
        ])
    func usageErrors(_ argv: [String], _ message: String) throws {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, argv)
        #expect(r.status == ExitStatus.usage, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrLines == ["pushtrail token: \(message)", "Run 'pushtrail token --help' for usage."], "\(r)")
        #expect(!exists(dir.store), "a usage error opens no store")
    }

    @Test("help lists the three forms and both options")
    func help() {
        let r = CLI.run(["token", "--help"])
        #expect(r.status == 0)
        for text in [
            "pushtrail token add NAME --role ingest|read|admin [--json]", "pushtrail token list [--json]",
            "pushtrail token revoke NAME", "--role ROLE", "--json",
        ] {
            #expect(r.stdout.contains(text), "\(text)")
        }
    }

    @Test("completions offer the actions and the roles")
    func completions() {
        let bash = CompletionCommand.bash()
        #expect(bash.contains("operands=\"add list revoke\""))
        #expect(bash.contains("--role) COMPREPLY=($(compgen -W \"ingest read admin\" -- \"$cur\")); return ;;"))
        #expect(CompletionCommand.fish().contains("-l role -x -a 'ingest read admin'"))
        #expect(CompletionCommand.zsh().contains("'1:add NAME | list | revoke NAME:(add list revoke)'"))
    }

    @Test("the token file stays 0600 under umask 000, and the new store directory 0700")
    func umask() throws {
        let dir = try TempDir()
        let r = try Binary.run(["--store", dir.store, "token", "add", "ci", "--role", "read"], umask: "000")
        #expect(r.status == 0, "\(r)")
        #expect(mode(of: dir.store) == 0o700)
        #expect(mode(of: dir.store + "/tokens") == 0o600)
        #expect(try AccessTokens.load(storePath: dir.store).tokens.count == 1)
    }

    @Test("adds from eight processes at once all land, each secret matching its own token")
    func concurrentProcesses() throws {
        let dir = try TempDir()
        _ = CLI.run(store: dir.store, ["token", "add", "first", "--role", "admin"])
        let names = (0..<8).map { "p\($0)" }
        let running = try names.map { name in
            try Binary.start(["--store", dir.store, "token", "add", name, "--role", "ingest"])
        }
        let outcomes = try running.map { try $0.wait() }
        for (name, r) in zip(names, outcomes) { #expect(r.status == 0, "\(name): \(r)") }
        let tokens = try AccessTokens.load(storePath: dir.store)
        #expect(tokens.tokens.count == 9)
        #expect(Set(tokens.tokens.map(\.name)) == Set(names + ["first"]))
        for (name, r) in zip(names, outcomes) {
            #expect(tokens.matching(secret: Array(r.stdout.dropLast().utf8))?.name == name)
        }
    }
}
