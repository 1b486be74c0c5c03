import PushTrailModel
import PushTrailStore

/// `pushtrail stats`: what the store holds.
enum StatsCommand: Command {
    static let spec = CommandSpec(
        name: "stats",
        summary: "Count events by type, tasks, threads and users; the time span, the store's size and format.",
        usage: ["stats [--json]"],
        options: [OutputFormat.jsonFlag("print the counts as JSON")] + ClusterOptions.specs)

    /// What `stats` was asked for: only the output format.
    struct Options: Sendable {
        var json: Bool
    }

    /// `--json` or not; there is nothing else to get wrong.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        Options(json: try OutputFormat.parse(arguments) == .json)
    }

    /// Prints what the store holds.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        if let cluster = try Cluster.named(by: arguments, context) {
            let stats = try cluster.stats()
            if options.json {
                context.stdout.line(stats.serialized())
                return ExitStatus.success
            }
            let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
            for (k, v) in cluster.statsRows(stats) { context.stdout.line(style.bold(k.padding(9)) + " " + v) }
            return ExitStatus.success
        }
        let store = try context.openStore(arguments, create: false)
        let stats = try store.read { try $0.statistics() }
        let bytes = store.fileBytes
        if options.json {
            context.stdout.line(Presentation.stats(stats, storeBytes: Int64(bytes)).serialized())
            return ExitStatus.success
        }
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let types = EventType.allCases.map { "\(grouped(stats.byType[$0] ?? 0)) \($0.plural)" }.joined(separator: ", ")
        let rows: [(String, String)] =
            [
                ("events", "\(grouped(Int(stats.events))) (\(types))"),
                ("tasks", grouped(stats.tasks)),
                ("threads", grouped(stats.threads)),
                ("users", grouped(stats.users)),
                ("first at", stats.firstAt?.description ?? "-"),
                ("last at", stats.lastAt?.description ?? "-"),
                ("store", "\(IngestCommand.megabytes(bytes)) in \(store.path)"),
                (
                    "format",
                    stats.dictionaries == 0
                        ? "\(stats.format): records stored whole"
                        : "\(stats.format): records compressed "
                            + "(\(stats.dictionaries == 1 ? "1 dictionary" : "\(stats.dictionaries) dictionaries"))"
                ),
                ("head", "seq \(stats.head.seq) \(stats.head.hex)"),
            ]
            + stats.streams.map {
                ("stream", "\($0.stream) partition \($0.partition) stored through sequence \($0.sequence)")
            }
        for (k, v) in rows { context.stdout.line(style.bold(k.padding(9)) + " " + v) }
        return ExitStatus.success
    }
}

extension String {
    /// Pads with spaces to `width` characters.
    func padding(_ width: Int) -> String {
        // In ASCII without CR (CR LF is one Character) Characters are bytes: count those.
        let length = utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) ? utf8.count : count
        return length >= width ? self : self + String(repeating: " ", count: width - length)
    }
}
