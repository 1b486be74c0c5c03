import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail export`: a stored notification as a file that reproduces it: an `.apns`
/// file for the iOS Simulator; for Android, the FCM send body or an `adb` script.
enum ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export",
        summary: """
            Write a notification as a file that reproduces it: .apns for the iOS Simulator, \
            an FCM message or an adb script for Android.
            """,
        usage: [
            "export EVENT_ID [-o PATH] [--format FORMAT] [--bundle ID | --token T | --package P [--serial S]]",
            "export --thread ID [--at T] [--platform PLATFORM] [-o PATH | --all --dir DIR] [--format FORMAT] …",
            "export --task N [--at T] [--platform PLATFORM] [-o PATH | --all --dir DIR] [--format FORMAT] …",
        ],
        options: [
            .option("thread", "ID", "the latest notification of this thread (at or before --at)"),
            .option("task", "N", "the latest notification for this task (at or before --at)"),
            AsOfOption.spec,
            .option(
                "platform", "PLATFORM", "with --thread or --task: the latest notification of this platform",
                completion: .choices(Platform.allCases.map(\.rawValue))),
            .option(
                "format", "FORMAT",
                "apns (iOS); fcm or adb (Android) (default: apns for iOS, fcm for Android)",
                completion: .choices(Format.allCases.map(\.rawValue))),
            .option(
                "output", short: "o", "PATH",
                "where to write (- for standard output; default <thread-or-task>-<seq>.apns, .fcm.json or .adb.sh)",
                completion: .file),
            .option("bundle", "ID", "apns: the app bundle id (default: the event's topic, else $PUSHTRAIL_BUNDLE)"),
            .option("token", "T", "fcm: the test device's token to send to (default: a placeholder)"),
            .option(
                "package", "P",
                "adb: the app's package (default: the message's restricted_package_name, else $PUSHTRAIL_PACKAGE)"),
            .option("serial", "S", "adb: the emulator's serial, for adb -s (default: adb's choice)"),
            .flag("all", "every notification of the thread or task, as numbered files in --dir"),
            .option("dir", "DIR", "the folder for --all (created 0700 if missing)", completion: .directory),
            .flag("force", "overwrite existing files"),
        ] + ClusterOptions.specs,
        operands: "EVENT_ID",
        discussion: """
            apns: "Simulator Target Bundle" first, then the payload's keys in their
            original order with their values exactly as ingested. simctl refuses files over
            4096 bytes and shows buttons only for categories the app registers: such
            files are still written, with a warning.
            fcm: {"message": …}, the message as sent, for messages:send; its token is
            replaced by --token, else by REPLACE_WITH_TEST_DEVICE_TOKEN (--show-tokens
            keeps it). A message to a topic or condition is written as sent, with a warning.
            adb: an sh script that broadcasts the message's data map to the app on an
            emulator (adb root, a google_apis image) with a new google.message_id each run.
            """)

    /// What a notification is written as.
    typealias Format = ExportFormat

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
        /// `--platform`: only notifications of this platform are candidates.
        var platform: Platform?
        /// nil: each notification's platform decides.
        var format: Format?
        /// `-o`: a path, or `-` for standard output; nil for the default name.
        var output: String?
        var bundle: String?
        var token: String?
        var package: String?
        var serial: String?
        /// `--all --dir DIR`: every notification, as numbered files in `dir`.
        var all: Bool
        var dir: String?
        var force: Bool
    }

    /// The option that only one format takes, and that format.
    static let formatOptions: [(option: String, format: Format)] = [
        ("bundle", .apns), ("token", .fcm), ("package", .adb), ("serial", .adb),
    ]

    /// Exactly one selection; `--all` only with `--dir`, without `-o`, for a thread or task;
    /// `--platform` with a thread or task; each format's options with that format (and
    /// platform); then `--at`.
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
        for option in ["token", "package", "serial"] where arguments.value(option)?.isEmpty == true {
            throw UsageError("--\(option) needs a value, not an empty one", command: "export")
        }
        let platform = try PlatformOption.parse(arguments)
        if platform != nil && !arguments.operands.isEmpty {
            throw UsageError(
                "--platform goes with --thread or --task: an event id names one notification already",
                command: "export")
        }
        let format = try arguments.value("format").map { text in
            guard let format = Format(rawValue: text) else {
                throw UsageError("--format is apns, fcm or adb, not \(text)", command: "export")
            }
            return format
        }
        if let format, let platform, format.platform != platform {
            throw UsageError(
                "--format \(format) writes \(PlatformOption.name(format.platform)) notifications, "
                    + "not the \(PlatformOption.name(platform)) ones --platform \(platform) picks",
                command: "export")
        }
        for (option, only) in formatOptions where arguments.value(option) != nil {
            if let format, format != only {
                throw UsageError("--\(option) goes with --format \(only), not --format \(format)", command: "export")
            }
            if let platform, platform != only.platform {
                throw UsageError(
                    "--\(option) is for \(PlatformOption.name(only.platform)) notifications, "
                        + "not the \(PlatformOption.name(platform)) ones --platform \(platform) picks",
                    command: "export")
            }
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
            selection: selection, at: try AsOfOption.parse(arguments, clock: clock), platform: platform,
            format: format, output: arguments.value("output"), bundle: arguments.value("bundle"),
            token: arguments.value("token"), package: arguments.value("package"), serial: arguments.value("serial"),
            all: all, dir: arguments.value("dir"), force: arguments.flag("force"))
    }

    /// Writes the chosen notification(s) in their formats (or to standard output).
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let all = options.all
        let horizon = options.at
        // Find the notification(s).
        let (chosen, stem): ([LoadedEvent], String)
        if let cluster = try Cluster.named(by: arguments, context) {
            try Cluster.refuseSequence(horizon, option: "at", command: "export")
            (chosen, stem) = try choose(options, in: cluster)
        } else {
            let store = try context.openStore(arguments, create: false)
            (chosen, stem) = try store.read { reader in
                try choose(options, storeName: store.path) { selection in
                    switch selection {
                    case .event(let id):
                        return try reader.seq(forID: id).flatMap { try reader.event(seq: $0) }.map {
                            [LoadedEvent(stored: $0, event: try $0.decode())]
                        } ?? []
                    case .thread(let thread): return try reader.threadEvents(thread, horizon: horizon)
                    case .task(let taskID): return try reader.taskEvents(taskID, horizon: horizon)
                    }
                }
            }
        }

        let formats = try chosen.map { try ExportCommand.format(of: $0, options) }
        warnUnusedOptions(options, chosen, formats, context)
        let bundle = try resolveBundle(options.bundle, context, zip(chosen, formats).filter { $1 == .apns }.map(\.0))
        let package = try resolvePackage(options.package, context, zip(chosen, formats).filter { $1 == .adb }.map(\.0))
        let recipient: FCMFile.Recipient =
            options.token.map { .device($0) } ?? (arguments.flag("show-tokens") ? .asSent : .placeholder)
        func bytes(_ loaded: LoadedEvent, _ format: Format, shownAs name: String) throws -> [UInt8] {
            switch format {
            case .apns: try payload(loaded, bundle: bundle(loaded)!, shownAs: name, context)
            // A message's warnings are about the notification, not the file.
            case .fcm: try sendBody(loaded, recipient: recipient, shownAs: notification(loaded), context)
            case .adb:
                try adbScript(
                    loaded, package: package(loaded)!, serial: options.serial, shownAs: notification(loaded), context)
            }
        }
        if all {
            let dir = options.dir!
            try makeDirectory(dir)
            let width = max(2, String(chosen.count).count)
            for (i, (loaded, format)) in zip(chosen, formats).enumerated() {
                let number = String(i + 1)
                let prefix = String(repeating: "0", count: width - number.count) + number + "-"
                let path = dir + "/" + format.fileName(stem: stem, seq: loaded.seq, prefix: prefix)
                try write(try bytes(loaded, format, shownAs: path), to: path, force: options.force, context)
            }
            context.stderr.line("pushtrail: wrote \(chosen.count) file\(chosen.count == 1 ? "" : "s") to \(dir)")
            return ExitStatus.success
        }
        let (loaded, format) = (chosen[0], formats[0])
        let output = options.output ?? format.fileName(stem: stem, seq: loaded.seq)
        let content = try bytes(loaded, format, shownAs: output == "-" ? "standard output" : output)
        try write(content, to: output, force: options.force, context)
        if output != "-" {
            context.stderr.line("pushtrail: wrote \(output) (notification \(loaded.event.id), seq \(loaded.seq))")
        }
        return ExitStatus.success
    }

    /// The notification(s) `options` select among the events `events(selection)` finds,
    /// and the stem of their file names; not found (exit 1) naming `storeName`.
    static func choose(
        _ options: Options, storeName: String, _ events: (Selection) throws -> [LoadedEvent]
    ) throws -> ([LoadedEvent], String) {
        let horizon = options.at
        if case .event(let id) = options.selection {
            guard let loaded = try events(options.selection).first else {
                throw CommandError.notFound("no event \(id) in \(storeName)")
            }
            guard loaded.event.type == .notification else {
                throw CommandError.notFound(
                    "event \(id) is a\(loaded.event.type == .action ? "n" : "") \(loaded.event.type), "
                        + "not a notification: "
                        + "only notifications export"
                )
            }
            return ([loaded], ExportFormat.stem(of: loaded.event))
        }
        let (stem, what): (String, String)
        switch options.selection {
        case .thread(let thread): (stem, what) = (thread, "thread \(thread)")
        case .task(let taskID): (stem, what) = ("task-\(taskID)", "task \(taskID)")
        case .event: preconditionFailure("an event id was handled above")
        }
        let notifications = try events(options.selection).filter {
            guard let n = $0.event.notification else { return false }
            return options.platform.map { $0 == n.platform } ?? true
        }
        guard let last = notifications.last else {
            let kind = options.platform.map { "\(PlatformOption.name($0)) notification" } ?? "notification"
            throw CommandError.notFound(
                "no \(kind) for \(what)\(horizon == nil ? "" : " at or before --at") in \(storeName)")
        }
        return (options.all ? notifications : [last], stem)
    }

    /// `choose` over a cluster: an event from the shard holding it, a thread's or a
    /// task's events from every shard, as `log` merges them.
    static func choose(_ options: Options, in cluster: Cluster) throws -> ([LoadedEvent], String) {
        try choose(options, storeName: cluster.path) { selection in
            var query = LogQuery()
            query.until = options.at
            switch selection {
            case .event(let id): return try cluster.show(id).map { [$0.loaded] } ?? []
            case .thread(let thread): query.threadID = thread
            case .task(let taskID): query.taskID = taskID
            }
            var events: [LoadedEvent] = []
            try cluster.log(query, limit: nil, reverse: false) {
                events.append($1)
                return true
            }
            return events
        }
    }

    /// `notification ID`, for messages.
    static func notification(_ loaded: LoadedEvent) -> String { "notification \(Render.oneLine(loaded.event.id))" }

    /// `--format`, else the one for the notification's platform; a format of the other
    /// platform is a usage error that names the notification's.
    static func format(of loaded: LoadedEvent, _ options: Options) throws -> Format {
        let platform = loaded.event.notification?.platform ?? .ios
        guard let format = options.format else { return Format.standard(for: platform) }
        guard format.platform == platform else {
            let fitting = platform == .ios ? "--format apns" : "--format fcm or adb"
            let other = PlatformOption.name(format.platform)
            let hint =
                switch options.selection {
                case .event: ""
                case .thread, .task:
                    options.all
                        ? ", or --platform \(format.platform) for the \(other) ones only"
                        : ", or --platform \(format.platform) for the latest \(other) one"
                }
            throw UsageError(
                "notification \(loaded.event.id) is an \(PlatformOption.name(platform)) notification: "
                    + "--format \(format) writes \(PlatformOption.name(format.platform)) ones; use \(fitting)\(hint)",
                command: "export")
        }
        return format
    }

    /// A format's own option given when no chosen notification is written in that format
    /// does nothing: say so (a script may pass --bundle for every export, whatever the
    /// platform).
    static func warnUnusedOptions(
        _ options: Options, _ chosen: [LoadedEvent], _ formats: [Format], _ context: Context
    ) {
        let given: [(String, String?)] = [
            ("bundle", options.bundle), ("token", options.token), ("package", options.package),
            ("serial", options.serial),
        ]
        for (option, value) in given where value != nil {
            let only = formatOptions.first { $0.option == option }!.format
            guard !formats.contains(only) else { continue }
            let platform = PlatformOption.name(chosen[0].event.notification?.platform ?? .ios)
            let which =
                chosen.count == 1
                ? "\(notification(chosen[0])) is an \(platform) notification, written as \(formats[0])"
                : "no notification is written as \(only)"
            context.warn("--\(option) is for --format \(only), unused: \(which)")
        }
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

    /// Writes `bytes` to `path` (`-`: standard output), replacing a file only when `force`.
    static func write(_ bytes: [UInt8], to path: String, force: Bool, _ context: Context) throws {
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

    // MARK: - Android

    /// `--package`, else the message's `android.restricted_package_name`, else
    /// `$PUSHTRAIL_PACKAGE`, else a usage error.
    static func resolvePackage(
        _ given: String?, _ context: Context, _ events: [LoadedEvent], command: String = "export"
    ) throws -> (LoadedEvent) -> String? {
        if let p = given, !p.isEmpty { return { _ in p } }
        let fallback = context.variable("PUSHTRAIL_PACKAGE").flatMap { $0.isEmpty ? nil : $0 }
        var packages: [UInt64: String] = [:]
        for loaded in events {
            let named = try FCMFile.dataMessage(event: loaded.stored.raw).restrictedPackageName
            guard let package = named.flatMap({ $0.isEmpty ? nil : $0 }) ?? fallback else {
                throw UsageError(
                    "no package for notification \(loaded.event.id) (its message has no "
                        + "android.restricted_package_name): pass --package P or set PUSHTRAIL_PACKAGE",
                    command: command)
            }
            packages[loaded.seq] = package
        }
        return { packages[$0.seq] }
    }

    /// The FCM send body of an Android notification, warning on stderr (as `name`) when
    /// the message went to a topic or condition and is written so.
    static func sendBody(
        _ loaded: LoadedEvent, recipient: FCMFile.Recipient, shownAs name: String, _ context: Context
    ) throws -> [UInt8] {
        let body = try FCMFile.sendBody(event: loaded.stored.raw, recipient: recipient, device: loaded.event.device)
        if case .device = recipient { return body.bytes }
        switch body.sentTo {
        case .topic(let topic):
            context.warn(
                "\(name) went to topic \"\(Render.oneLine(topic))\": sending the file reaches every subscriber; "
                    + "pass --token T to send it to one test device")
        case .condition(let condition):
            context.warn(
                "\(name) went to the condition \"\(Render.oneLine(condition))\": sending the file reaches every "
                    + "device it matches; pass --token T to send it to one test device")
        case .token, .none: break
        }
        return body.bytes
    }

    /// The broadcast that delivers an Android notification's data map to `package` on an
    /// emulator, warning on stderr (as `name`) where it differs from what FCM delivered.
    /// `replay` sends the same broadcast.
    static func broadcast(_ loaded: LoadedEvent, package: String, shownAs name: String, _ context: Context) throws
        -> AndroidBroadcast
    {
        let message = try FCMFile.dataMessage(event: loaded.stored.raw)
        let broadcast = AndroidBroadcast(
            package: package, sender: message.project ?? AndroidBroadcast.defaultSender, data: message.data)
        if broadcast.unpassable != nil {
            throw CommandError.data(
                "notification #\(loaded.seq) has a NUL character in its data map or package, "
                    + "which no command line can pass")
        }
        for block in message.notificationBlocks {
            context.warn(
                "\(name) has \(block), which the system shows without buttons while the app is in the "
                    + "background; the broadcast sends only the data map")
        }
        for key in message.nonStringKeys {
            context.warn(
                "\(name) has \(message.dataPath).\(Render.oneLine(key)), which is not a string (FCM refuses such "
                    + "a send): the broadcast passes its JSON text")
        }
        return broadcast
    }

    /// The `sh` script that broadcasts an Android notification to an emulator with `adb`.
    static func adbScript(
        _ loaded: LoadedEvent, package: String, serial: String?, shownAs name: String, _ context: Context
    ) throws -> [UInt8] {
        try broadcast(loaded, package: package, shownAs: name, context).scriptFile(loaded, serial: serial)
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
