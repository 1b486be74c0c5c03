import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The exit statuses (docs/COMMANDS.md lists them).
public enum ExitStatus {
    public static let success: Int32 = 0
    /// Nothing found, findings present, or verification failed.
    public static let notFound: Int32 = 1
    public static let usage: Int32 = 2
    /// Bad input data: rejected lines, conflicts.
    public static let dataError: Int32 = 65
    /// Store or file I/O error.
    public static let ioError: Int32 = 74
}

/// An error that carries its own one-line message and exit status.
public struct CommandError: Error, CustomStringConvertible {
    public let message: String
    public let status: Int32
    public init(_ message: String, status: Int32) {
        self.message = message
        self.status = status
    }
    public var description: String { message }

    static func notFound(_ message: String) -> CommandError { CommandError(message, status: ExitStatus.notFound) }
    static func io(_ message: String) -> CommandError { CommandError(message, status: ExitStatus.ioError) }
    static func data(_ message: String) -> CommandError { CommandError(message, status: ExitStatus.dataError) }
}

/// A subcommand: its declaration, the typed options it takes, and what it does.
///
/// Parsing and running are separate steps so that every usage error (a bad number, a
/// bad time, conflicting flags, a missing operand) is raised before anything happens:
/// no store is opened and no file is written for a command line that is wrong.
protocol Command: Sendable {
    /// What the command accepts, checked and typed.
    associatedtype Options: Sendable
    static var spec: CommandSpec { get }
    /// Turns the parsed command line into typed options, with no effect beyond reading
    /// `clock` for relative times; throws `UsageError` for anything wrong in it.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options
    /// Does the work; `arguments` is read only for the global options (`--store`,
    /// `--no-color`, `--show-tokens`). Returns the exit status.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32
}

extension Command {
    /// The declaration with the global options added, as the parser, help, completions
    /// and the man page see it.
    static var fullSpec: CommandSpec {
        var spec = self.spec
        spec.options += GlobalOptions.list.filter { g in !spec.options.contains { $0.name == g.name } }
        return spec
    }

    /// The typed options for `argv` (after the command name), without running anything.
    static func options(_ argv: [String], clock: () -> Timestamp) throws -> Options {
        try parse(Arguments.parse(argv, spec: fullSpec), clock: clock)
    }

    /// Parses, then runs: the one path from a command line to an exit status.
    static func execute(_ arguments: Arguments, _ context: Context) throws -> Int32 {
        let options = try parse(arguments, clock: context.clock)
        return try run(options, arguments, context)
    }
}

/// Options every command accepts.
enum GlobalOptions {
    static let list: [OptionSpec] = [
        .option(
            "store", "DIR", "the store directory (default: $PUSHTRAIL_STORE, else ./pushtrail.lmdb)",
            completion: .directory),
        .flag("no-color", "never colour the output (also: NO_COLOR=1)"),
        .flag("show-tokens", "show device tokens in full (masked by default)"),
        .flag("help", short: "h", "show this help"),
    ]
}

extension Context {
    /// The store directory: `--store`, else `$PUSHTRAIL_STORE`, else `./pushtrail.lmdb`.
    func storePath(_ arguments: Arguments) -> String {
        if let s = arguments.value("store"), !s.isEmpty { return s }
        if let s = variable("PUSHTRAIL_STORE"), !s.isEmpty { return s }
        return "pushtrail.lmdb"
    }

    /// `storePath`, for a command that works on one store: with neither `--store` nor
    /// `$PUSHTRAIL_STORE` but `$PUSHTRAIL_CLUSTER` set, the user means a cluster, which
    /// only reading commands take, so `./pushtrail.lmdb` would be the wrong store.
    func singleStorePath(_ arguments: Arguments) throws -> String {
        if arguments.value("store")?.isEmpty ?? true, variable("PUSHTRAIL_STORE")?.isEmpty ?? true,
            let cluster = variable("PUSHTRAIL_CLUSTER"), !cluster.isEmpty
        {
            throw UsageError(
                "works on one store, and $PUSHTRAIL_CLUSTER names a cluster: "
                    + "give --store DIR (or set PUSHTRAIL_STORE)",
                command: arguments.command)
        }
        return storePath(arguments)
    }

    /// Opens the store: for writing (created when missing) or read-only (must exist).
    func openStore(_ arguments: Arguments, create: Bool) throws -> Store {
        var options = StoreOptions()
        if let size = variable("PUSHTRAIL_MAP_SIZE").flatMap(Int.init), size > 0 { options.mapSize = size }
        if variable("PUSHTRAIL_NOSYNC") == "1" { options.noSync = true }
        return try Store(path: singleStorePath(arguments), create: create, options: options)
    }

    /// Builds a report from the store as of `horizon`: the report (nil is "not found",
    /// exit 1, saying "`missing` [at or before --at] in STORE") and its `as_of`.
    func asOfReport<R>(
        _ arguments: Arguments, horizon: Horizon?, missing: String,
        _ build: (StoreReader, Horizon?) throws -> R?
    ) throws -> (R, asOf: String) {
        let store = try openStore(arguments, create: false)
        let (report, head) = try store.read { reader in (try build(reader, horizon), try reader.head().seq) }
        guard let report else {
            throw CommandError.notFound("\(missing)\(horizon == nil ? "" : " at or before --at") in \(store.path)")
        }
        return (report, Presentation.asOf(horizon, head: head))
    }

    /// How device tokens are shown: masked unless `--show-tokens`.
    func tokens(_ arguments: Arguments) -> (String) -> String {
        if arguments.flag("show-tokens") { return { $0 } }
        return { TokenMask.mask($0) }
    }

    /// Shows a device token masked unless `--show-tokens`.
    func token(_ device: String?, _ arguments: Arguments) -> String {
        guard let device else { return "-" }
        return arguments.flag("show-tokens") ? device : TokenMask.mask(device)
    }
}

/// A count and its noun, for people: "1 event", "1,204 events".
func counted(_ n: Int, _ noun: String) -> String { grouped(n) + " " + (n == 1 ? noun : noun + "s") }

/// Formats counts for people: 1234567 → "1,234,567".
func grouped(_ n: Int) -> String {
    let s = String(n.magnitude)
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 { out += "," }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}

/// A progress line on a terminal, redrawn at most ten times a second.
final class ProgressLine {
    let stream: OutputStream
    let enabled: Bool
    private var last: Timestamp = Timestamp(microseconds: 0)
    private var shown = false

    init(_ stream: OutputStream, enabled: Bool) {
        self.stream = stream
        self.enabled = enabled && stream.isTerminal
    }

    func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let now = WallClock.now()
        guard now.microseconds - last.microseconds >= 100_000 else { return }
        last = now
        shown = true
        stream.write("\r\u{1B}[K" + text())
        try? stream.flush()
    }

    func clear() {
        guard enabled, shown else { return }
        stream.write("\r\u{1B}[K")
        try? stream.flush()
        shown = false
    }
}
