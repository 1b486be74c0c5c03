import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The reader went away (`pushtrail log | head`): stop quietly.
struct BrokenPipe: Error {}

/// Where a command writes: a file descriptor, or memory in tests.
public final class OutputStream: @unchecked Sendable {
    private let fd: Int32?
    private var buffer: [UInt8] = []
    /// Everything written, when this stream captures to memory.
    public private(set) var captured: [UInt8] = []
    /// Whether this stream is a terminal (colour and progress lines only then).
    public let isTerminal: Bool
    /// The terminal's width, when this stream is one and the width is known.
    public let columns: Int?

    /// Write through at once (stderr: messages must interleave with progress).
    private let autoflush: Bool

    /// A stream on a file descriptor, buffered unless `autoflush`.
    public init(fd: Int32, autoflush: Bool = false) {
        self.fd = fd
        self.autoflush = autoflush
        self.isTerminal = isatty(fd) == 1
        self.columns = isTerminal ? Terminal.columns(fd: fd) : nil
        buffer.reserveCapacity(1 << 16)
    }

    /// A stream that keeps what is written (for tests).
    public init(capturingAsTerminal: Bool = false, columns: Int? = nil) {
        self.fd = nil
        self.autoflush = false
        self.isTerminal = capturingAsTerminal
        self.columns = capturingAsTerminal ? columns : nil
    }

    public var text: String { String(decoding: captured, as: UTF8.self) }

    public func write(_ s: String) {
        if fd == nil {
            captured.append(contentsOf: s.utf8)
            return
        }
        buffer.append(contentsOf: s.utf8)
        if autoflush || buffer.count >= 1 << 16 { try? flush() }
    }

    public func write(bytes: some Collection<UInt8>) {
        if fd == nil {
            captured.append(contentsOf: bytes)
            return
        }
        buffer.append(contentsOf: bytes)
        if autoflush || buffer.count >= 1 << 16 { try? flush() }
    }

    public func line(_ s: String = "") { write(s + "\n") }

    /// A line for a screen: cut to the terminal's width (on a terminal only).
    func screenLine(_ s: String) {
        line(columns.map { Terminal.truncate(s, to: $0) } ?? s)
    }

    /// A message for a screen: wrapped at the terminal's width with `indent` on the
    /// following lines (on a terminal only).
    func wrappedLine(_ s: String, indent: String) {
        guard let columns else { return line(s) }
        for l in Terminal.wrap(s, width: columns, indent: indent) { line(l) }
    }

