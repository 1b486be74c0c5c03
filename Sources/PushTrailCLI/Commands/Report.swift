import PushTrailModel
import PushTrailStore
import PushTrailWeb

/// `pushtrail report`: a timeline as one self-contained HTML page, for tickets.
enum ReportCommand: Command {
    static let spec = CommandSpec(
        name: "report",
        summary: """
            Write a self-contained HTML page of a thread, a task or a user's events, notifications drawn as \
            the user saw them.
            """,
        usage: [
            "report --thread ID [--at T] [-o FILE.html]",
            "report --task N [--at T] [-o FILE.html]",
            "report --user U --since T [--at T] [-o FILE.html]",
        ],
        options: [
            .option("thread", "ID", "the thread's timeline (as `pushtrail thread` shows it)"),
            .option("task", "N", "the task's events and the delivery answers to its notifications"),
            .option("user", "U", "the user's events (with --since)"),
            .option("since", "T", "with --user: from T on (RFC 3339, a date, -7d, …)"),
            AsOfOption.spec,
            .option(
                "output", short: "o", "FILE", "where to write (- for standard output; default <subject>-report.html)",
                completion: .file),
            .option(
                "app-name", "NAME",
                "the app name on the notification cards (default: the last part of the topic or Android package)"),
            Render.relativeToOption,
            .flag("force", "overwrite an existing file"),
        ] + ClusterOptions.specs,
        discussion: """
            The page holds everything it shows (no scripts, no external assets) and opens
            offline: each notification as an iOS banner with its category's buttons or as an
            Android card with the buttons it showed (those the user never saw struck through),
            the actions pressed and the server's answers, the APNs and FCM delivery answers,
            the task's state after each event, and audit findings where they occur. The header holds
            the store's chain head, so the page can be checked against the log later.
            Payload text is escaped; the page's Content-Security-Policy forbids scripts.
            """)

    /// Whose timeline the page shows.
    enum Subject: Equatable, Sendable {
        case thread(String)
        case task(Int64)
        /// A user's events from `since` on.
        case user(String, since: Timestamp)
    }

    /// What `report` was asked for, checked before the store is opened or a file written.
    struct Options: Sendable {
        var subject: Subject
        var at: Horizon?
        /// `--at` as given, for the command line the page shows.
        var atText: String?
        /// `-o`: a path, or `-` for standard output; nil for the default name.
        var output: String?
        var appName: String?
        /// The event relative times are measured from (`--relative-to`).
        var relativeTo: String?
        var force: Bool
    }

