import PushTrailModel
import PushTrailStore

/// The time option several commands share: `--at T`, the store as it was at T. Declared
/// once so its name, help and parsing cannot drift between commands.
enum AsOfOption {
    /// The declaration every as-of command lists.
    static let spec = OptionSpec.option(
        "at", "T", "as of T: RFC 3339, a date, now, -2h, -7d, or @SEQ (what the store knew after event SEQ)")

    /// The horizon `--at` names, nil when absent; a bad time is a usage error.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Horizon? {
        try TimeOption.horizon(arguments, "at", clock: clock)
    }
}

/// Parsing of any option whose value is a time expression (every time form: RFC 3339, a
/// date, now, -2h, -7d, @SEQ), so each reports a bad value the same way.
enum TimeOption {
    /// The horizon `--name` gives, nil when absent; a bad value is a usage error naming
    /// the option.
    static func horizon(_ arguments: Arguments, _ name: String, clock: () -> Timestamp) throws -> Horizon? {
        guard let text = arguments.value(name) else { return nil }
        do {
            return try TimeExpression.parse(text, now: clock())
        } catch {
            throw UsageError("--\(name): \(error)")
        }
    }
}

/// How a command prints its answer: for people, as JSON, or (log only) as the events
/// exactly as ingested. The flags are declared here so their names and the rule that
/// they exclude each other live in one place; each command says what its JSON holds.
enum OutputFormat: Equatable, Sendable {
    case human, json, raw

    /// `--json`, with help saying what the JSON holds.
    static func jsonFlag(_ help: String) -> OptionSpec { .flag("json", help) }

    /// `--raw`, for the commands that can give back the ingested lines.
    static func rawFlag(_ help: String) -> OptionSpec { .flag("raw", help) }

    /// The format the flags choose; `--json` with `--raw` is a usage error.
    static func parse(_ arguments: Arguments) throws -> OutputFormat {
        switch (arguments.flag("json"), arguments.flag("raw")) {
        case (true, true): throw UsageError("choose --json or --raw", command: arguments.command)
        case (true, false): return .json
        case (false, true): return .raw
        case (false, false): return .human
        }
    }
}

/// The event filters `log` and `audit` share: declared once, parsed into a `LogQuery`.
enum LogFilters {
    static let options: [OptionSpec] = [
        .option("user", "U", "events of this user"),
        .option("task", "N", "events about this task (deliveries through their notification)"),
        .option("thread", "ID", "events of this thread (its notifications and what refers to them)"),
        .option(
            "type", "TYPE", "notification, action or delivery",
            completion: .choices(EventType.allCases.map(\.description))),
        .option(
            "category", "C", "notifications with this category (iOS aps.category, Android data.category)",
            completion: .choices(Category.allCases.map(\.rawValue))),
        .option("notification-type", "T", "notifications with this notification_type"),
        .option("residence", "R", "events about tasks of this residence id"),
        .option("since", "T", "events at or after T (RFC 3339, date, now, -2h, -7d; @SEQ: after event SEQ)"),
        .option("until", "T", "events at or before T (@SEQ: up to event SEQ)"),
        .option(
            "grep", "TEXT", "events whose ingested JSON contains TEXT, ignoring case (Unicode simple case folding)"),
    ]

    /// The query the filters describe; a bad task id, type or time is a usage error.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> LogQuery {
        do {
            return try LogQuery.parse({ arguments.value($0) }, now: clock())
        } catch {
            throw UsageError(error.description)
        }
    }
}

/// An integer task id given as an option (`--task N`), checked the same way everywhere.
enum TaskIDOption {
    /// The id `--task` gives, nil when absent; anything but an integer is a usage error.
    static func parse(_ arguments: Arguments) throws -> Int64? {
        try arguments.value("task").map { text in
            guard let n = Int64(text) else {
                throw UsageError("--task takes an integer task id, not \(text)", command: arguments.command)
            }
            return n
        }
    }
}

/// `--platform ios|android`, for the commands that handle one platform's notifications
/// at a time (`import`, `export`, `replay`).
enum PlatformOption {
    /// The platform `--platform` names, nil when absent; another name is a usage error.
    static func parse(_ arguments: Arguments) throws -> Platform? {
        try arguments.value("platform").map { text in
            guard let platform = Platform(rawValue: text) else {
                throw UsageError("--platform is ios or android, not \(text)", command: arguments.command)
            }
            return platform
        }
    }

    /// The platform's name in prose: iOS, Android.
    static func name(_ platform: Platform) -> String { platform == .ios ? "iOS" : "Android" }
}