    /// Writes out the buffer; throws `BrokenPipe` when the reader has gone.
    func flush() throws {
        guard let fd, !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        var off = 0
        while off < buffer.count {
            let n = buffer.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE {
                    brokenPipe = true
                    throw BrokenPipe()
                }
                throw StoreError.io("cannot write output: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    /// Set once a write met a closed pipe.
    public private(set) var brokenPipe = false
}

@inline(__always) private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}

/// Colours for a terminal; empty strings when colour is off.
public struct Style: Sendable {
    public let enabled: Bool

    func wrap(_ code: String, _ s: String) -> String { enabled ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
    func bold(_ s: String) -> String { wrap("1", s) }
    func dim(_ s: String) -> String { wrap("2", s) }
    func red(_ s: String) -> String { wrap("31", s) }
    func green(_ s: String) -> String { wrap("32", s) }
    func yellow(_ s: String) -> String { wrap("33", s) }
    func blue(_ s: String) -> String { wrap("34", s) }
    func cyan(_ s: String) -> String { wrap("36", s) }
}

/// Everything a command may touch besides its arguments, injected so that tests run
/// commands in-process with captured output, a fixed clock and their own environment.
public final class Context: @unchecked Sendable {
    public let stdout: OutputStream
    public let stderr: OutputStream
    /// The environment: as given, or (the real process) read from `environ` when first
    /// asked for. Commands read single variables through `variable(_:)`.
    public private(set) lazy var environment: [String: String] = Context.processEnvironment()
    /// Whether `environment` is the process's, so that single variables can be looked
    /// up without building it.
    private let inProcessEnvironment: Bool
    public let clock: @Sendable () -> Timestamp
    /// Whether standard input is a terminal (then `ingest` with no files says how to use it).
    public let stdinIsTerminal: Bool
    /// How shards behind `pushtrail serve` are reached (`pushtrail-cluster` sets it);
    /// nil in the static `pushtrail`, which hands such a cluster to that companion.
    public var remote: (any RemoteTransport)?
    /// The command line this run was given (without the program name), to hand on.
    var invocation: [String] = []

    public init(
        stdout: OutputStream, stderr: OutputStream, environment: [String: String],
        clock: @escaping @Sendable () -> Timestamp, stdinIsTerminal: Bool = false
    ) {
        self.stdout = stdout
        self.stderr = stderr
        self.inProcessEnvironment = false
        self.clock = clock
        self.stdinIsTerminal = stdinIsTerminal
        self.environment = environment
    }

    private init(processWithStdinIsTerminal stdinIsTerminal: Bool) {
        self.stdout = OutputStream(fd: 1)
        self.stderr = OutputStream(fd: 2, autoflush: true)
        self.inProcessEnvironment = true
        self.clock = { WallClock.now() }
        self.stdinIsTerminal = stdinIsTerminal
    }

    /// The real process: fds 1 and 2, the process environment, the wall clock.
    public static func process() -> Context {
        Context(processWithStdinIsTerminal: isatty(0) == 1)
    }

    /// The environment variable `name`: `environment[name]`. For the real process it is
    /// found in `environ` without building the dictionary, which (hashing every
    /// variable) was a tenth of a short query's instructions.
    func variable(_ name: String) -> String? {
        guard inProcessEnvironment else { return environment[name] }
        var found: String?
        let prefix = Array(name.utf8) + [UInt8(ascii: "=")]
        var p = environ
        while let entry = p.pointee {
            p += 1
            // An ASCII entry is NAME=VALUE exactly when its bytes start so; an entry
            // with other characters is split as `processEnvironment` splits it.
            var ascii = true
            var i = 0
            while entry[i] != 0 {
                if UInt8(bitPattern: entry[i]) >= 0x80 {
                    ascii = false
                    break
                }
                i += 1
            }
            if ascii {
                var k = 0
                while k < prefix.count && UInt8(bitPattern: entry[k]) == prefix[k] { k += 1 }
                if k == prefix.count { found = String(cString: entry + k) }
            } else if let (key, value) = Context.split(String(cString: entry)), key == name {
                found = value
            }
        }
        return found
    }

    /// The process environment as a dictionary (a later duplicate wins).
    static func processEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            if let (key, value) = split(String(cString: entry)) { env[key] = value }
            p += 1
        }
        return env
    }

    /// `NAME=VALUE` split at its first "=".
    private static func split(_ s: String) -> (String, String)? {
        // ASCII (nearly always): find "=" among the bytes, not the Characters.
        let eq = s.utf8.allSatisfy { $0 < 0x80 } ? s.utf8.firstIndex(of: UInt8(ascii: "=")) : s.firstIndex(of: "=")
        guard let eq else { return nil }
        return (String(s[..<eq]), String(s[s.index(after: eq)...]))
    }

    /// Colour for `stream`: only on a terminal, never with `NO_COLOR` set.
    func style(for stream: OutputStream, disabled: Bool = false) -> Style {
        let noColor = variable("NO_COLOR").map { !$0.isEmpty } ?? false
        return Style(enabled: stream.isTerminal && !noColor && !disabled && variable("TERM") != "dumb")
    }

    /// A warning on stderr: `pushtrail: warning: …`.
    func warn(_ message: String) {
        stderr.line("pushtrail: warning: \(message)")
    }
}
