import PushTrailModel
import PushTrailStore

/// `pushtrail thread`: a notification thread replayed as the user lived it.
enum ThreadCommand: Command {
    static let spec = CommandSpec(
        name: "thread",
        summary: """
            Replay a notification thread: what was sent, delivered and pressed, with the task's state after \
            each event.
            """,
        usage: ["thread THREAD_ID [--at T] [--json]"],
        options: [
            AsOfOption.spec,
            OutputFormat.jsonFlag("print the JSON (docs/COMMANDS.md)"),
            Render.relativeToOption,
        ] + ClusterOptions.specs,
        operands: "THREAD_ID",
        discussion: """
            A thread holds the notifications with that thread id (iOS aps.thread-id, Android
            data.thread_id), the actions naming it, and the actions and deliveries that refer
            to its notifications, in (at, seq) order. Membership is resolved at query time, so
            ingest order does not matter. Each notification says its platform and the buttons
            it showed.
            """)

    /// What `thread` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var threadID: String
        var at: Horizon?
        var json: Bool
        /// The event relative times are measured from (`--relative-to`).
        var relativeTo: String?
    }

    /// One non-empty thread id, then `--at`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard arguments.operands.count == 1, let threadID = arguments.operands.first, !threadID.isEmpty else {
            throw UsageError("name one thread, e.g. pushtrail thread task-1102", command: "thread")
        }
        return Options(
            threadID: threadID, at: try AsOfOption.parse(arguments, clock: clock),
            json: try OutputFormat.parse(arguments) == .json, relativeTo: arguments.value("relative-to"))
    }

    /// Prints the thread's events as of `--at`, with the task's state after each.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let threadID = options.threadID
        if let cluster = try Cluster.named(by: arguments, context) {
            try Cluster.refuseSequence(options.at, option: "at", command: "thread")
            guard let report = try cluster.threadReport(threadID, horizon: options.at) else {
                throw CommandError.notFound(
                    "no thread \(Render.oneLine(threadID))\(options.at == nil ? "" : " at or before --at") "
                        + "in \(cluster.path)"
                )
            }
            let asOf = cluster.asOf(options.at)
            if options.json {
                let value = Presentation.thread(report, asOf: asOf, tokens: context.tokens(arguments))
                context.stdout.line(cluster.withMissing(value).serialized())
                return ExitStatus.success
            }
            return try show(report, asOf: asOf, options, arguments, context)
        }
        let (report, asOf) = try context.asOfReport(
            arguments, horizon: options.at, missing: "no thread \(Render.oneLine(threadID))"
        ) {
            try $0.threadReport(threadID, horizon: $1)
        }
        if options.json {
            context.stdout.line(Presentation.thread(report, asOf: asOf, tokens: context.tokens(arguments)).serialized())
            return ExitStatus.success
        }
        return try show(report, asOf: asOf, options, arguments, context)
    }

    /// Prints `report` for people.
    static func show(
        _ report: ThreadReport, asOf: String, _ options: Options, _ arguments: Arguments, _ context: Context
    ) throws -> Int32 {
        let threadID = options.threadID
        if options.json {
            context.stdout.line(Presentation.thread(report, asOf: asOf, tokens: context.tokens(arguments)).serialized())
            return ExitStatus.success
        }
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let anchor = try Render.anchor(in: report.entries.map(\.loaded), relativeTo: options.relativeTo)
        var header =
            style.bold("thread \(Render.oneLine(threadID))")
            + style.dim(" · \(report.entries.count) events · as of \(asOf)")
        if let anchor { header += style.dim(" · times relative to \(Render.anchorName(anchor.event)) #\(anchor.seq)") }
        context.stdout.screenLine(header)
        for entry in report.entries {
            let e = entry.loaded.event
            var line =
                e.at.description + "  " + style.dim(("#" + String(entry.loaded.seq)).padding(6)) + " "
                + Render.headline(e, style: style)
            if let t = entry.taskID, let s = entry.taskState {
                if let tr = entry.transition, tr.from != tr.to {
                    line += "  · task " + String(t) + ": " + tr.from.rawValue + " → " + style.bold(s.rawValue)
                } else {
                    line += style.dim("  · task " + String(t) + ": " + s.rawValue)
                }
            }
            context.stdout.screenLine(line)
            if let n = e.notification {
                if let sub = n.subtitle { context.stdout.screenLine("      " + Render.oneLine(sub)) }
                if n.title != nil, let body = n.body { context.stdout.screenLine("      " + Render.oneLine(body)) }
            }
            context.stdout.screenLine(
                "      " + style.dim(Render.details(entry.loaded, anchor: anchor, context.token(e.device, arguments))))
            for finding in entry.findings {
                context.stdout.wrappedLine(
                    "      " + style.yellow("⚠ " + finding.code.rawValue) + ": "
                        + finding.message(tokens: context.tokens(arguments)), indent: "        ")
            }
        }
        return ExitStatus.success
    }
}