    /// Exactly one subject, `--since` (a time) with `--user` only; then `--at`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let selectors = ["thread", "task", "user"].filter { arguments.value($0) != nil }
        guard selectors.count == 1, arguments.operands.isEmpty else {
            throw UsageError(
                selectors.count > 1
                    ? "give only one of --thread, --task, --user"
                    : "name what to report: --thread ID, --task N or --user U --since T",
                command: "report")
        }
        let taskID = try TaskIDOption.parse(arguments)
        let user = arguments.value("user")
        if user != nil && arguments.value("since") == nil {
            throw UsageError("--user needs --since T, e.g. --since -7d", command: "report")
        }
        if user == nil && arguments.value("since") != nil {
            throw UsageError("--since goes with --user", command: "report")
        }
        let since: Timestamp? = try TimeOption.horizon(arguments, "since", clock: clock).map { horizon in
            guard case .time(let t) = horizon else {
                throw UsageError("--since takes a time, not @SEQ", command: "report")
            }
            return t
        }
        let horizon = try AsOfOption.parse(arguments, clock: clock)
        let subject: Subject
        if let thread = arguments.value("thread") {
            subject = .thread(thread)
        } else if let taskID {
            subject = .task(taskID)
        } else {
            subject = .user(user!, since: since!)
        }
        return Options(
            subject: subject, at: horizon, atText: arguments.value("at"), output: arguments.value("output"),
            appName: arguments.value("app-name"), relativeTo: arguments.value("relative-to"),
            force: arguments.flag("force"))
    }

    /// Writes the page (or prints it with `-o -`) and says where it went.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let horizon = options.at
        let cluster = try Cluster.named(by: arguments, context)
        try Cluster.refuseSequence(cluster == nil ? nil : horizon, option: "at", command: "report")

        let subject: String
        let stem: String
        var query = ["pushtrail", "report"]
        switch options.subject {
        case .thread(let thread):
            (subject, stem) = ("thread \(thread)", thread)
            query += ["--thread", thread]
        case .task(let taskID):
            (subject, stem) = ("task \(taskID)", "task-\(taskID)")
            query += ["--task", String(taskID)]
        case .user(let user, let since):
            (subject, stem) = ("user \(user) since \(since)", "user-\(user)")
            query += ["--user", user, "--since", since.description]
        }
        if let at = options.atText { query += ["--at", at] }

        let entries: [TimelineEntry]
        let head: ChainHead
        let storePath: String
        var shardHeads: [(name: String, head: ChainHead)] = []
        var entryAnchor: (@Sendable (LoadedEvent) -> String)?
        if let cluster {
            let timelineSubject: TimelineSubject
            switch options.subject {
            case .thread(let thread): timelineSubject = .thread(thread)
            case .task(let taskID): timelineSubject = .taskWithDeliveries(taskID)
            case .user(let user, let since): timelineSubject = .user(user, since: since)
            }
            let merged = try cluster.timeline(
                timelineSubject, horizon: horizon, stateChanges: true,
                book: try cluster.book(for: .timeline(timelineSubject, horizon)))
            entries = merged.map(\.entry)
            var shardOf: [ObjectIdentifier: String] = [:]
            for (shard, entry) in merged { shardOf[ObjectIdentifier(entry.loaded)] = cluster.file.shards[shard].name }
            let names = shardOf
            entryAnchor = { "seq-\(names[ObjectIdentifier($0)] ?? "")-\($0.seq)" }
            shardHeads = try cluster.perShard(.head).map {
                (
                    $0.name,
                    ChainHead(seq: $0.uint("seq") ?? 0, hash: SHA256.bytes(hex: $0.string("hash") ?? "") ?? [])
                )
            }
            (head, storePath) = (.empty, cluster.path)
        } else {
            let store = try context.openStore(arguments, create: false)
            (entries, head) = try store.read { reader -> ([TimelineEntry], ChainHead) in
                let members: [LoadedEvent]
                switch options.subject {
                case .thread(let thread): members = try reader.threadEvents(thread, horizon: horizon)
                case .task(let taskID): members = try reader.taskTimelineEvents(taskID, horizon: horizon)
                case .user(let user, let since): members = try reader.userEvents(user, since: since, horizon: horizon)
                }
                guard !members.isEmpty else { return ([], try reader.head()) }
                return (try reader.timeline(members, horizon: horizon, stateChanges: true), try reader.head())
            }
            storePath = store.path
        }
        guard !entries.isEmpty else {
            throw CommandError.notFound(
                "no events for \(subject)\(horizon == nil ? "" : " at or before --at") in \(storePath)")
        }
        let names = TimelineView.appNames(entries, name: options.appName)
        var content = ReportContent(
            subject: subject, query: query.map { Render.shellWord($0) }.joined(separator: " "),
            asOf: cluster?.asOf(horizon) ?? Presentation.asOf(horizon, head: head.seq), head: head,
            storePath: storePath,
            madeAt: context.clock(), version: PushTrail.version, entries: entries,
            view: TimelineView(
                subject: subject, appName: names.ios, androidAppName: names.android,
                anchor: try Render.anchor(in: entries.filter(\.member).map(\.loaded), relativeTo: options.relativeTo),
                token: { context.token($0, arguments) }, links: false))
        content.shardHeads = shardHeads
        if let entryAnchor { content.view.entryAnchor = entryAnchor }
        let page = Array(ReportPage.render(content).utf8)

        let output = options.output ?? SafeFileName.named(stem: stem, tail: "-report.html")
        if output == "-" {
            context.stdout.write(bytes: page)
            return ExitStatus.success
        }
        let file = try OutputFile.create(output, overwrite: options.force)
        defer { file.close() }
        try file.write(page)
        let findings = entries.reduce(0) { $0 + $1.findings.count }
        context.stderr.line(
            "pushtrail: wrote \(output) (\(entries.filter(\.member).count) events, "
                + "\(findings) finding\(findings == 1 ? "" : "s"), as of \(content.asOf))"
        )
        return ExitStatus.success
    }
}
