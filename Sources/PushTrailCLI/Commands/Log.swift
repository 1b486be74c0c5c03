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
    static let filterOptions: [OptionSpec] = [
        .option("user", "U", "events of this user"),
        .option("task", "N", "events about this task (deliveries through their notification)"),
        .option("thread", "ID", "events of this thread (SPEC §4)"),
        .option("type", "TYPE", "notification, action or delivery", completion: .choices(EventType.allCases.map(\.description))),
        .option("category", "C", "notifications with this aps.category",
                completion: .choices(Category.allCases.map(\.rawValue))),
        .option("notification-type", "T", "notifications with this notification_type"),
        .option("residence", "R", "events about tasks of this residence id"),
        .option("since", "T", "events at or after T (RFC 3339, date, now, -2h, -7d; @SEQ: after event SEQ)"),
        .option("until", "T", "events at or before T (@SEQ: up to event SEQ)"),
        .option("grep", "TEXT", "events whose ingested JSON contains TEXT, ignoring case (Unicode simple case folding)"),
    ]

    static let spec = CommandSpec(
        name: "log",
        summary: "List events in timeline order (at, seq), filtered; follow new ones with -f.",
        usage: ["log [FILTERS] [-n N] [-r] [-f] [--json | --raw]"],
        options: filterOptions + [
            .option("lines", short: "n", "N", "only the last N matching events"),
            .flag("reverse", short: "r", "newest first"),
            .flag("follow", short: "f", "keep printing events as they are appended, until interrupted"),
            .flag("json", "one {\"seq\", \"recorded_at\", \"event\"} object per line"),
            .flag("raw", "the events exactly as ingested (NDJSON, re-ingestible)"),
        ],
        discussion: """
            Filters combine (all must hold). No match is an empty answer with exit status 0.
            With -f, events appended by other processes are printed in append order as
            they commit; stop with Ctrl-C.
            """)

    static func query(_ arguments: Arguments, _ context: Context) throws -> LogQuery {
        var q = LogQuery()
        q.user = arguments.value("user")
        if let t = arguments.value("task") {
            guard let n = Int64(t) else { throw UsageError("--task takes an integer task id, not \(t)") }
            q.taskID = n
        }
        q.threadID = arguments.value("thread")
        if let t = arguments.value("type") {
            guard let type = EventType(name: t) else { throw UsageError("--type is notification, action or delivery, not \(t)") }
            q.type = type
        }
        q.category = arguments.value("category")
        q.notificationType = arguments.value("notification-type")
        q.residence = arguments.value("residence")
        q.since = try context.horizon(arguments, "since")
        q.until = try context.horizon(arguments, "until")
        q.grep = arguments.value("grep")
        return q
    }

    static func run(_ arguments: Arguments, _ context: Context) throws -> Int32 {
        let q = try query(arguments, context)
        if arguments.flag("json") && arguments.flag("raw") { throw UsageError("choose --json or --raw", command: "log") }
        var limit: Int?
        if let n = arguments.value("lines") {
            guard let v = Int(n), v >= 0 else { throw UsageError("-n takes a count, not \(n)", command: "log") }
            limit = v
        }
        let reverse = arguments.flag("reverse")
        let store = try context.openStore(arguments, create: false)
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let print = { (loaded: LoadedEvent) in emit(loaded, arguments, context, style) }

        var lastSeq: UInt64 = 0
        try store.read { reader in
            lastSeq = try reader.head().seq
            if let limit {
                // The last N in timeline order: walk back from the newest.
                var found: [LoadedEvent] = []
                if limit > 0 {
                    try reader.log(q, reverse: true) { found.append($0); return found.count < limit }
                }
                for loaded in reverse ? found : found.reversed() { print(loaded) }
            } else {
                try reader.log(q, reverse: reverse) { print($0); return !context.stdout.brokenPipe }
            }
        }
        try context.stdout.flush()
        guard arguments.flag("follow") else { return ExitStatus.success }

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

    static func emit(_ loaded: LoadedEvent, _ arguments: Arguments, _ context: Context, _ style: Style) {
        if arguments.flag("raw") {
            context.stdout.write(bytes: loaded.stored.raw)
            context.stdout.write("\n")
            return
        }
        if arguments.flag("json") {
            context.stdout.line(
                JSONValue.object([
                    ("seq", .uint(loaded.seq)), ("recorded_at", .string(loaded.stored.recordedAt.description)),
                    ("event", .raw(String(decoding: loaded.stored.raw, as: UTF8.self))),
                ]).serialized())
            return
        }
        let e = loaded.event
        var line = e.at.description + "  " + style.dim(("#" + String(loaded.seq)).padding(6)) + " " + Render.oneLine(e.user).padding(10)
        if let t = e.taskID { line += " " + ("task " + String(t)).padding(10) } else { line += "           " }
        line += " " + Render.headline(e, style: style)
        if let ref = e.referencedNotificationID { line += style.dim(" → " + String(ref.prefix(8)) + "…") }
        // A user with several devices gets each push once per device: say which got this one.
        if let device = e.device { line += style.dim(" · device " + Render.oneLine(context.token(device, arguments))) }
        context.stdout.screenLine(line)
    }
}
