import PushTrailModel
import PushTrailStore

/// `pushtrail publish` and `pushtrail consume`: events to and from NATS JetStream. Both
/// run `pushtrail-stream` (linked dynamically against libnats, which ships no static
/// archive), found as `serve` finds the server, after checking their options here.
enum PublishCommand: Command {
    static let spec = CommandSpec(
        name: "publish",
        summary: "Publish events to NATS JetStream, each to its task's partition (backfills; the backend's reference).",
        usage: ["publish [FILE…] --server URL[,URL…] --partitions N [--stream NAME] [--replicas R]"],
        options: [
            .option("server", "URL[,URL…]", "the NATS servers (nats://host:4222)"),
            .option("partitions", "N", "how many partitions the stream has (the consumers' count)"),
            .option("stream", "NAME", "the JetStream stream (default PUSHTRAIL)"),
            .option("replicas", "R", "copies of the stream when it is created (default 1)"),
            .flag("quiet", short: "q", "no summary line"),
        ],
        operands: "[FILE…]",
        operandCompletion: .file,
        discussion: """
            Each event line goes to the subject pushtrail.events.P, P being the CRC-32 of its task id in
            decimal modulo N (a delivery goes with its notification's task), with the header
            Nats-Msg-Id set to its id, so that JetStream drops one it already holds. Every
            acknowledgement is awaited. Bad lines are rejected as FILE:LINE: reason (exit 65).
            """)

    struct Options: Sendable, Equatable { var arguments: [String] }

    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard let servers = arguments.value("server") else {
            throw UsageError("name the NATS servers: --server nats://HOST:4222", command: "publish")
        }
        guard let text = arguments.value("partitions"), let n = Int(text), (1...4096).contains(n) else {
            throw UsageError("--partitions N is needed: the stream's partition count, 1 to 4096", command: "publish")
        }
        var out = ["publish"] + arguments.operands + ["--server", servers, "--partitions", String(n)]
        out += try StreamOptions.common(arguments, command: "publish")
        return Options(arguments: out)
    }

    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        try ServeCommand.replaceProcess(with: "pushtrail-stream", options.arguments, context)
    }
}

enum ConsumeCommand: Command {
    static let spec = CommandSpec(
        name: "consume",
        summary: "Append the events of some partitions of a NATS JetStream stream to the store, exactly once.",
        usage: ["consume --server URL[,URL…] --partitions LIST [--stream NAME] [--rejects PATH] [--drain]"],
        options: [
            .option("server", "URL[,URL…]", "the NATS servers (nats://host:4222)"),
            .option("partitions", "LIST", "the partitions this store owns: 0-3, 1,5, …"),
            .option("stream", "NAME", "the JetStream stream (default PUSHTRAIL)"),
            .option("replicas", "R", "copies of the stream when it is created (default 1)"),
            .option("rejects", "PATH", "also append each rejected message to PATH (0600)", completion: .file),
            .flag("drain", "stop once every partition is caught up, instead of following"),
            .flag("quiet", short: "q", "no progress line"),
        ],
        discussion: """
            Each partition is read from the message after the stream sequence the store holds it
            through; the sequences commit in the same transaction as the events they carried, so a
            consumer stopped or killed at any moment and started again stores every message exactly
            once. A bad message is rejected as STREAM/PARTITION@SEQ: reason and consumption goes on.
            SIGTERM or SIGINT finishes the batch, commits and exits 0. While no server answers, it
            tries again with a growing pause and says so. stats shows each partition's sequence.
            """)

    struct Options: Sendable, Equatable { var arguments: [String] }

    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard let servers = arguments.value("server") else {
            throw UsageError("name the NATS servers: --server nats://HOST:4222", command: "consume")
        }
        guard let list = arguments.value("partitions"), Partition.parseList(list, count: 4096) != nil else {
            throw UsageError(
                "--partitions LIST is needed: the partitions this store owns, e.g. 0-3", command: "consume")
        }
        var out = ["consume", "--server", servers, "--partitions", list]
        out += try StreamOptions.common(arguments, command: "consume")
        if let rejects = arguments.value("rejects") { out += ["--rejects", rejects] }
        if arguments.flag("drain") { out.append("--drain") }
        return Options(arguments: out)
    }

    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        try ServeCommand.replaceProcess(
            with: "pushtrail-stream", options.arguments + ["--store", try context.singleStorePath(arguments)], context)
    }
}

enum StreamOptions {
    /// `--stream`, `--replicas` and `-q`, checked, as `pushtrail-stream` takes them.
    static func common(_ arguments: Arguments, command: String) throws -> [String] {
        var out: [String] = []
        if let stream = arguments.value("stream") { out += ["--stream", stream] }
        if let text = arguments.value("replicas") {
            guard let r = Int(text), (1...5).contains(r) else {
                throw UsageError("--replicas takes 1 to 5", command: command)
            }
            out += ["--replicas", String(r)]
        }
        if arguments.flag("quiet") { out.append("-q") }
        return out
    }
}
