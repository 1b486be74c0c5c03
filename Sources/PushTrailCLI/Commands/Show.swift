import PushTrailModel
import PushTrailStore

/// `pushtrail show`: one event in full.
enum ShowCommand: Command {
    static let spec = CommandSpec(
        name: "show",
        summary: "Show one event in full: by id, or by @SEQ.",
        usage: ["show EVENT_ID [--json]", "show @SEQ [--json]"],
        options: [OutputFormat.jsonFlag("print {\"seq\", \"recorded_at\", \"hash\", \"event\"}")]
            + ClusterOptions.specs,
        operands: "EVENT_ID | @SEQ")

    /// What `show` was asked for, checked before the store is opened.
    struct Options: Sendable {
        /// An event id, or `@SEQ`.
        var target: String
        var json: Bool
    }

    /// Exactly one event: an id or `@SEQ`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard arguments.operands.count == 1, let target = arguments.operands.first else {
            throw UsageError("name one event: an id, or @SEQ", command: "show")
        }
        return Options(target: target, json: try OutputFormat.parse(arguments) == .json)
    }

    /// Prints the event in full, with where it sits in its task's story.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let target = options.target
        if let cluster = try Cluster.named(by: arguments, context) {
            guard !target.hasPrefix("@") else {
                throw UsageError(
                    "@SEQ names an event of one store; over a cluster, name the event by id", command: "show")
            }
            guard let (shard, loaded) = try cluster.show(target) else {
                throw CommandError.notFound("no event \(target) in \(cluster.path)")
            }
            if options.json {
                var value = Presentation.show(loaded.stored)
                if case .object(let members) = value {
                    value = .object(members + [("shard", .string(cluster.file.shards[shard].name))])
                }
                context.stdout.line(cluster.withMissing(value).serialized())
                return ExitStatus.success
            }
            let book = try cluster.book(for: .timeline(.event(target), nil), shards: [shard])
            let entry = try cluster.timeline(.event(target), horizon: nil, shards: [shard], book: book).first?.entry
            let answeredBy = try loaded.event.delivery.flatMap { d in
                try cluster.show(d.notificationID)?.loaded.event.notification?.platform
            }
            return try describe(loaded.stored, loaded.event, entry: entry, answeredBy: answeredBy, arguments, context)
        }
        let store = try context.openStore(arguments, create: false)
        let found: StoredEvent? = try store.read { reader in
            if target.hasPrefix("@"), let seq = UInt64(target.dropFirst()) { return try reader.event(seq: seq) }
            return try reader.seq(forID: target).flatMap { try reader.event(seq: $0) }
        }
        guard let stored = found else { throw CommandError.notFound("no event \(target) in \(store.path)") }
        if options.json {
            context.stdout.line(Presentation.show(stored).serialized())
            return ExitStatus.success
        }
        let event = try stored.decode()
        // Where the event sits in its task's story, and its findings: the same timeline
        // analysis `thread` runs, so a delivery's findings show too.
        // For a delivery, the service that answered: the one its notification went
        // through, when stored (in the same snapshot).
        let (entry, answeredBy) = try store.read { reader in
            let entry = try reader.timeline([LoadedEvent(stored: stored, event: event)], horizon: nil).first
            let answeredBy = try event.delivery.flatMap { d in
                try reader.seq(forID: d.notificationID).flatMap { try reader.event(seq: $0) }
            }.flatMap { try? $0.decode().notification?.platform }
            return (entry, answeredBy)
        }
        return try describe(stored, event, entry: entry, answeredBy: answeredBy, arguments, context)
    }

    /// Prints the event for people: its facts, its task's state after it, its findings
    /// and its JSON.
    static func describe(
        _ stored: StoredEvent, _ event: Event, entry: TimelineEntry?, answeredBy: Platform?, _ arguments: Arguments,
        _ context: Context
    ) throws -> Int32 {
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        var rows: [(String, String)] = [
            ("seq", String(stored.seq)), ("at", event.at.description), ("recorded", stored.recordedAt.description),
            ("user", event.user), ("device", context.token(event.device, arguments)), ("hash", SHA256.hex(stored.hash)),
        ]
        if let entry, let taskID = entry.taskID {
            rows.append(("task", String(taskID)))
            if let state = entry.taskState {
                let shown = entry.transition.map { $0.from == $0.to ? state.rawValue : "\($0.from) → \($0.to)" }
                rows.append(("state", (shown ?? state.rawValue) + style.dim(" (the task at this point)")))
            }
        }
        let findings = entry?.findings ?? []
        if let n = event.notification { rows.insert(("platform", n.platform.rawValue), at: 4) }
        if let thread = event.threadID { rows.append(("thread", thread)) }
        if let d = event.delivery {
            let platform = answeredBy ?? d.impliedPlatform
            let answer = "\(platform.service) \(d.status) \(d.reason ?? (d.status == 200 ? "accepted" : ""))"
            rows.append(("answer", d.status == 200 ? answer : style.red(answer)))
            if let message = d.messageID { rows.append(("message", message)) }
        }
        context.stdout.line(style.bold("\(event.type) \(event.id)"))
        for (k, v) in rows { context.stdout.line("  " + style.dim(k.padding(9)) + " " + v) }
        for finding in findings {
            context.stdout.line(
                "  " + style.yellow("⚠ \(finding.code.rawValue)") + ": "
                    + finding.message(tokens: context.tokens(arguments)))
        }
        context.stdout.line()
        var decoder = EventDecoder()
        let pretty = try stored.raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json in
                JSONPretty.render(json) { path in
                    // An FCM message names its device too: the same token (ingest checks).
                    (path == "device" || (path == "payload.token" && event.notification?.platform == .android))
                        && !arguments.flag("show-tokens")
                        ? JSONValue.quoted(context.token(event.device, arguments)) : nil
                }
            }
        }
        context.stdout.line(pretty)
        return ExitStatus.success
    }
}
