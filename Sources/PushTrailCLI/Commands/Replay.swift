import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail replay`: a thread's notifications pushed again to a booted iOS Simulator
/// with `xcrun simctl push`, in timeline order and with their relative timing, and the
/// user's answers (actions, deliveries) shown in between.
enum ReplayCommand: Command {
    static let spec = CommandSpec(
        name: "replay",
        summary: """
            Push a thread's notifications to a booted iOS Simulator in order, keeping their timing \
            (xcrun simctl push).
            """,
        usage: [
            "replay --thread ID [--at T] [--device UDID] [--bundle ID] [--speed N | --step] "
                + "[--max-gap SECONDS] [--dry-run]"
        ],
        options: [
            .option("thread", "ID", "the thread to replay"),
            AsOfOption.spec,
            .option("device", "UDID", "the simulator to push to (default: booted)"),
            .option("bundle", "ID", "the app bundle id (default: each event's topic, else $PUSHTRAIL_BUNDLE)"),
            .option("speed", "N", "play N times faster than it happened (default 1)"),
            .option("max-gap", "SECONDS", "wait at most this long between two pushes (default 10; 0: no limit)"),
            .flag("step", "wait for Enter before each push instead of timing them"),
            .flag("dry-run", "push nothing: print the commands as a sh script"),
        ],
        discussion: """
            Each push is the payload export writes, sent as xcrun simctl push DEVICE BUNDLE -.
            The wait before a push is its gap from the previous notification divided by
            --speed, at most --max-gap. Actions and deliveries in between are shown, not sent.
            Real runs need Xcode (macOS); --dry-run prints a script to run there later.
            """)

    /// What `replay` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var threadID: String
        var at: Horizon?
        /// A simulator UDID, or `booted`.
        var device: String
        var bundle: String?
        /// How many times faster than it happened (above 0).
        var speed: Double
        /// The longest wait between two pushes, in seconds; 0 for no limit.
        var maxGap: Double
        var step: Bool
        var dryRun: Bool
    }

    /// A thread, timing or `--step` (not both), numbers in range, a device; then `--at`.
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
        return Options(
            threadID: threadID, at: try AsOfOption.parse(arguments, clock: clock), device: device,
            bundle: arguments.value("bundle"), speed: speed, maxGap: maxGap, step: stepping, dryRun: dryRun)
    }

    /// Pushes the thread's notifications in order and timing, or prints the script that would.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let (threadID, stepping, dryRun) = (options.threadID, options.step, options.dryRun)
        let (speed, maxGap, device) = (options.speed, options.maxGap, options.device)
        let (report, asOf) = try load(threadID, horizon: options.at, arguments, context)
        let plan = ReplayPlan(
            report.entries, at: { $0.loaded.event.at }, isNotification: { $0.loaded.event.type == .notification },
            speed: speed, maxWaitMicroseconds: stepping || maxGap == 0 ? nil : Int64(min(maxGap * 1e6, 1e15).rounded()))
        let bundle = try ExportCommand.resolveBundle(options.bundle, context, plan.steps.map(\.notification.loaded))
        let pushes = try plan.steps.map { step in
            try push(step.notification.loaded, device: device, bundle: bundle(step.notification.loaded)!, context)
        }
        if dryRun {
            context.stdout.write(bytes: script(plan, pushes, threadID: threadID, asOf: asOf, arguments, context))
            return ExitStatus.success
        }
        guard let xcrun = Subprocess.find("xcrun", path: context.variable("PATH")) else {
            throw CommandError.io(
                "xcrun not found: replay needs Xcode's simctl (macOS); use --dry-run to print the commands, "
                    + "or export --all --dir DIR for .apns files"
            )
        }
        return try perform(plan, pushes, xcrun: xcrun, stepping: stepping, arguments, context)
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
        _ plan: ReplayPlan<TimelineEntry>, _ pushes: [Push], xcrun: String, stepping: Bool, _ arguments: Arguments,
        _ context: Context
    ) throws -> Int32 {
        let style = context.style(for: context.stdout, disabled: arguments.flag("no-color"))
        let total = pushes.count
        for (i, (step, push)) in zip(plan.steps, pushes).enumerated() {
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
                xcrun, ["xcrun"] + push.arguments, input: push.payload, environment: context.environment)
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
                throw CommandError.io("xcrun simctl push failed (\(how))\(message)")
            }
            context.stdout.line(
                "pushed \(i + 1)/\(total) " + notificationLine(step.notification, style, arguments, context))
            try context.stdout.flush()
        }
        for entry in plan.after { context.stdout.line("  " + eventLine(entry, style, arguments, context)) }
        try context.stdout.flush()
        context.stderr.line(
            "pushtrail: pushed \(total) notification\(total == 1 ? "" : "s") to \(Render.oneLine(pushes[0].device))")
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
