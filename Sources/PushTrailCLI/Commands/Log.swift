import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Set by SIGINT while `log -f` follows, so it can stop cleanly.
nonisolated(unsafe) private var interrupted: sig_atomic_t = 0

/// `pushtrail log`: list events, filtered, in timeline order.
enum LogCommand: Command {
    static let spec = CommandSpec(
        name: "log",
        summary: "List events in timeline order (at, seq), filtered; follow new ones with -f.",
        usage: ["log [FILTERS] [-n N] [-r] [-f] [--json | --raw]"],
        options: LogFilters.options + [
            .option("lines", short: "n", "N", "only the last N matching events"),
            .flag("reverse", short: "r", "newest first"),
            .flag("follow", short: "f", "keep printing events as they are appended, until interrupted"),
            OutputFormat.jsonFlag("one {\"seq\", \"recorded_at\", \"event\"} object per line"),
            OutputFormat.rawFlag("the events exactly as ingested (NDJSON, re-ingestible)"),
        ] + ClusterOptions.specs,
        discussion: """
            Filters combine (all must hold). No match is an empty answer with exit status 0.
            With -f, events appended by other processes are printed in append order as
            they commit; stop with Ctrl-C.
            """)

    /// What `log` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var query: LogQuery
        /// Only the last N matching events (`-n`).
        var limit: Int?
        var reverse: Bool
        var follow: Bool
        var format: OutputFormat
    }

    /// The filters, then the output flags, then `-n`: the order the errors were always reported in.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let query = try LogFilters.parse(arguments, clock: clock)
        let format = try OutputFormat.parse(arguments)
        var limit: Int?
        if let n = arguments.value("lines") {
            guard let v = Int(n), v >= 0 else { throw UsageError("-n takes a count, not \(n)", command: "log") }
            limit = v
        }
        return Options(
            query: query, limit: limit, reverse: arguments.flag("reverse"), follow: arguments.flag("follow"),
            format: format)
    }

    /// Prints the matching events, then, with `-f`, those appended later until interrupted.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let q = options.query
        let limit = options.limit
        let reverse = options.reverse
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        if let cluster = try Cluster.named(by: arguments, context) {
            guard !options.follow else {
                throw UsageError("-f follows one store; over a cluster, follow each shard's server", command: "log")
            }
            try Cluster.refuseSequence(q.since, option: "since", command: "log")
            try Cluster.refuseSequence(q.until, option: "until", command: "log")
            try cluster.log(q, limit: limit, reverse: reverse) { shard, loaded in
                emit(loaded, options.format, arguments, context, style, shard: cluster.file.shards[shard].name)
                return !context.stdout.brokenPipe
            }
            return ExitStatus.success
        }
        let store = try context.openStore(arguments, create: false)
        let print = { (loaded: LoadedEvent) in emit(loaded, options.format, arguments, context, style) }

        var lastSeq: UInt64 = 0
        try store.read { reader in
            lastSeq = try reader.head().seq
            try reader.log(q, limit: limit, reverse: reverse) {
                print($0)
                return !context.stdout.brokenPipe
            }
        }
        try context.stdout.flush()
        guard options.follow else { return ExitStatus.success }

        interrupted = 0
        signal(SIGINT) { _ in interrupted = 1 }
        signal(SIGTERM) { _ in interrupted = 1 }
        // A parent (a supervisor, a test runner) may have started us with these blocked.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        var seenTxn = store.lastTransactionID
        while interrupted == 0 {
            usleep(100_000)
            let txn = store.lastTransactionID
            guard txn != seenTxn else { continue }
            seenTxn = txn
            try store.read { reader in
                try reader.appended(after: lastSeq, matching: q) { print($0) }
                lastSeq = try reader.head().seq
            }
            try context.stdout.flush()
        }
        return ExitStatus.success
    }

    /// Prints one event in `format`; a human line names the device, masked unless
    /// `--show-tokens`. Over a cluster, each event names its `shard`.
    static func emit(
        _ loaded: LoadedEvent, _ format: OutputFormat, _ arguments: Arguments, _ context: Context, _ style: Style,
        shard: String? = nil
    ) {
        if format == .raw {
            context.stdout.write(bytes: loaded.stored.raw)
            context.stdout.write("\n")
            return
        }
        if format == .json {
            var line = Presentation.logLine(loaded.stored)
            if let shard, case .object(let members) = line { line = .object(members + [("shard", .string(shard))]) }
            context.stdout.line(line.serialized())
            return
        }
        let e = loaded.event
        var line =
            e.at.description + "  " + style.dim(((shard ?? "") + "#" + String(loaded.seq)).padding(6)) + " "
            + Render.oneLine(e.user).padding(10)
        if let t = e.taskID { line += " " + ("task " + String(t)).padding(10) } else { line += "           " }
        line += " " + Render.headline(e, style: style)
        if let ref = e.referencedNotificationID { line += style.dim(" → " + String(ref.prefix(8)) + "…") }
        // A user with several devices gets each push once per device: say which got this one.
        if let device = e.device { line += style.dim(" · device " + Render.oneLine(context.token(device, arguments))) }
        context.stdout.screenLine(line)
    }
}
