import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `pushtrail` command line: finds the command, parses its options, runs it and
/// turns any error into one line on stderr and its exit status (see `Failure`).
public enum PushTrail {
    public static let version = PushTrailVersion.current

    static let commands: [any Command.Type] = [
        IngestCommand.self, ImportCommand.self, LogCommand.self, ThreadCommand.self, TaskCommand.self,
        ShowCommand.self, ExportCommand.self, ReplayCommand.self, ReportCommand.self, AuditCommand.self,
        VerifyCommand.self,
        HeadCommand.self, StatsCommand.self, ServeCommand.self, TokenCommand.self, PublishCommand.self,
        ConsumeCommand.self, CompletionCommand.self,
        ManpageCommand.self,
    ]

    /// The names of `commands`, in the same order, so that running one does not build
    /// every declaration before it (the audit command's alone made `head` 25% slower).
    static let commandNames = [
        "ingest", "import", "log", "thread", "task", "show", "export", "replay", "report", "audit", "verify",
        "head", "stats", "serve", "token", "publish", "consume", "completion", "manpage",
    ]

    /// The command named `name`.
    static func command(named name: String) -> (any Command.Type)? {
        assert(commandNames == commands.map { $0.spec.name }, "PushTrail.commandNames is out of step with commands")
        return commandNames.firstIndex(of: name).map { commands[$0] }
    }

    /// Runs `argv` (without the program name); returns the exit status.
    public static func main(_ argv: [String], context: Context) -> Int32 {
        Failure.installFaultHandler()
        context.invocation = argv
        let status = dispatch(argv, context)
        do {
            try context.stdout.flush()
        } catch {
            // The reader has gone; nothing more to say.
        }
        try? context.stderr.flush()
        return status
    }

    static func dispatch(_ argv: [String], _ context: Context) -> Int32 {
        // Global options may come before the command.
        var globals: [String] = []
        var i = 0
        while i < argv.count {
            let a = argv[i]
            if a == "--store", i + 1 < argv.count {
                globals += [a, argv[i + 1]]
                i += 2
            } else if a.hasPrefix("--store=") || a == "--no-color" || a == "--show-tokens" {
                globals.append(a)
                i += 1
            } else {
                break
            }
        }
        let rest = Array(argv[i...])
        if rest == ["--store"] {
            return report(UsageError("--store needs a value (DIR)"), command: nil, context)
        }
        guard let name = rest.first else {
            context.stderr.write(rootHelp())
            return ExitStatus.usage
        }
        if name == "--help" || name == "-h" || name == "help" {
            if rest.count > 1, let command = command(named: rest[1]) {
                context.stdout.write(HelpText.render(command.spec, global: GlobalOptions.list))
            } else {
                context.stdout.write(rootHelp())
            }
            return ExitStatus.success
        }
        if name == "--version" {
            context.stdout.line("pushtrail \(version)")
            return ExitStatus.success
        }
        guard let command = command(named: name) else {
            let hint = name.hasPrefix("-") ? "unknown option \(name)" : "unknown command '\(name)'"
            return report(UsageError(hint), command: nil, context)
        }
        do {
            let arguments = try Arguments.parse(globals + Array(rest.dropFirst()), spec: command.fullSpec)
            if arguments.flag("help") {
                context.stdout.write(HelpText.render(command.spec, global: GlobalOptions.list))
                return ExitStatus.success
            }
            return try command.execute(arguments, context)
        } catch {
            return report(error, command: name, context)
        }
    }

    /// One line on stderr for any error (see `Failure`), and its exit status; with no
    /// command (an unknown one), a usage error points at the list of commands.
    static func report(_ error: any Error, command: String?, _ context: Context) -> Int32 {
        guard let (message, usage, status) = Failure.describe(error) else { return ExitStatus.success }
        guard let command else {
            context.stderr.line("pushtrail: \(message)")
            if usage { context.stderr.line("Run 'pushtrail --help' for the list of commands.") }
            return status
        }
        if usage {
            context.stderr.line("pushtrail \(command): \(message)")
            if error is UsageError { context.stderr.line("Run 'pushtrail \(command) --help' for usage.") }
        } else {
            context.stderr.line("pushtrail: \(message)")
        }
        return status
    }

    static func rootHelp() -> String {
        var out = """
            pushtrail — an audit log of push notifications, kept in LMDB.

            Usage:
              pushtrail [--store DIR] COMMAND [OPTIONS]

            Commands:

            """
        let width = (commands.map { $0.spec.name.count }.max() ?? 0) + 3
        for c in commands {
            out += "  " + c.spec.name + String(repeating: " ", count: width - c.spec.name.count) + c.spec.summary + "\n"
        }
        out += """

            The store is --store DIR, else $PUSHTRAIL_STORE, else ./pushtrail.lmdb.
            Run 'pushtrail COMMAND --help' for a command's options.

            """
        return out
    }
}
