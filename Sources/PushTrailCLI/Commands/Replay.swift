import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail replay`: a thread's notifications pushed again, in timeline order and with
/// their relative timing, to a booted iOS Simulator (`xcrun simctl push`) or a running
/// Android emulator (an `adb` broadcast to the app's Firebase receiver), and the user's
/// answers (actions, deliveries) shown in between.
enum ReplayCommand: Command {
    static let spec = CommandSpec(
        name: "replay",
        summary: """
            Push a thread's notifications to a booted iOS Simulator (xcrun simctl push) or an Android \
            emulator (adb) in order, keeping their timing.
            """,
        usage: [
            "replay --thread ID [--at T] [--device UDID] [--bundle ID] [--speed N | --step] "
                + "[--max-gap SECONDS] [--dry-run]",
            "replay --thread ID --platform android [--at T] [--serial S] [--package P] [--speed N | --step] "
                + "[--max-gap SECONDS] [--dry-run]",
        ],
        options: [
            .option("thread", "ID", "the thread to replay"),
            AsOfOption.spec,
            .option(
                "platform", "PLATFORM",
                "push this platform's notifications (default: the thread's, when they are all of one)",
                completion: .choices(Platform.allCases.map(\.rawValue))),
            .option("device", "UDID", "iOS: the simulator to push to (default: booted)"),
            .option("bundle", "ID", "iOS: the app bundle id (default: each event's topic, else $PUSHTRAIL_BUNDLE)"),
            .option("serial", "S", "Android: the emulator, for adb -s (default: adb's choice)"),
            .option(
                "package", "P",
                "Android: the app's package (default: each message's restricted_package_name, else $PUSHTRAIL_PACKAGE)"
            ),
            .option("speed", "N", "play N times faster than it happened (default 1)"),
            .option("max-gap", "SECONDS", "wait at most this long between two pushes (default 10; 0: no limit)"),
            .flag("step", "wait for Enter before each push instead of timing them"),
            .flag("dry-run", "push nothing: print the commands as a sh script"),
        ],
        discussion: """
            iOS: each push is the payload export writes, sent as xcrun simctl push DEVICE BUNDLE -.
            Android: each push is the broadcast export --format adb writes, with a new
            google.message_id; it needs adb root (a google_apis emulator image).
            The wait before a push is its gap from the previous notification divided by
            --speed, at most --max-gap. Actions, deliveries and the other platform's
            notifications in between are shown, not sent. Real runs need Xcode (macOS) or
            adb; --dry-run prints a script to run there later.
            """)

    /// What `replay` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var threadID: String
        var at: Horizon?
        /// `--platform`, or the one the platform's own options imply; nil: the thread's.
        var platform: Platform?
        /// iOS: a simulator UDID, or `booted`.
        var device: String
        var bundle: String?
        /// Android: the emulator's serial; nil for adb's choice.
        var serial: String?
        var package: String?
        /// How many times faster than it happened (above 0).
        var speed: Double
        /// The longest wait between two pushes, in seconds; 0 for no limit.
        var maxGap: Double
        var step: Bool
        var dryRun: Bool
    }

    /// The options only one platform's replay takes.
    static let platformOptions: [(option: String, platform: Platform)] = [
        ("device", .ios), ("bundle", .ios), ("serial", .android), ("package", .android),
    ]

    /// A thread, timing or `--step` (not both), numbers in range, a device, one
    /// platform's options; then `--at`.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        guard let threadID = arguments.value("thread"), !threadID.isEmpty else {
            throw UsageError("name the thread to replay: --thread ID (e.g. --thread task-1102)", command: "replay")
        }
        let stepping = arguments.flag("step")
        let dryRun = arguments.flag("dry-run")
        for timing in ["speed", "max-gap"] where stepping && arguments.has(timing) {
            throw UsageError(
                "--step waits for Enter instead of timing: give --step or --\(timing), not both", command: "replay")
        }
        if stepping && dryRun { throw UsageError("--dry-run waits for nothing: drop --step", command: "replay") }
        let speed = try number(arguments, "speed", default: 1, positive: true)
        let maxGap = try number(arguments, "max-gap", default: 10, positive: false)
        let device = arguments.value("device") ?? "booted"
        if device.isEmpty { throw UsageError("--device needs a simulator UDID, or booted", command: "replay") }
        if arguments.value("serial")?.isEmpty == true {
            throw UsageError("--serial needs an emulator's serial (adb devices lists them)", command: "replay")
        }
        var platform = try PlatformOption.parse(arguments)
        // The option that set the platform, for the message when another disagrees.
        var source = platform.map { "--platform \($0)" }
        for (option, only) in platformOptions where arguments.value(option) != nil {
            if let platform, let source, platform != only {
                throw UsageError(
                    "--\(option) is for \(PlatformOption.name(only)) replays, not with \(source)", command: "replay")
            }
            platform = only
            source = source ?? "--\(option)"
        }
        return Options(
            threadID: threadID, at: try AsOfOption.parse(arguments, clock: clock), platform: platform,
            device: device, bundle: arguments.value("bundle"), serial: arguments.value("serial"),
            package: arguments.value("package"), speed: speed, maxGap: maxGap, step: stepping, dryRun: dryRun)
    }

    /// Pushes the thread's notifications in order and timing, or prints the script that would.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let (threadID, stepping, dryRun) = (options.threadID, options.step, options.dryRun)
        let (speed, maxGap, device) = (options.speed, options.maxGap, options.device)
        let (report, asOf) = try load(threadID, horizon: options.at, arguments, context)
        let platform = try choosePlatform(options, report, arguments, context)
        let plan = ReplayPlan(
            report.entries, at: { $0.loaded.event.at },
            isNotification: { $0.loaded.event.notification?.platform == platform },
            speed: speed, maxWaitMicroseconds: stepping || maxGap == 0 ? nil : Int64(min(maxGap * 1e6, 1e15).rounded()))
        let notifications = plan.steps.map(\.notification.loaded)
        let runs: [Run]
        let tool: Tool
        if platform == .android {
            let package = try ExportCommand.resolvePackage(
                options.package, context, notifications, command: "replay")
            let broadcasts = try notifications.map {
                try ExportCommand.broadcast($0, package: package($0)!, shownAs: "notification #\($0.seq)", context)
            }
            if dryRun {
                context.stdout.write(
                    bytes: androidScript(
                        plan, broadcasts, serial: options.serial, threadID: threadID, asOf: asOf, arguments, context))
                return ExitStatus.success
            }
            let seconds = context.clock().microseconds / 1_000_000
            runs = zip(notifications, broadcasts).map { loaded, broadcast in
                Run(
                    arguments: broadcast.adbArguments(
                        serial: options.serial,
                        messageID: AndroidBroadcast.messageID(seq: loaded.seq, seconds: seconds, pid: getpid())),
                    input: [])
            }
            tool = .adb(serial: options.serial)
        } else {
            let bundle = try ExportCommand.resolveBundle(options.bundle, context, notifications)
            let pushes = try notifications.map { try push($0, device: device, bundle: bundle($0)!, context) }
            if dryRun {
                context.stdout.write(bytes: script(plan, pushes, threadID: threadID, asOf: asOf, arguments, context))
                return ExitStatus.success
            }
            runs = pushes.map { Run(arguments: $0.arguments, input: $0.payload) }
            tool = .xcrun(device: device)
        }
        guard let path = Subprocess.find(tool.name, path: context.variable("PATH")) else {
            throw CommandError.io(tool.missing)
        }
        return try perform(plan, runs, tool: tool, path: path, stepping: stepping, arguments, context)
    }

    /// The platform to replay: the one the options name or imply, else that of the
    /// thread's notifications; a thread of both platforms needs `--platform`, and one
    /// with none of the platform asked for has nothing to push.
    static func choosePlatform(
        _ options: Options, _ report: ThreadReport, _ arguments: Arguments, _ context: Context
    ) throws -> Platform {
        let present = Platform.allCases.filter { p in
            report.entries.contains { $0.loaded.event.notification?.platform == p }
        }
        guard let platform = options.platform ?? (present.count == 1 ? present[0] : nil) else {
            throw UsageError(
                "thread \(Render.oneLine(options.threadID)) has iOS and Android notifications: "
                    + "pass --platform ios or --platform android",
                command: "replay")
        }
        guard present.contains(platform) else {
            let when = options.at == nil ? "" : " at or before --at"
            let other = present[0]
            throw CommandError.notFound(
                "thread \(Render.oneLine(options.threadID)) has no \(PlatformOption.name(platform)) notification"
                    + "\(when) in \(context.storePath(arguments)): its notifications are "
                    + "\(PlatformOption.name(other)) ones (--platform \(other))")
        }
        return platform
    }

    /// One `xcrun simctl push DEVICE BUNDLE -` and the payload for its stdin.
    struct Push {
        var device: String
        var bundle: String
        var payload: [UInt8]
        var seq: UInt64
        /// The arguments after `xcrun`.
        var arguments: [String] { ["simctl", "push", device, bundle, "-"] }
    }

    /// One push of a real run: the tool's arguments (after its name) and standard input.
    struct Run {
        var arguments: [String]
        var input: [UInt8]
    }

    /// The program a real run pushes with.
    enum Tool {
        case xcrun(device: String)
        case adb(serial: String?)

        var name: String {
            switch self {
            case .xcrun: "xcrun"
            case .adb: "adb"
            }
        }

        /// The error when it is not on PATH.
        var missing: String {
            switch self {
            case .xcrun:
                "xcrun not found: replay needs Xcode's simctl (macOS); use --dry-run to print the commands, "
                    + "or export --all --dir DIR for .apns files"
            case .adb:
                "adb not found: replay --platform android needs adb (Android SDK platform-tools) on PATH; "
                    + "use --dry-run to print the commands, or export --format adb for a script"
            }
        }

        /// What failed, for the error of a failed push.
        var command: String {
            switch self {
            case .xcrun: "xcrun simctl push"
            case .adb: "adb shell am broadcast"
            }
        }

        /// Where the pushes went, for the closing line.
        var destination: String {
            switch self {
            case .xcrun(let device): "to \(Render.oneLine(device))"
            case .adb(let serial): serial.map { "to \(Render.oneLine($0))" } ?? "with adb"
            }
        }
    }

    /// The thread report and its `as_of`; the store is closed on return, so the
    /// children never inherit it.
    static func load(_ threadID: String, horizon: Horizon?, _ arguments: Arguments, _ context: Context) throws -> (
        ThreadReport, String
    ) {
        let (report, asOf) = try context.asOfReport(
            arguments, horizon: horizon, missing: "no thread \(Render.oneLine(threadID))"
        ) {
            try $0.threadReport(threadID, horizon: $1)
        }
        guard report.entries.contains(where: { $0.loaded.event.type == .notification }) else {
            let when = horizon == nil ? "" : " at or before --at"
            throw CommandError.notFound(
                "thread \(Render.oneLine(threadID)) has no notification\(when) in \(context.storePath(arguments)): "
                    + "nothing to push"
            )
        }
        return (report, asOf)
    }

    static func push(_ loaded: LoadedEvent, device: String, bundle: String, _ context: Context) throws -> Push {
        // A NUL (possible in a topic, not in argv) would silently cut the argument short.
        if bundle.utf8.contains(0) {
            throw CommandError.data(
                "the bundle id of notification #\(loaded.seq) contains a NUL character: pass --bundle ID")
        }
        let payload = try ExportCommand.payload(loaded, bundle: bundle, shownAs: "notification #\(loaded.seq)", context)
        // The dry-run script passes the payload as a here-document ended by a line
        // PUSHTRAIL_APNS_<seq>. The payload is the stored NDJSON line's payload (which
        // holds no raw newline: lines are split at newlines) after the bundle quoted as
        // JSON (newlines escaped), so its only newline is its last byte and no line of
        // it can equal the delimiter. Checked all the same.
        guard payload.last == 10, !payload.dropLast().contains(10) else {
            throw CommandError.data("the payload of notification #\(loaded.seq) spans several lines: cannot push it")
        }
        return Push(device: device, bundle: bundle, payload: payload, seq: loaded.seq)
    }

    /// The number `--name` gives (above 0 when `positive`, else 0 or more), or
    /// `fallback` when absent; anything else is a usage error.
    static func number(_ arguments: Arguments, _ name: String, default fallback: Double, positive: Bool) throws
        -> Double
    {
        guard let text = arguments.value(name) else { return fallback }
        guard let n = Double(text), n.isFinite, positive ? n > 0 : n >= 0 else {
            throw UsageError(
                "--\(name) takes a number \(positive ? "above 0" : "of seconds, 0 or more"), not \(text)",
                command: "replay")
        }
        return n
    }

    // MARK: - Real run

    static func perform(
        _ plan: ReplayPlan<TimelineEntry>, _ runs: [Run], tool: Tool, path: String, stepping: Bool,
        _ arguments: Arguments, _ context: Context
    ) throws -> Int32 {
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let total = runs.count
        for (i, (step, run)) in zip(plan.steps, runs).enumerated() {
            for entry in step.before { context.stdout.line("  " + eventLine(entry, style, arguments, context)) }
            if i > 0 && stepping {
                try context.stdout.flush()
                context.stderr.line(
                    "pushtrail: press Enter to push the next notification "
                        + "(\(i + 1)/\(total), \(duration(step.gapMicroseconds)) later)"
                )
                guard readLine() != nil else {
                    context.stderr.line(
                        "pushtrail: end of input: pushed \(i) of \(total) notification\(total == 1 ? "" : "s")")
                    return ExitStatus.success
                }
            } else if step.waitMicroseconds > 0 {
                try context.stdout.flush()
                // A line of its own for each wait: ProgressLine's redraw limit must not hide it.
                let progress = ProgressLine(context.stderr, enabled: true)
                progress.update(waitLine(step))
                sleep(microseconds: step.waitMicroseconds)
                progress.clear()
            }
            let (termination, errors) = try Subprocess.run(
                path, [tool.name] + run.arguments, input: run.input, environment: context.environment)
            guard termination == .exit(0) else {
                try context.stdout.flush()
                context.stderr.line("pushtrail: pushed \(i) of \(total) notification\(total == 1 ? "" : "s")")
                let how =
                    switch termination {
                    case .exit(let code): "exit \(code)"
                    case .signal(let signal): "signal \(signal)"
                    }
                let message =
                    String(decoding: errors, as: UTF8.self).split(separator: "\n").first.map {
                        ": " + Render.oneLine(String($0))
                    } ?? ""
                let hint = if case .adb = tool { " (is the emulator running, after adb root?)" } else { "" }
                throw CommandError.io("\(tool.command) failed (\(how))\(message)\(hint)")
            }
            context.stdout.line(
                "pushed \(i + 1)/\(total) " + notificationLine(step.notification, style, arguments, context))
            try context.stdout.flush()
        }
        for entry in plan.after { context.stdout.line("  " + eventLine(entry, style, arguments, context)) }
        try context.stdout.flush()
        context.stderr.line(
            "pushtrail: pushed \(total) notification\(total == 1 ? "" : "s") \(tool.destination)")
        return ExitStatus.success
    }

    /// Sleeps the whole time, through signals that interrupt it.
    static func sleep(microseconds: Int64) {
        var request = timespec(tv_sec: Int(microseconds / 1_000_000), tv_nsec: Int(microseconds % 1_000_000) * 1000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    // MARK: - Dry run

    /// The POSIX sh script that does what a real run would.
    static func script(
        _ plan: ReplayPlan<TimelineEntry>, _ pushes: [Push], threadID: String, asOf: String, _ arguments: Arguments,
        _ context: Context
    ) -> [UInt8] {
        let plain = Style(enabled: false)
        let total = pushes.count
        func comment(_ text: String) -> String { "# " + Render.oneLine(text) + "\n" }
        var out = "#!/bin/sh\n"
        out += comment(
            "pushtrail replay: thread \(threadID) as of \(asOf), \(total) notification\(total == 1 ? "" : "s")")
        out += "set -e\n"
        var bytes = Array(out.utf8)
        for (i, (step, push)) in zip(plan.steps, pushes).enumerated() {
            var text = "\n"
            for entry in step.before { text += comment(eventLine(entry, plain, arguments, context)) }
            let milliseconds = (step.waitMicroseconds + 500) / 1000
            if milliseconds > 0 {
                text += comment(waitLine(step))
                text += "sleep \(RelativeTime.seconds(milliseconds: UInt64(milliseconds)))\n"
            }
            let delimiter = "PUSHTRAIL_APNS_\(push.seq)"
            text += comment("push \(i + 1)/\(total) " + notificationLine(step.notification, plain, arguments, context))
            text +=
                "xcrun simctl push \(Render.shellWord(push.device, quoted: true)) "
                + "\(Render.shellWord(push.bundle, quoted: true)) - <<'\(delimiter)'\n"
            bytes += Array(text.utf8) + push.payload + Array((delimiter + "\n").utf8)
        }
        for entry in plan.after { bytes += Array(comment(eventLine(entry, plain, arguments, context)).utf8) }
        return bytes
    }

    /// The POSIX sh script that does what a real Android run would: one `adb` broadcast
    /// per notification, each with a message id made when it runs.
    static func androidScript(
        _ plan: ReplayPlan<TimelineEntry>, _ broadcasts: [AndroidBroadcast], serial: String?, threadID: String,
        asOf: String, _ arguments: Arguments, _ context: Context
    ) -> [UInt8] {
        let plain = Style(enabled: false)
        let total = broadcasts.count
        func comment(_ text: String) -> String { "# " + Render.oneLine(text) + "\n" }
        var out = "#!/bin/sh\n"
        out += comment(
            "pushtrail replay: thread \(threadID) as of \(asOf), \(total) Android notification\(total == 1 ? "" : "s")")
        for line in AndroidBroadcast.requirements { out += comment(line) }
        out += "set -e\n"
        for (i, (step, broadcast)) in zip(plan.steps, broadcasts).enumerated() {
            out += "\n"
            for entry in step.before { out += comment(eventLine(entry, plain, arguments, context)) }
            let milliseconds = (step.waitMicroseconds + 500) / 1000
            if milliseconds > 0 {
                out += comment(waitLine(step))
                out += "sleep \(RelativeTime.seconds(milliseconds: UInt64(milliseconds)))\n"
            }
            out += comment("push \(i + 1)/\(total) " + notificationLine(step.notification, plain, arguments, context))
            out += broadcast.script(serial: serial, seq: step.notification.loaded.seq)
        }
        for entry in plan.after { out += comment(eventLine(entry, plain, arguments, context)) }
        return Array(out.utf8)
    }

    // MARK: - Lines

    /// `#seq CATEGORY "title" · at · user U · device D`.
    static func notificationLine(_ entry: TimelineEntry, _ style: Style, _ arguments: Arguments, _ context: Context)
        -> String
    {
        let e = entry.loaded.event
        let n = e.notification
        var s = "#\(entry.loaded.seq) " + style.bold(Render.oneLine(n?.category ?? "(no category)"))
        if let title = n?.title ?? n?.body { s += " \"\(Render.oneLine(title))\"" }
        return s + style.dim(" · \(e.at)" + who(e, arguments, context))
    }

    /// `at  #seq  headline · user U · device D`, for an action or a delivery.
    static func eventLine(_ entry: TimelineEntry, _ style: Style, _ arguments: Arguments, _ context: Context) -> String
    {
        let e = entry.loaded.event
        return "\(e.at)  " + style.dim("#\(entry.loaded.seq)") + "  " + Render.headline(e, style: style)
            + style.dim(who(e, arguments, context))
    }

    static func who(_ e: Event, _ arguments: Arguments, _ context: Context) -> String {
        " · user \(Render.oneLine(e.user))"
            + (e.device == nil ? "" : " · device \(Render.oneLine(context.token(e.device, arguments)))")
    }

    /// `5 seconds later`, `5 seconds later — waiting 2.5 seconds`,
    /// `3 days 2 hours later — waiting 10 seconds (--max-gap)`.
    static func waitLine(_ step: ReplayPlan<TimelineEntry>.Step) -> String {
        let later = "\(duration(step.gapMicroseconds)) later"
        guard step.waitMicroseconds != step.gapMicroseconds else { return later }
        return later + " — waiting \(duration(step.waitMicroseconds))" + (step.capped ? " (--max-gap)" : "")
    }

    /// A duration for people (see `RelativeTime.duration`).
    static func duration(_ microseconds: Int64) -> String {
        RelativeTime.duration(UInt64(max(0, microseconds))) ?? "0 seconds"
    }
}
