/// The command line of `pushtrail-gen`.
struct Options {
    var events = 1_000_000
    var seed: UInt64 = 42
    var users: Int?
    var tasks: Int?
    var anomalies = 0.0
    var androidShare = 0.0
    var start = CivilCalendar.days(year: 2026, month: 1, day: 1) * CivilCalendar.msPerDay
    var startText = "2026-01-01T00:00:00Z"
    var output: String?

    var userCount: Int { users ?? max(3, events / 250) }
    var taskCount: Int { tasks ?? max(10, events / 40) }

    static let usage = """
        usage: pushtrail-gen [--events N] [--seed S] [--users U] [--tasks T]
                             [--anomalies RATE] [--android-share F] [--start TIME] [-o FILE]

        Writes a deterministic, realistic stream of pushtrail events (NDJSON, one event a
        line) to stdout: notifications with APNs payloads (FCM messages for Android users),
        the push service's delivery answers and action responses, following the task state
        machine. The same arguments always give byte-identical output; memory stays
        constant whatever N.

        options:
          --events N        number of events to write (default 1000000)
          --seed S          PRNG seed, decimal or 0x-hex (default 42)
          --users U         users (default N/250, at least 3; about 20% are free users)
          --tasks T         tasks in flight at once (default N/40, at least 10); a task's
                            thread runs for about 10-20 events, then a new task takes its
                            place, so a run holds more distinct tasks than T
          --anomalies RATE  fraction 0...1 of events that deliberately break an audit
                            rule (default 0: a stream with no findings at all)
          --android-share F fraction 0...1 of users on Android (default 0: iOS only); a
                            household shares one platform, and 5% of Android users also
                            have an iPhone, so their threads hold both platforms
          --start TIME      time of the first event, RFC 3339 or YYYY-MM-DD
                            (default 2026-01-01T00:00:00Z)
          -o, --output FILE write to FILE instead of stdout ('-' is stdout)
          -h, --help        show this help

        Ids: notifications use UUIDs; actions and deliveries use a-TAG-N and d-TAG-N, where
        TAG is derived from all the arguments, so streams from different runs can be
        ingested into one store without id conflicts.
        """

    enum Parsed {
        case run(Options)
        case help
    }

    struct UsageError: Error {
        let message: String
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed {
        var options = Options()
        var index = 0
        while index < arguments.count {
            var name = arguments[index]
            var inlineValue: String?
            if name.hasPrefix("--"), let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            index += 1
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
                index += 1
                return arguments[index - 1]
            }
            switch name {
            case "-h", "--help":
                return .help
            case "--events", "-n":
                options.events = try integer(try value(), for: name, minimum: 0)
            case "--seed":
                let text = try value()
                let parsed: UInt64? =
                    text.hasPrefix("0x") || text.hasPrefix("0X")
                    ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text.replacingUnderscores)
                guard let parsed else {
                    throw UsageError(message: "--seed must be an unsigned 64-bit integer, got '\(text)'")
                }
                options.seed = parsed
            case "--users":
                options.users = try integer(try value(), for: name, minimum: 1)
            case "--tasks":
                options.tasks = try integer(try value(), for: name, minimum: 1)
            case "--anomalies":
                let text = try value()
                guard let rate = Double(text), rate >= 0, rate <= 1 else {
                    throw UsageError(message: "--anomalies must be a number from 0 to 1, got '\(text)'")
                }
                options.anomalies = rate
            case "--android-share":
                let text = try value()
                guard let share = Double(text), share >= 0, share <= 1 else {
                    throw UsageError(message: "--android-share must be a number from 0 to 1, got '\(text)'")
                }
                options.androidShare = share
            case "--start":
                let text = try value()
                guard let ms = CivilCalendar.parseTimestamp(text) else {
                    throw UsageError(
                        message: "--start must be RFC 3339 (2026-01-01T00:00:00Z) or a date (2026-01-01), got '\(text)'"
                    )
                }
                options.start = ms
                options.startText = text
            case "-o", "--output":
                let path = try value()
                guard !path.isEmpty else { throw UsageError(message: "\(name) needs a file name") }
                options.output = path
            default:
                if name.hasPrefix("-") {
                    throw UsageError(message: "unknown option '\(name)' (see --help)")
                }
                throw UsageError(message: "unexpected argument '\(name)' (see --help)")
            }
        }
        if options.userCount > 50_000_000 || options.taskCount > 50_000_000 {
            throw UsageError(message: "--users and --tasks must be at most 50000000")
        }
        return .run(options)
    }

    private static func integer(_ text: String, for name: String, minimum: Int) throws(UsageError) -> Int {
        guard let value = Int(text.replacingUnderscores), value >= minimum else {
            throw UsageError(message: "\(name) must be an integer >= \(minimum), got '\(text)'")
        }
        return value
    }

    /// A hash of every argument that shapes the stream: it seeds the PRNG and the ids, so
    /// the same arguments give the same bytes and different ones give disjoint ids.
    var runHash: UInt64 {
        var h = mix64(seed ^ 0x7075_7368_7472_6169)
        h = mix64(h ^ UInt64(events))
        h = mix64(h ^ UInt64(userCount))
        h = mix64(h ^ UInt64(taskCount))
        h = mix64(h ^ anomalies.bitPattern)
        h = mix64(h ^ UInt64(bitPattern: Int64(start)))
        // Only when set, so that iOS-only streams keep the bytes they had before Android.
        if androidShare > 0 { h = mix64(h ^ androidShare.bitPattern ^ 0x616E_6472_6F69_6421) }
        return h
    }

    /// The tag in this run's action and delivery ids.
    var runTag: UInt32 { UInt32(truncatingIfNeeded: runHash >> 32) }
}

extension String {
    fileprivate var replacingUnderscores: String {
        contains("_") ? String(filter { $0 != "_" }) : self
    }
}
