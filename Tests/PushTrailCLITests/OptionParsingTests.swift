import Foundation
import PushTrailModel
import PushTrailStore
import Testing

@testable import PushTrailCLI

/// The parse step of each command, on its own: good argv gives the typed options, bad
/// argv gives the exact usage error, and nothing is run.
@Suite("Option parsing")
struct OptionParsingTests {
    /// `CLI.now` minus `hours`.
    static func hoursAgo(_ hours: Int64) -> Horizon {
        .time(Timestamp(microseconds: CLI.now.microseconds - hours * 3_600_000_000))
    }

    /// The options `argv` gives `command`, with the tests' fixed clock.
    static func parse<C: Command>(_ command: C.Type, _ argv: [String]) throws -> C.Options {
        try C.options(argv, clock: { CLI.now })
    }

    /// The usage error `argv` gives `command`, or nil when it parses.
    static func usageError<C: Command>(_ command: C.Type, _ argv: [String]) -> UsageError? {
        do {
            _ = try C.options(argv, clock: { CLI.now })
            return nil
        } catch let error as UsageError {
            return error
        } catch {
            Issue.record("not a usage error: \(error)")
            return nil
        }
    }

    // MARK: - Shared options

    @Test("--at -2h and --at=-2h give the same horizon, two hours before the clock")
    func atBothSpellings() throws {
        let spaced = try Self.parse(TaskCommand.self, ["1102", "--at", "-2h"])
        let joined = try Self.parse(TaskCommand.self, ["1102", "--at=-2h"])
        #expect(spaced.at == Self.hoursAgo(2))
        #expect(joined.at == spaced.at)
    }

