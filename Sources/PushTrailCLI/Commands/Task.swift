import PushTrailModel
import PushTrailStore

/// `pushtrail task`: a task's state and fields at a point in time, and how it got there.
enum TaskCommand: Command {
    static let spec = CommandSpec(
        name: "task",
        summary: "Rebuild a task's state and fields at a point in time, with the history that produced them.",
        usage: ["task TASK_ID [--at T] [--json]"],
        options: [
            AsOfOption.spec,
            OutputFormat.jsonFlag("print the JSON (docs/COMMANDS.md)"),
            Render.relativeToOption,
        ] + ClusterOptions.specs,
        operands: "TASK_ID",
        discussion: """
            The state is the fold of the task's accepted actions in (at, seq) order; fields
            are last-writer-wins over notifications and accepted actions' changes. Each
            history step shows the state before and after and its audit finding, if any.
            """)

    /// What `task` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var taskID: Int64
        var at: Horizon?
        var json: Bool
        /// The event relative times are measured from (`--relative-to`).
        var relativeTo: String?
    }

    /// One integer task id, then `--at`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard arguments.operands.count == 1, let taskID = Int64(arguments.operands[0]) else {
            throw UsageError("name one task by its integer id, e.g. pushtrail task 1102", command: "task")
        }
        return Options(
            taskID: taskID, at: try AsOfOption.parse(arguments, clock: clock),
            json: try OutputFormat.parse(arguments) == .json, relativeTo: arguments.value("relative-to"))
    }

    /// Prints the task's state and fields as of `--at`, and the history behind them.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let taskID = options.taskID
        if let cluster = try Cluster.named(by: arguments, context) {
            try Cluster.refuseSequence(options.at, option: "at", command: "task")
            let missing =
                "no events for task \(taskID)\(options.at == nil ? "" : " at or before --at") in \(cluster.path)"
            if options.json {
                guard let answer = try cluster.task(taskID, horizon: options.at) else {
                    throw CommandError.notFound(missing)
                }
                context.stdout.line(answer.serialized())
                return ExitStatus.success
            }
            guard let (report, asOf) = try cluster.taskReport(taskID, horizon: options.at) else {
                throw CommandError.notFound(missing)
            }
            return try show(report, asOf: asOf, options, arguments, context)
        }
        let (report, asOf) = try context.asOfReport(
            arguments, horizon: options.at, missing: "no events for task \(taskID)"
        ) {
            try $0.taskReport(taskID, horizon: $1)
        }
        return try show(report, asOf: asOf, options, arguments, context)
    }

    /// Prints `report` as `--json` or for people.
    static func show(
        _ report: TaskReport, asOf: String, _ options: Options, _ arguments: Arguments, _ context: Context
    ) throws -> Int32 {
        let taskID = options.taskID
        if options.json {
            context.stdout.line(Presentation.task(report, asOf: asOf, tokens: context.tokens(arguments)).serialized())
            return ExitStatus.success
        }
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let anchor = try Render.anchor(in: report.history.map(\.loaded), relativeTo: options.relativeTo)
        let f = report.snapshot.fields
        var title = "task \(taskID)"
        if let name = f.taskName { title += " · \(Render.oneLine(name))" }
        if let r = f.residenceName { title += " · \(Render.oneLine(r))" }
        context.stdout.line(style.bold(title))
        let rows: [(String, String)] = [
            ("state", style.bold(report.snapshot.state.rawValue) + style.dim("  (as of \(asOf))")),
            ("residence", f.residenceID.map { "\($0)" } ?? "-"),
            ("due date", f.dueDate.map { "\($0)" } ?? "-"),
            ("completions", String(f.completions)),
        ]
        for (k, v) in rows { context.stdout.line("  " + style.dim(k.padding(12)) + v) }
        context.stdout.line()
        var header = style.bold("history") + " (\(report.history.count) events)"
        if let anchor { header += style.dim(" · times relative to \(Render.anchorName(anchor.event)) #\(anchor.seq)") }
        context.stdout.screenLine(header)
        for step in report.history {
            let e = step.loaded.event
            var line =
                "  " + e.at.description + "  " + style.dim(("#" + String(step.loaded.seq)).padding(6)) + " "
                + Render.headline(e, style: style)
            line +=
                step.from == step.to
                ? style.dim("  · " + step.to.rawValue)
                : "  · " + step.from.rawValue + " → " + style.bold(step.to.rawValue)
            context.stdout.screenLine(line)
            context.stdout.screenLine(
                "        " + style.dim(Render.details(step.loaded, anchor: anchor, context.token(e.device, arguments))))
            for finding in step.findings {
                context.stdout.wrappedLine(
                    "        " + style.yellow("⚠ " + finding.code.rawValue) + ": "
                        + finding.message(tokens: context.tokens(arguments)), indent: "          ")
            }
        }
        return ExitStatus.success
    }
}
