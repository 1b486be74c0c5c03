import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail import`: record `.apns` files, or FCM message files, as notifications.
enum ImportCommand: Command {
    static let spec = CommandSpec(
        name: "import",
        summary: "Record .apns files (iOS) or FCM message files (Android) as notification events.",
        usage: [
            "import FILE.apns… --user U [--at T] [--id UUID] [--topic BUNDLE]",
            "import FILE.json… --platform android --user U [--at T] [--id UUID] [--project P]",
        ],
        options: [
            .option("user", "U", "the recipient user id (required)"),
            .option("at", "T", "when it was sent (default: the file's modification time)"),
            .option("id", "UUID", "the event id (one file only; default: derived from content, user and time)"),
            .option(
                "platform", "PLATFORM", "ios: .apns files (the default); android: FCM message files",
                completion: .choices(Platform.allCases.map(\.rawValue))),
            .option("topic", "BUNDLE", "iOS: the app bundle id (default: the file's \"Simulator Target Bundle\")"),
            .option("project", "P", "Android: the Firebase project id the message was sent through"),
            OutputFormat.jsonFlag("print one {\"file\", \"id\", \"seq\", \"outcome\"} line per file"),
        ],
        operands: "FILE…",
        operandCompletion: .file,
        discussion: """
            The "Simulator Target Bundle" key becomes the event's topic and is not kept in
            the payload. An FCM message file holds the body posted to messages:send,
            {"message": {…}}, or the message alone; the message becomes the payload.
            Without --id, importing the same file again (same content, user and time) is
            a duplicate, not a second event.
            """)

    /// What `import` was asked for, checked before the store is opened.
    struct Options: Sendable {
        var files: [String]
        /// The recipient.
        var user: String
        /// When it was sent; nil for each file's modification time.
        var at: Timestamp?
        var id: String?
        var platform: Platform
        /// iOS: the topic that wins over the file's bundle key.
        var topic: String?
        /// Android: the Firebase project.
        var project: String?
        var json: Bool
    }

    /// Files, a user, `--id` only with one file, each platform's own option, then `--at`
    /// (a time, not @SEQ).
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        let platform = try PlatformOption.parse(arguments) ?? .ios
        guard !arguments.operands.isEmpty else {
            throw UsageError(
                platform == .ios ? "name at least one .apns file" : "name at least one FCM message file",
                command: "import")
        }
        if platform == .android && arguments.value("topic") != nil {
            throw UsageError(
                "--topic is the bundle id of an iOS notification; an FCM message names its app itself",
                command: "import")
        }
        if platform == .ios && arguments.value("project") != nil {
            throw UsageError("--project goes with --platform android", command: "import")
        }
        guard let user = arguments.value("user"), !user.isEmpty else {
            throw UsageError("--user is required: whose notification was it?", command: "import")
        }
        if arguments.value("id") != nil && arguments.operands.count > 1 {
            throw UsageError("--id names one event: import one file at a time with it", command: "import")
        }
        let at = try arguments.value("at").map { text in
            do { return try TimeExpression.parseTime(text, now: clock()) } catch { throw UsageError("--at: \(error)") }
        }
        return Options(
            files: arguments.operands, user: user, at: at, id: arguments.value("id"), platform: platform,
            topic: arguments.value("topic"), project: arguments.value("project"),
            json: try OutputFormat.parse(arguments) == .json)
    }

    /// Records each file as a notification; a bad file is reported and the others still imported (exit 65).
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        let user = options.user
        let at = options.at
        let store = try context.openStore(arguments, create: true)
        // The exit status `Failure` gives the worst file's error; success when every file went in.
        var status = ExitStatus.success
        /// Says what is wrong with one file, in `Failure`'s words; the others are still imported.
        func fail(_ path: String, _ error: any Error) {
            guard let (message, _, failure) = Failure.describe(error) else { return }
            context.stderr.line("pushtrail: \(path): \(message)")
            status = max(status, failure)
        }
        for path in options.files {
            let contents: [UInt8]
            do {
                contents = try readFile(
                    path, kind: options.platform == .ios ? "an .apns payload" : "an FCM message")
            } catch let error as CommandError where error.status == ExitStatus.dataError {
                // One bad file does not stop the others.
                fail(path, error)
                continue
            }
            let when = try at ?? modificationTime(path)
            let line: [UInt8]
            let event: Event
            do {
                switch options.platform {
                case .ios:
                    line = try APNSFile.eventLine(
                        file: contents, user: user, at: when, id: options.id, topic: options.topic)
                case .android:
                    line = try FCMFile.eventLine(
                        file: contents, user: user, at: when, id: options.id, project: options.project)
                }
                var decoder = EventDecoder()
                event = try decoder.decode(line)
            } catch {
                var reason = InvalidEvent.from(error).reason
                if options.platform == .ios && FCMFile.looksLikeMessage(contents) {
                    reason = "this is an FCM message, not an APNs payload: import it with --platform android"
                }
                fail(path, CommandError.data(reason))
                continue
            }
            let outcome = try store.append(
                [PendingEvent(event: event, raw: line, source: path)], recordedAt: context.clock)[0]
            let (word, seq): (String, UInt64) = {
                switch outcome {
                case .appended(let s): ("appended", s)
                case .duplicate(let s): ("duplicate", s)
                case .conflict(let s): ("conflict", s)
                }
            }()
            if case .conflict = outcome {
                fail(
                    path,
                    CommandError.data(
                        "id \(event.id) is already stored as seq \(seq) with different content; pass another --id"))
            }
            if options.json {
                context.stdout.line(
                    JSONValue.object([
                        ("file", .string(path)), ("id", .string(event.id)), ("seq", .uint(seq)),
                        ("outcome", .string(word)),
                    ])
                    .serialized())
            } else if case .appended = outcome {
                context.stdout.line("\(path): notification \(event.id) stored as seq \(seq)")
            } else if case .duplicate = outcome {
                context.stdout.line("\(path): already stored as seq \(seq) (duplicate, skipped)")
            }
        }
        return status
    }

    /// The file's bytes; over 1 MiB it is not `kind` (a payload is at most 64 KiB).
    static func readFile(_ path: String, kind: String = "an .apns payload") throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandError.io("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var out: [UInt8] = []
        // Sized to the file: a zeroed 64 KiB for a file of a few hundred bytes cost a
        // cluster's query more than opening a shard.
        var st = stat()
        let size = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
        var chunk = [UInt8](repeating: 0, count: min(max(size + 1, 4096), 1 << 16))
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw CommandError.io("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            out += chunk[0..<n]
            if out.count > 1 << 20 { throw CommandError.data("over 1 MiB: not \(kind)") }
        }
        return out
    }

    static func modificationTime(_ path: String) throws -> Timestamp {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw CommandError.io("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        #if canImport(Darwin)
            let ts = st.st_mtimespec
        #else
            let ts = st.st_mtim
        #endif
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }
}
