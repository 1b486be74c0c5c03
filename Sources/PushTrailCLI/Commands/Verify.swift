import PushTrailModel
import PushTrailStore

/// `pushtrail verify`: recompute the chain and check every index.
enum VerifyCommand: Command {
    static let spec = CommandSpec(
        name: "verify",
        summary: "Recompute the hash chain and check every index against the events.",
        usage: ["verify [--json]"],
        options: [
            OutputFormat.jsonFlag(
                "print {\"ok\", \"events\", \"head\"} (+ first_bad_seq, reason); "
                    + "over a cluster {\"ok\", \"shards\": […]}"
            )
        ] + ClusterOptions.specs,
        discussion: """
            Exit status 0 when the log is intact, 1 naming the first bad seq when an event
            was changed, removed or reordered, or an index disagrees with the events.
            """)

    /// What `verify` was asked for: only the output format.
    struct Options: Sendable {
        var json: Bool
    }

    /// `--json` or not; there is nothing else to get wrong.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        Options(json: try OutputFormat.parse(arguments) == .json)
    }

    /// Recomputes the chain and checks the indexes; exit 1 naming the first bad seq.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        if let cluster = try Cluster.named(by: arguments, context) {
            let reports = try cluster.perShard(.verify)
            let ok = reports.allSatisfy { $0.bool("ok") == true } && cluster.missing.isEmpty
            if options.json {
                let shards = reports.map { JSONValue.object([("shard", .string($0.name))] + $0.members) }
                context.stdout.line(
                    cluster.withMissing(.object([("ok", .bool(ok)), ("shards", .array(shards))])).serialized())
            } else {
                let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
                let width = reports.map(\.name.count).max() ?? 0
                for r in reports {
                    context.stdout.line(
                        r.name.padding(width) + "  "
                            + (r.bool("ok") == true
                                ? style.green("ok")
                                    + ": \(grouped(Int(r.int("events") ?? 0))) events, chain and indexes intact"
                                : style.red("FAILED")
                                    + " at seq \(r.int("first_bad_seq") ?? 0): "
                                    + (r.string("reason") ?? "unknown problem"))
                    )
                }
            }
            return ok ? ExitStatus.success : ExitStatus.notFound
        }
        let store = try context.openStore(arguments, create: false)
        store.prefetch()  // verify reads every page
        let progress = ProgressLine(context.stderr, enabled: !options.json)
        let started = WallClock.now()
        let report = try store.verify { seq in progress.update("verify: \(grouped(Int(seq))) events checked") }
        progress.clear()
        let seconds = Double(WallClock.now().microseconds - started.microseconds) / 1e6
        if options.json {
            context.stdout.line(Presentation.verify(report).serialized())
        } else {
            let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
            if report.ok {
                let rate = seconds > 0 ? Double(report.bytes) / 1e6 / seconds : 0
                context.stdout.line(
                    style.green("ok") + ": \(grouped(Int(report.events))) events, chain and indexes intact; "
                        + "head seq \(report.head.seq) \(report.head.hex) "
                        + "(\(String(format1(seconds))) s, \(Int(rate)) MB/s)"
                )
            } else {
                context.stdout.line(
                    style.red("FAILED") + " at seq \(report.firstBadSeq ?? 0): \(report.problem ?? "unknown problem")")
            }
        }
        return report.ok ? ExitStatus.success : ExitStatus.notFound
    }
}

/// One decimal place.
func format1(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
