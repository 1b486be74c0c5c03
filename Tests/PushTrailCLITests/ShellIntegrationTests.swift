import Foundation
import Testing

/// Completion scripts and the man page come from the same declarations as --help;
/// these tests load them in the real shells.
@Suite("Shell integration: completion scripts and the man page")
struct ShellIntegrationTests {
    /// Runs `shell` with `arguments`, returning (status, stdout).
    static func shell(_ shell: String, _ arguments: [String]) throws -> (Int32, String) {
        try Tool.run(shell, arguments)
    }

    static func script(_ shell: String, in dir: TempDir) throws -> String {
        let outcome = CLI.run(["completion", shell])
        #expect(outcome.status == 0, "\(outcome)")
        return try dir.write("pushtrail.\(shell)", bytes: outcome.stdoutBytes)
    }

    /// What bash completes for `words` (the last one being completed).
    static func bashCompletes(_ script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program =
            "source '\(script)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); "
            + "_pushtrail; printf '%s\\n' \"${COMPREPLY[@]}\""
        let (status, out) = try shell("bash", ["-c", program])
        #expect(status == 0)
        return out.split(separator: "\n").map(String.init)
    }

    @Test("the bash script loads in bash and completes commands, options and their values")
    func bash() throws {
        let dir = try TempDir()
        let script = try Self.script("bash", in: dir)
        #expect(try Self.shell("bash", ["-n", script]).0 == 0)
        #expect(try Self.bashCompletes(script, ["pushtrail", "th"]) == ["thread"])
        #expect(
            Set(try Self.bashCompletes(script, ["pushtrail", ""])).isSuperset(of: [
                "ingest", "log", "audit", "export", "verify",
            ]))
        #expect(try Self.bashCompletes(script, ["pushtrail", "ingest", "--st"]) == ["--strict", "--store"])
        #expect(try Self.bashCompletes(script, ["pushtrail", "--store", "x", "log", "--ty"]) == ["--type"])
        #expect(try Self.bashCompletes(script, ["pushtrail", "log", "--type", "de"]) == ["delivery"])
        #expect(
            try Self.bashCompletes(script, ["pushtrail", "audit", "--code", "sent"]) == ["sent_after_unregistered"])
        #expect(try Self.bashCompletes(script, ["pushtrail", "completion", "f"]) == ["fish"])
        // Every option of every command is offered after its command.
        for command in [
            "ingest", "import", "log", "thread", "task", "show", "export", "audit", "verify", "head", "stats",
        ] {
            let help = CLI.run([command, "--help"]).stdout
            let offered = Set(try Self.bashCompletes(script, ["pushtrail", command, "--"]))
            for token in help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
            where token.hasPrefix("--") {
                // "--raw]" in a usage line is the option --raw.
                let word = "--" + token.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" }
                guard word.count > 2 else { continue }
                #expect(offered.contains(word), "\(command): \(word) missing from completion")
            }
        }
    }

    @Test("the fish script loads in fish and completes commands and options")
    func fish() throws {
        let dir = try TempDir()
        let script = try Self.script("fish", in: dir)
        #expect(try Self.shell("fish", ["--no-execute", script]).0 == 0)
        let (status, out) = try Self.shell(
            "fish", ["-c", "source '\(script)'; complete -C'pushtrail ver'; complete -C'pushtrail ingest --str'"])
        #expect(status == 0)
        #expect(out.contains("verify"), "\(out)")
        #expect(out.contains("--strict"), "\(out)")
    }

    @Test("the zsh script is valid zsh and names every command")
    func zsh() throws {
        let dir = try TempDir()
        let script = try Self.script("zsh", in: dir)
        #expect(try Self.shell("zsh", ["-n", script]).0 == 0)
        let text = try String(contentsOfFile: script, encoding: .utf8)
        for command in [
            "ingest", "import", "log", "thread", "task", "show", "export", "audit", "verify", "head", "stats",
        ] {
            #expect(text.contains("'\(command):"), "\(command) missing")
        }
        // It loads in an interactive-style zsh with compinit.
        let (status, _) = try Self.shell(
            "zsh", ["-c", "autoload -U compinit && compinit -u && source '\(script)' && whence -w _pushtrail"])
        #expect(status == 0)
    }

    @Test("the man page renders and documents every command and option")
    func manpage() throws {
        let page = CLI.run(["manpage"])
        #expect(page.status == 0)
        let dir = try TempDir()
        let path = try dir.write("pushtrail.1", bytes: page.stdoutBytes)
        let (status, text) = try Self.shell("man", ["-l", "-P", "cat", path])
        #expect(status == 0)
        for command in [
            "ingest", "import", "log", "thread", "task", "show", "export", "audit", "verify", "head", "stats",
            "completion",
        ] {
            #expect(text.contains("pushtrail \(command)"), "\(command) missing from the man page")
        }
        #expect(text.contains("--rejects") && text.contains("--show-tokens") && text.contains("EXIT STATUS"))
    }
}
