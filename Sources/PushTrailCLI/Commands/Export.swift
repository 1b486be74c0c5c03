import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail export`: a stored notification as an `.apns` file for the iOS Simulator.
enum ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export",
        summary: "Write a notification as an .apns file to drag onto the iOS Simulator (or pipe to xcrun simctl push).",
        usage: [
            "export EVENT_ID [-o PATH] [--bundle ID]",
            "export --thread ID [--at T] [-o PATH | --all --dir DIR] [--bundle ID]",
            "export --task N [--at T] [-o PATH | --all --dir DIR] [--bundle ID]",
        ],
        options: [
            .option("thread", "ID", "the latest notification of this thread (at or before --at)"),
            .option("task", "N", "the latest notification for this task (at or before --at)"),
            AsOfOption.spec,
            .option(
                "output", short: "o", "PATH",
                "where to write (- for standard output; default <thread-or-task>-<seq>.apns)", completion: .file),
            .option("bundle", "ID", "the app bundle id (default: the event's topic, else $PUSHTRAIL_BUNDLE)"),
            .flag("all", "every notification of the thread or task, as numbered files in --dir"),
            .option("dir", "DIR", "the folder for --all (created 0700 if missing)", completion: .directory),
            .flag("force", "overwrite existing files"),
        ],
        operands: "EVENT_ID",
        discussion: """
            The file holds "Simulator Target Bundle" first, then the payload's keys in
            their original order with their values exactly as ingested. simctl refuses
            files over 4096 bytes and shows buttons only for categories the app
            registers: such files are still written, with a warning.
            """)

    /// What to export: one event by id, or the latest (or every) notification of a thread or task.
    enum Selection: Equatable, Sendable {
        case event(String)
        case thread(String)
        case task(Int64)
    }

    /// What `export` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var selection: Selection
        var at: Horizon?
        /// `-o`: a path, or `-` for standard output; nil for the default name.
        var output: String?
        var bundle: String?
        /// `--all --dir DIR`: every notification, as numbered files in `dir`.
        var all: Bool
        var dir: String?
        var force: Bool
    }

    /// Exactly one selection; `--all` only with `--dir`, without `-o`, for a thread or task; then `--at`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let selectors = [
            arguments.operands.isEmpty ? nil : "EVENT_ID", arguments.value("thread").map { _ in "--thread" },
            arguments.value("task").map { _ in "--task" },
        ].compactMap { $0 }
        guard selectors.count == 1 else {
            throw UsageError(
                selectors.isEmpty
                    ? "name what to export: EVENT_ID, --thread ID or --task N"
                    : "give only one of \(selectors.joined(separator: ", "))", command: "export")
        }
        if arguments.operands.count > 1 { throw UsageError("name one event id", command: "export") }
        let all = arguments.flag("all")
        if all && arguments.value("dir") == nil { throw UsageError("--all needs --dir DIR", command: "export") }
        if all && arguments.value("output") != nil {
            throw UsageError("--all writes to --dir, not -o", command: "export")
        }
        if all && !arguments.operands.isEmpty {
            throw UsageError("--all goes with --thread or --task", command: "export")
        }
        if !arguments.operands.isEmpty && arguments.value("at") != nil {
            throw UsageError(
                "--at goes with --thread or --task: an event id names one event already", command: "export")
        }
        let selection: Selection
        if let taskID = try TaskIDOption.parse(arguments) {
            selection = .task(taskID)
        } else if let thread = arguments.value("thread") {
            selection = .thread(thread)
        } else {
            selection = .event(arguments.operands[0])
        }
        return Options(
            selection: selection, at: try AsOfOption.parse(arguments, clock: clock), output: arguments.value("output"),
            bundle: arguments.value("bundle"), all: all, dir: arguments.value("dir"), force: arguments.flag("force"))
    }

    /// Writes the chosen notification(s) as `.apns` files (or to standard output).
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let all = options.all
        let horizon = options.at
        let store = try context.openStore(arguments, create: false)

        // Find the notification(s).
        let (chosen, stem): ([LoadedEvent], String) = try store.read { reader in
            if case .event(let id) = options.selection {
                guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq) else {
                    throw CommandError.notFound("no event \(id) in \(store.path)")
                }
                let event = try stored.decode()
                guard event.type == .notification else {
                    throw CommandError.notFound(
                        "event \(id) is a\(event.type == .action ? "n" : "") \(event.type), not a notification: "
                            + "only notifications export"
                    )
                }
                let stem = event.threadID ?? event.taskID.map { "task-\($0)" } ?? "notification"
                return ([LoadedEvent(stored: stored, event: event)], stem)
            }
            let events: [LoadedEvent]
            let stem: String
            let what: String
            switch options.selection {
            case .thread(let thread):
                events = try reader.threadEvents(thread, horizon: horizon)
                (stem, what) = (thread, "thread \(thread)")
            case .task(let taskID):
                events = try reader.taskEvents(taskID, horizon: horizon)
                (stem, what) = ("task-\(taskID)", "task \(taskID)")
            case .event:
                preconditionFailure("an event id was handled above")
            }
            let notifications = events.filter { $0.event.type == .notification }
            guard let last = notifications.last else {
                throw CommandError.notFound(
                    "no notification for \(what)\(horizon == nil ? "" : " at or before --at") in \(store.path)")
            }
            return (all ? notifications : [last], stem)
        }

        let bundle = try resolveBundle(options.bundle, context, chosen)
        if all {
            let dir = options.dir!
            try makeDirectory(dir)
            let width = max(2, String(chosen.count).count)
            for (i, loaded) in chosen.enumerated() {
                let number = String(i + 1)
                let prefix = String(repeating: "0", count: width - number.count) + number + "-"
                let name = SafeFileName.apns(stem: stem, seq: loaded.seq, prefix: prefix)
                try write(loaded, bundle: bundle, to: dir + "/" + name, force: options.force, context)
            }
            context.stderr.line("pushtrail: wrote \(chosen.count) file\(chosen.count == 1 ? "" : "s") to \(dir)")
            return ExitStatus.success
        }
        let loaded = chosen[0]
        let output = options.output ?? SafeFileName.apns(stem: stem, seq: loaded.seq)
        try write(loaded, bundle: bundle, to: output, force: options.force, context)
        if output != "-" {
            context.stderr.line("pushtrail: wrote \(output) (notification \(loaded.event.id), seq \(loaded.seq))")
        }
        return ExitStatus.success
    }

    /// `--bundle`, else the event's topic, else `$PUSHTRAIL_BUNDLE`, else a usage error.
    static func resolveBundle(
        _ given: String?, _ context: Context, _ events: [LoadedEvent]
    ) throws -> (LoadedEvent) -> String? {
        if let b = given, !b.isEmpty { return { _ in b } }
        let fallback = context.variable("PUSHTRAIL_BUNDLE").flatMap { $0.isEmpty ? nil : $0 }
        let resolve: (LoadedEvent) -> String? = { $0.event.notification?.topic ?? fallback }
        if let missing = events.first(where: { resolve($0) == nil }) {
            throw UsageError(
                "no bundle id for notification \(missing.event.id) (it has no topic): "
                    + "pass --bundle ID or set PUSHTRAIL_BUNDLE",
                command: "export")
        }
        return resolve
    }

    /// Writes one notification's `.apns` bytes to `path` (`-`: standard output), replacing a file only when `force`.
    static func write(
        _ loaded: LoadedEvent, bundle: (LoadedEvent) -> String?, to path: String, force: Bool, _ context: Context
    ) throws {
        let bytes = try payload(
            loaded, bundle: bundle(loaded)!, shownAs: path == "-" ? "standard output" : path, context)
        if path == "-" {
            context.stdout.write(bytes: bytes)
            return
        }
        let file = try OutputFile.create(path, overwrite: force)
        defer { file.close() }
        try file.write(bytes)
    }

    /// The `.apns` bytes of a notification, warning on stderr (as `name`) when simctl
    /// would refuse them (over 4096 bytes) or show no buttons (a category the app does
    /// not register). `replay` pushes the same bytes.
    static func payload(_ loaded: LoadedEvent, bundle: String, shownAs name: String, _ context: Context) throws
        -> [UInt8]
    {
        let bytes = try APNSFile.export(event: loaded.stored.raw, bundle: bundle)
        if bytes.count > 4096 {
            context.warn("\(name) is \(bytes.count) bytes, over the 4096 bytes xcrun simctl push accepts")
        }
        let category = loaded.event.notification?.category
        if Category(rawValue: category ?? "") == nil {
            let known = Category.allCases.map(\.rawValue).joined(separator: ", ")
            context.warn(
                "category \(category.map { "\"\(Render.oneLine($0))\"" } ?? "(none)") is not one the app registers "
                    + "(\(known)): the simulator will show no action buttons"
            )
        }
        return bytes
    }

    static func makeDirectory(_ dir: String) throws {
        var st = stat()
        if lstat(dir, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFLNK {
                throw CommandError.io(
                    "\(dir) is a symbolic link: refusing to write through it; pass the real directory")
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw CommandError.io("\(dir) exists and is not a directory")
            }
            return
        }
        guard mkdir(dir, 0o700) == 0 else {
            throw CommandError.io("cannot create \(dir): \(String(cString: strerror(errno)))")
        }
    }
}
