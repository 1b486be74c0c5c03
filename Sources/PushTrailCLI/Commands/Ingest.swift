import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail ingest`: append NDJSON events from files or standard input.
enum IngestCommand: Command {
    static let spec = CommandSpec(
        name: "ingest",
        summary: "Append NDJSON events (docs/EVENTS.md) from files or standard input to the store.",
        usage: ["ingest [FILE…] [--rejects PATH [--force]] [--strict] [--json]"],
        options: [
            .option(
                "rejects", "PATH", "also write each rejected line, byte for byte, to PATH (created 0600)",
                completion: .file),
            .flag("force", "let --rejects overwrite an existing file"),
            .flag("strict", "all or nothing: at the first bad line, store nothing of this run"),
            OutputFormat.jsonFlag("print the summary as JSON"),
            .flag("quiet", short: "q", "no progress line"),
        ],
        operands: "FILE…",
        operandCompletion: .file,
        discussion: """
            With no FILE, or with -, events are read from standard input. A line whose id
            is stored with equal content is a duplicate (skipped), with other content a
            conflict (rejected). Rejected lines are reported as FILE:LINE: reason and make
            the exit status 65; the good lines around them are stored. Events from a pipe
            are committed as they arrive, so a live stream shows in log -f at once. Each
            event is stored exactly as ingested; once an ingest brings 1,000 events, the
            records are compressed with a dictionary trained on them (see stats).
            """)

    /// What `ingest` was asked for, checked before any file is read or written.
    struct Options: Sendable {
        /// Where the events come from, in order (standard input at most once).
        var sources: [InputSource]
        /// No FILE was named: standard input by default, which must not be a terminal.
        var defaultInput: Bool
        /// Where to copy rejected lines (`--rejects`), and whether it may be overwritten.
        var rejects: String?
        var force: Bool
        var strict: Bool
        var json: Bool
        var quiet: Bool
    }

    /// The sources (none is standard input); `-` may be named once.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let sources: [InputSource] =
            arguments.operands.isEmpty
            ? [.standardInput]
            : arguments.operands.map { $0 == "-" ? .standardInput : .file($0) }
        if sources.filter({ $0.path == nil }).count > 1 {
            throw UsageError("standard input (-) can be read only once", command: "ingest")
        }
        return Options(
            sources: sources, defaultInput: arguments.operands.isEmpty, rejects: arguments.value("rejects"),
            force: arguments.flag("force"),
            strict: arguments.flag("strict"), json: try OutputFormat.parse(arguments) == .json,
            quiet: arguments.flag("quiet"))
    }

    /// Appends the events, reports rejected lines, and prints a summary; exit 65 when any line was refused.
    static func run(_ parsed: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let sources = parsed.sources
        // Whether standard input is a terminal is the context's to say, not the command line's:
        // checked here, still before any effect.
        if parsed.defaultInput && context.stdinIsTerminal {
            throw UsageError("no input: name NDJSON files, or pipe events to standard input", command: "ingest")
        }
        for source in sources {
            if let path = source.path, access(path, R_OK) != 0 {
                throw CommandError.io("cannot read \(path): \(String(cString: strerror(errno)))")
            }
        }
        let rejects = try parsed.rejects.map { try OutputFile.create($0, overwrite: parsed.force) }
        defer { rejects?.close() }

        let store = try context.openStore(arguments, create: true)
        var options = IngestOptions()
        options.strict = parsed.strict
        if let n = context.environment["PUSHTRAIL_BATCH_EVENTS"].flatMap(Int.init), n > 0 {
            options.batchEvents = n
            options.batchBytes = max(options.batchBytes, n * 1024)
            options.scaleWithStore = false
        }
        let ingest = Ingest(store: store, sources: sources, options: options, clock: context.clock)
        let progress = ProgressLine(context.stderr, enabled: !parsed.quiet && !parsed.json)
        let started = WallClock.now()
        var rejectError: (any Error)?
        ingest.onReject = { rejection in
            progress.clear()
            context.stderr.line("pushtrail: \(rejection.source):\(rejection.line): \(rejection.reason)")
            do {
                try rejects?.write(rejection.raw + [0x0A])
            } catch {
                rejectError = error
            }
        }
        ingest.onProgress = { summary, bytes in
            let seconds = Double(WallClock.now().microseconds - started.microseconds) / 1e6
            let rate = seconds > 0 ? Int(Double(summary.read) / seconds) : 0
            progress.update(
                "ingest: \(grouped(summary.read)) lines, \(grouped(summary.appended)) appended, "
                    + "\(megabytes(bytes)) read, \(grouped(rate)) events/s")
        }
        let summary = try ingest.run()
        progress.clear()
        if let rejectError { throw CommandError.io("cannot write --rejects file: \(rejectError)") }

        if parsed.json {
            context.stdout.line(Presentation.ingest(summary).serialized())
        } else {
            var line = "appended \(grouped(summary.appended)) of \(counted(summary.read, "event"))"
            if let first = summary.firstSeq, let last = summary.lastSeq { line += " (seq \(first)–\(last))" }
            line += "; \(counted(summary.duplicates, "duplicate")), \(counted(summary.conflicts, "conflict")), "
            line += "\(grouped(summary.rejected)) rejected"
            if options.strict && summary.rejected + summary.conflicts > 0 {
                line += "; --strict: nothing from this run was stored"
            }
            context.stdout.line(line)
        }
        return summary.rejected + summary.conflicts > 0 ? ExitStatus.dataError : ExitStatus.success
    }

    static func megabytes(_ bytes: Int) -> String {
        let mb = Double(bytes) / 1_000_000
        return mb < 10 ? "\(Double(Int(mb * 10)) / 10) MB" : "\(grouped(Int(mb))) MB"
    }
}