    @Test("--at is one declaration: the same help in every command that takes it")
    func atDeclaredOnce() {
        let commands: [any Command.Type] = [
            TaskCommand.self, ThreadCommand.self, ExportCommand.self, ReplayCommand.self, ReportCommand.self,
        ]
        for command in commands {
            let at = command.spec.options.filter { $0.name == "at" }
            #expect(at.count == 1, "\(command.spec.name)")
            #expect(at.first?.help == AsOfOption.spec.help, "\(command.spec.name)")
        }
        #expect(
            AsOfOption.spec.help
                == "as of T: RFC 3339, a date, now, -2h, -7d, or @SEQ (what the store knew after event SEQ)")
    }

    @Test("a bad --at is a usage error naming the option and the bad text")
    func badAt() {
        let error = Self.usageError(ThreadCommand.self, ["task-1102", "--at", "yesterday-ish"])
        #expect(
            error?.message.hasPrefix("--at: \"yesterday-ish\" is not a time") == true, "\(String(describing: error))")
    }

    @Test("log and audit share the filters: the same declarations, parsed into the same query")
    func sharedFilters() throws {
        let names = LogFilters.options.map(\.name)
        #expect(LogCommand.spec.options.map(\.name).prefix(names.count) == names[...])
        #expect(AuditCommand.spec.options.map(\.name).prefix(names.count) == names[...])
        let argv = ["--user", "u_1", "--task", "1102", "--type", "delivery", "--since", "-2h", "--grep", "Ünï"]
        for query in [try Self.parse(LogCommand.self, argv).query, try Self.parse(AuditCommand.self, argv).query] {
            #expect(query.user == "u_1")
            #expect(query.taskID == 1102)
            #expect(query.type == .delivery)
            #expect(query.since == Self.hoursAgo(2))
            #expect(query.until == nil)
            #expect(query.grep == "Ünï")
        }
    }

    // MARK: - log

    @Test("log: -n, -r, -f and --raw give a typed value")
    func logGood() throws {
        let options = try Self.parse(LogCommand.self, ["-n", "5", "-rf", "--raw", "--thread", "task-1"])
        #expect(options.limit == 5)
        #expect(options.reverse && options.follow)
        #expect(options.format == .raw)
        #expect(options.query.threadID == "task-1")
        let plain = try Self.parse(LogCommand.self, [])
        #expect(plain.limit == nil && !plain.reverse && !plain.follow && plain.format == .human)
        #expect(try Self.parse(LogCommand.self, ["--json"]).format == .json)
    }

    @Test("log: -n with a non-number, --json with --raw, a bad --task or --type are usage errors")
    func logBad() {
        #expect(
            Self.usageError(LogCommand.self, ["-n", "five"])
                == UsageError("-n takes a count, not five", command: "log"))
        #expect(
            Self.usageError(LogCommand.self, ["-n", "-3"])
                == UsageError("-n takes a count, not -3", command: "log"))
        #expect(
            Self.usageError(LogCommand.self, ["--json", "--raw"])
                == UsageError("choose --json or --raw", command: "log"))
        #expect(
            Self.usageError(LogCommand.self, ["--task", "x1"])
                == UsageError("--task takes an integer task id, not x1"))
        #expect(
            Self.usageError(LogCommand.self, ["--type", "push"])
                == UsageError("--type is notification, action or delivery, not push"))
    }

    @Test("an unknown option is a usage error from the parser, with a hint when one option is close")
    func unknownOption() {
        #expect(
            Self.usageError(LogCommand.self, ["--bogus"])
                == UsageError("unknown option --bogus for 'log'", command: "log"))
        #expect(
            Self.usageError(LogCommand.self, ["--revers"])
                == UsageError("unknown option --revers for 'log' (did you mean --reverse?)", command: "log"))
        #expect(
            Self.usageError(HeadCommand.self, ["-x"])
                == UsageError("unknown option -x for 'head'", command: "head"))
    }

    // MARK: - task, thread, show

    @Test("task: an integer id, --at, --json and --relative-to")
    func taskGood() throws {
        let options = try Self.parse(TaskCommand.self, ["1102", "--json", "--relative-to", "@3"])
        #expect(options.taskID == 1102)
        #expect(options.at == nil)
        #expect(options.json)
        #expect(options.relativeTo == "@3")
        #expect(try Self.parse(TaskCommand.self, ["7", "--at", "@12"]).at == .sequence(12))
    }

    @Test("task abc, or no task, or two: the usage error asks for one integer id")
    func taskBad() {
        let expected = UsageError("name one task by its integer id, e.g. pushtrail task 1102", command: "task")
        #expect(Self.usageError(TaskCommand.self, ["abc"]) == expected)
        #expect(Self.usageError(TaskCommand.self, []) == expected)
        #expect(Self.usageError(TaskCommand.self, ["1", "2"]) == expected)
    }

    @Test("thread: one id; none is a usage error")
    func thread() throws {
        let options = try Self.parse(ThreadCommand.self, ["task-1102", "--at", "2026-11-30"])
        #expect(options.threadID == "task-1102")
        #expect(options.at != nil)
        #expect(!options.json)
        #expect(
            Self.usageError(ThreadCommand.self, [])
                == UsageError("name one thread, e.g. pushtrail thread task-1102", command: "thread"))
    }

    @Test("show: one id or @SEQ; none is a usage error")
    func show() throws {
        let options = try Self.parse(ShowCommand.self, ["@4", "--json"])
        #expect(options.target == "@4" && options.json)
        #expect(Self.usageError(ShowCommand.self, []) == UsageError("name one event: an id, or @SEQ", command: "show"))
    }

    // MARK: - audit, head, stats, verify

    @Test("audit: repeated --code gives a set; an unknown code lists the known ones")
    func audit() throws {
        let options = try Self.parse(AuditCommand.self, ["--code", "sent_after_unregistered", "--json"])
        #expect(options.codes == [.sentAfterUnregistered])
        #expect(options.json)
        let known = FindingCode.allCases.map(\.rawValue).joined(separator: ", ")
        #expect(
            Self.usageError(AuditCommand.self, ["--code", "nope"])
                == UsageError("unknown --code nope; codes are \(known)", command: "audit"))
    }

    @Test("head, stats and verify take only --json, and no operands")
    func jsonOnly() throws {
        #expect(try Self.parse(HeadCommand.self, ["--json"]).json)
        #expect(try !Self.parse(StatsCommand.self, []).json)
        #expect(try Self.parse(VerifyCommand.self, ["--json"]).json)
        #expect(
            Self.usageError(VerifyCommand.self, ["extra"])
                == UsageError("'verify' takes no operands, but got extra", command: "verify"))
    }

    // MARK: - ingest, import

    @Test("ingest: files in order, - for standard input once; --rejects, --strict, --json")
    func ingest() throws {
        let options = try Self.parse(IngestCommand.self, ["a.ndjson", "-", "--rejects", "r", "--strict", "--json"])
        #expect(options.sources.map(\.path) == ["a.ndjson", nil])
        #expect(!options.defaultInput)
        #expect(options.rejects == "r" && !options.force && options.strict && options.json && !options.quiet)
        #expect(try Self.parse(IngestCommand.self, []).defaultInput)
        #expect(
            Self.usageError(IngestCommand.self, ["-", "-"])
                == UsageError("standard input (-) can be read only once", command: "ingest"))
    }

    @Test("import: files, --user, --at as a time; --id with two files or no --user are usage errors")
    func importOptions() throws {
        let options = try Self.parse(ImportCommand.self, ["a.apns", "--user", "u_1", "--at", "-2h", "--topic", "t"])
        #expect(options.files == ["a.apns"] && options.user == "u_1" && options.topic == "t" && options.id == nil)
        #expect(options.at.map(Horizon.time) == Self.hoursAgo(2))
        #expect(
            Self.usageError(ImportCommand.self, ["a.apns"])
                == UsageError("--user is required: whose notification was it?", command: "import"))
        #expect(
            Self.usageError(ImportCommand.self, ["--user", "u"])
                == UsageError("name at least one .apns file", command: "import"))
        #expect(
            Self.usageError(ImportCommand.self, ["a.apns", "b.apns", "--user", "u", "--id", "x"])
                == UsageError("--id names one event: import one file at a time with it", command: "import"))
    }

    // MARK: - export, replay, report

    @Test("export: one selection; --all needs --dir and a thread or task; --task takes an integer")
    func export() throws {
        let options = try Self.parse(ExportCommand.self, ["--task", "1102", "--all", "--dir", "out", "--at", "-2h"])
        #expect(options.selection == .task(1102) && options.all && options.dir == "out")
        #expect(options.at == Self.hoursAgo(2))
        #expect(try Self.parse(ExportCommand.self, ["n-1", "-o", "-"]).selection == .event("n-1"))
        #expect(try Self.parse(ExportCommand.self, ["--thread", "t"]).selection == .thread("t"))
        #expect(
            Self.usageError(ExportCommand.self, ["n-1", "--thread", "t"])
                == UsageError("give only one of EVENT_ID, --thread", command: "export"))
        #expect(
            Self.usageError(ExportCommand.self, ["--thread", "t", "--all"])
                == UsageError("--all needs --dir DIR", command: "export"))
        #expect(
            Self.usageError(ExportCommand.self, ["--task", "x"])
                == UsageError("--task takes an integer task id, not x", command: "export"))
    }

    @Test("replay: numbers in range, --step not with timing or --dry-run, a thread required")
    func replay() throws {
        let options = try Self.parse(ReplayCommand.self, ["--thread", "t", "--speed", "2.5", "--max-gap", "0"])
        #expect(options.threadID == "t" && options.speed == 2.5 && options.maxGap == 0 && options.device == "booted")
        let defaults = try Self.parse(ReplayCommand.self, ["--thread", "t", "--step"])
        #expect(defaults.speed == 1 && defaults.maxGap == 10 && defaults.step && !defaults.dryRun)
        #expect(
            Self.usageError(ReplayCommand.self, ["--thread", "t", "--speed", "0"])
                == UsageError("--speed takes a number above 0, not 0", command: "replay"))
        #expect(
            Self.usageError(ReplayCommand.self, ["--thread", "t", "--step", "--speed", "2"])
                == UsageError(
                    "--step waits for Enter instead of timing: give --step or --speed, not both",
                    command: "replay"))
        #expect(
            Self.usageError(ReplayCommand.self, ["--thread", "t", "--step", "--dry-run"])
                == UsageError("--dry-run waits for nothing: drop --step", command: "replay"))
        #expect(
            Self.usageError(ReplayCommand.self, [])
                == UsageError("name the thread to replay: --thread ID (e.g. --thread task-1102)", command: "replay"))
    }

    @Test("report: one subject; --user needs --since, a time and not @SEQ")
    func report() throws {
        let options = try Self.parse(ReportCommand.self, ["--user", "u_1", "--since", "-2h", "-o", "-", "--at", "@9"])
        guard case .user("u_1", let since) = options.subject else {
            Issue.record("not a user subject: \(options.subject)")
            return
        }
        #expect(Horizon.time(since) == Self.hoursAgo(2))
        #expect(options.at == .sequence(9) && options.atText == "@9" && options.output == "-")
        #expect(try Self.parse(ReportCommand.self, ["--task", "3"]).subject == .task(3))
        #expect(
            Self.usageError(ReportCommand.self, ["--user", "u"])
                == UsageError("--user needs --since T, e.g. --since -7d", command: "report"))
        #expect(
            Self.usageError(ReportCommand.self, ["--user", "u", "--since", "@3"])
                == UsageError("--since takes a time, not @SEQ", command: "report"))
        #expect(
            Self.usageError(ReportCommand.self, ["--task", "1", "--thread", "t"])
                == UsageError("give only one of --thread, --task, --user", command: "report"))
    }

    @Test("completion: one shell it knows")
    func completion() throws {
        #expect(try Self.parse(CompletionCommand.self, ["fish"]) == .fish)
        #expect(
            Self.usageError(CompletionCommand.self, ["tcsh"])
                == UsageError("no completion for tcsh: choose bash, zsh or fish", command: "completion"))
    }

    // MARK: - Before any effect

    @Test("a usage error comes before any effect: no store is created, no file written")
    func noEffect() throws {
        let dir = try TempDir()
        let apns = try dir.write("a.apns", lines: ["{\"aps\":{\"alert\":\"hi\"}}"])
        let bad: [[String]] = [
            ["import", apns, "--user", "u", "--at", "not-a-time"],
            ["ingest", "-", "-", "--rejects", dir.file("rejects.txt")],
            ["task", "abc"],
            ["log", "-n", "x"],
        ]
        for argv in bad {
            let outcome = CLI.run(store: dir.store, argv)
            #expect(outcome.status == 2, "\(argv): \(outcome)")
            #expect(!exists(dir.store), "\(argv) created the store")
        }
        #expect(!exists(dir.file("rejects.txt")))
        let report = CLI.run(store: dir.store, ["report", "--task", "1x", "-o", dir.file("r.html")])
        #expect(report.stderr.hasPrefix("pushtrail report: --task takes an integer task id, not 1x\n"), "\(report)")
        #expect(!exists(dir.file("r.html")))
    }

    @Test("an unknown command goes through the one error mapping: usage status and a pointer to the commands")
    func unknownCommand() {
        let outcome = CLI.run(["frobnicate"])
        #expect(outcome.status == ExitStatus.usage)
        #expect(
            outcome.stderr
                == "pushtrail: unknown command 'frobnicate'\nRun 'pushtrail --help' for the list of commands.\n")
    }
}
