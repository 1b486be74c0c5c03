import PushTrailModel
import PushTrailStore

/// `pushtrail verify`: recompute the chain and check every index.
enum VerifyCommand: Command {
    static let spec = CommandSpec(
        name: "verify",
        summary: "Recompute the hash chain and check every index against the events.",
        usage: ["verify [--json]"],
        options: [OutputFormat.jsonFlag("print {\"ok\", \"events\", \"head\"} (+ first_bad_seq, reason)")],
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
        let store = try context.openStore(arguments, create: false)
        store.prefetch()  // verify reads every page
        let progress = ProgressLine(context.stderr, enabled: !options.json)
        let started = WallClock.now()
        let report = try store.verify { seq in progress.update("verify: \(grouped(Int(seq))) events checked") }
        progress.clear()
        let seconds = Double(WallClock.now().microseconds - started.microseconds) / 1e6
        if options.json {
            var members: [(String, JSONValue)] = [
                ("ok", .bool(report.ok)), ("events", .uint(report.events)),
                ("head", .object([("seq", .uint(report.head.seq)), ("hash", .string(report.head.hex))])),
            ]
            if !report.ok {
                members.append(("first_bad_seq", .uint(report.firstBadSeq)))
                members.append(("reason", .string(report.problem)))
            }
            context.stdout.line(JSONValue.object(members).serialized())
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
