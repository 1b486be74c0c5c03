import PushTrailModel
import PushTrailStore

/// `pushtrail head`: the chain head, to note down or publish.
enum HeadCommand: Command {
    static let spec = CommandSpec(
        name: "head",
        summary: "Print the chain head (seq and SHA-256), a value to note down and compare later.",
        usage: ["head [--json]"],
        options: [
            OutputFormat.jsonFlag(
                "print {\"seq\", \"hash\"}; over a cluster {\"shards\": [{\"shard\", \"seq\", \"hash\"}]}")
        ]
            + ClusterOptions.specs,
        discussion: """
            Every event's hash covers the one before it, so any change to a stored event,
            or any removal or reordering, changes every later hash and the head. Compare a
            head you noted with 'pushtrail verify', which recomputes the chain.
            """)

    /// What `head` was asked for: only the output format.
    struct Options: Sendable {
        var json: Bool
    }

    /// `--json` or not; there is nothing else to get wrong.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        Options(json: try OutputFormat.parse(arguments) == .json)
    }

    /// Prints the chain head.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        if let cluster = try Cluster.named(by: arguments, context) {
            let heads = try cluster.perShard(.head)
            if options.json {
                context.stdout.line(
                    cluster.withMissing(
                        .object([("shards", .array(heads.map { .object([("shard", .string($0.name))] + $0.members) }))])
                    )
                    .serialized())
            } else {
                let width = heads.map(\.name.count).max() ?? 0
                for h in heads {
                    context.stdout.line(h.name.padding(width) + "  seq \(h.int("seq") ?? 0) \(h.string("hash") ?? "")")
                }
            }
            return ExitStatus.success
        }
        let store = try context.openStore(arguments, create: false)
        let head = try store.read { try $0.head() }
        if options.json {
            context.stdout.line(Presentation.head(head).serialized())
        } else {
            context.stdout.line("seq \(head.seq) \(head.hex)")
        }
        return ExitStatus.success
    }
}
