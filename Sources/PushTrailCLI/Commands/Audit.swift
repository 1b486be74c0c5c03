import PushTrailModel
import PushTrailStore

/// `pushtrail audit`: what was sent against what was true.
enum AuditCommand: Command {
    static let spec = CommandSpec(
        name: "audit",
        summary: "Check what was sent against what was true (findings: docs/AUDIT.md); exit 1 when there are any.",
        usage: ["audit [FILTERS] [--code CODE]… [--json]"],
        options: LogFilters.options + [
            .option(
                "code", "CODE", "only this finding code (repeatable)",
                completion: .choices(FindingCode.allCases.map(\.rawValue)),
                repeatable: true),
            OutputFormat.jsonFlag("print {\"findings\": […], \"counts\": {…}}"),
        ] + ClusterOptions.specs,
        discussion: """
            Codes: \(FindingCode.allCases.map(\.rawValue).joined(separator: ", ")).
            Filters select the events whose findings are reported; the task state behind
            each finding is always rebuilt from the task's whole history.
            """)

    /// What `audit` was asked for, checked before the store is opened.
    struct Options: Sendable {
        /// The events whose findings are reported.
        var query: LogQuery
        /// Only these codes; empty for every code.
        var codes: Set<FindingCode>
        var json: Bool
    }

    /// The filters, then the codes; an unknown code is a usage error listing the known ones.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let query = try LogFilters.parse(arguments, clock: clock)
        var codes = Set<FindingCode>()
        for c in arguments.all("code") {
            guard let code = FindingCode(rawValue: c) else {
                let known = FindingCode.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("unknown --code \(c); codes are \(known)", command: "audit")
            }
            codes.insert(code)
        }
        return Options(query: query, codes: codes, json: try OutputFormat.parse(arguments) == .json)
    }

    /// Reports the findings of the selected events; exit 1 when there are any.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let q = options.query
        let codes = options.codes
        let tokens = context.tokens(arguments)
        if let cluster = try Cluster.named(by: arguments, context) {
            try Cluster.refuseSequence(q.since, option: "since", command: "audit")
            try Cluster.refuseSequence(q.until, option: "until", command: "audit")
            let findings = try cluster.audit(q, codes: codes)
            if options.json {
                context.stdout.line(cluster.withMissing(Presentation.audit(findings, tokens: tokens)).serialized())
                return findings.isEmpty ? ExitStatus.success : ExitStatus.notFound
            }
            return show(findings, asOf: cluster.asOf(nil), options, arguments, context)
        }
        let store = try context.openStore(arguments, create: false)
        if !q.hasIndexedFilter { store.prefetch() }  // a walk over every event
        let progress = ProgressLine(context.stderr, enabled: !options.json)
        let (findings, head) = try store.read { reader in
            (
                try reader.audit(q, codes: codes) { n in progress.update("audit: \(grouped(n)) events") },
                try reader.head().seq
            )
        }
        progress.clear()
        if options.json {
            context.stdout.line(Presentation.audit(findings, tokens: tokens).serialized())
            return findings.isEmpty ? ExitStatus.success : ExitStatus.notFound
        }
        return show(findings, asOf: "@\(head)", options, arguments, context)
    }

    /// Prints the findings for people: counts by code, then each code's findings.
    static func show(
        _ findings: [Finding], asOf: String, _ options: Options, _ arguments: Arguments, _ context: Context
    )
        -> Int32
    {
        let tokens = context.tokens(arguments)
        var counts: [FindingCode: Int] = [:]
        for f in findings { counts[f.code, default: 0] += 1 }
        let present = FindingCode.allCases.filter { counts[$0] != nil }
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        if findings.isEmpty {
            context.stdout.line(style.green("no findings") + " (as of \(asOf))")
        } else {
            context.stdout.line(
                style.bold("\(grouped(findings.count)) finding\(findings.count == 1 ? "" : "s")")
                    + " (as of \(asOf))")
            let width = (present.map(\.rawValue.count).max() ?? 0) + 2
            for code in present {
                context.stdout.line("  " + code.rawValue.padding(width) + grouped(counts[code]!))
            }
            for code in present {
                context.stdout.line()
                context.stdout.line(style.yellow(code.rawValue) + " (\(counts[code]!))")
                for f in findings where f.code == code {
                    context.stdout.wrappedLine(
                        "  \(f.at)  " + style.dim("#\(f.seq)".padding(6)) + " " + f.message(tokens: tokens),
                        indent: "        ")
                }
            }
        }
        return findings.isEmpty ? ExitStatus.success : ExitStatus.notFound
    }
}
