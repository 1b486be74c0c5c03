import Foundation
import PushTrailCLI
import PushTrailModel
import PushTrailStore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the test harness itself (a missing binary, an unreadable file).
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private directory for one test, removed when the test lets go of it.
final class TempDir: @unchecked Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/pushtrail-cli-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit {
        // A test may have made something unreadable or world-writable; undo before removing.
        chmod(path, 0o700)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// The store directory used by most tests (not created until the first write).
    var store: String { file("store") }

    /// Writes `lines`, each followed by `terminator`.
    @discardableResult
    func write(_ name: String, lines: [String], terminator: String = "\n") throws -> String {
        try write(name, bytes: Array(lines.map { $0 + terminator }.joined().utf8))
    }

    /// Writes raw bytes (for invalid UTF-8, BOMs, CRLF).
    @discardableResult
    func write(_ name: String, bytes: [UInt8]) throws -> String {
        let p = file(name)
        guard FileManager.default.createFile(atPath: p, contents: Data(bytes)) else {
            throw HarnessError("cannot write \(p)")
        }
        return p
    }

    func read(_ name: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file(name)) else {
            throw HarnessError("cannot read \(file(name))")
        }
        return Array(data)
    }
}

/// What one run of the command line produced.
struct Outcome: CustomStringConvertible {
    var status: Int32
    var stdoutBytes: [UInt8]
    var stderrBytes: [UInt8]

    var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
    /// The non-empty lines of stderr.
    var stderrLines: [Substring] { stderr.split(separator: "\n") }
    /// The first line of stderr, as a String (a Substring? beside a concatenation of
    /// literals compares unequal).
    var stderrFirstLine: String? { stderrLines.first.map(String.init) }

    /// stdout parsed as one JSON value.
    func json() throws -> JSON { try JSON.parse(stdoutBytes) }

    var description: String { "exit \(status)\n--- stdout:\n\(stdout)\n--- stderr:\n\(stderr)" }
}

/// Runs commands in-process: captured streams, a fixed clock, a private environment.
enum CLI {
    /// 2026-12-01T09:30:00Z: the recorded_at of everything the tests append in-process.
    static let now = Timestamp(microseconds: 1_796_117_400_000_000)
    static let nowText = "2026-12-01T09:30:00.000Z"

    static func run(
        _ argv: [String], environment: [String: String] = [:], stderrIsTerminal: Bool = false,
        stdinIsTerminal: Bool = false
    ) -> Outcome {
        let out = OutputStream()
        let err = OutputStream(capturingAsTerminal: stderrIsTerminal)
        let context = Context(
            stdout: out, stderr: err, environment: environment, clock: { CLI.now }, stdinIsTerminal: stdinIsTerminal)
        let status = PushTrail.main(argv, context: context)
        return Outcome(status: status, stdoutBytes: out.captured, stderrBytes: err.captured)
    }

    /// Runs `argv` against the store `store` (as `--store DIR` before the command).
    static func run(
        store: String, _ argv: [String], environment: [String: String] = [:], stderrIsTerminal: Bool = false
    )
        -> Outcome
    {
        run(["--store", store] + argv, environment: environment, stderrIsTerminal: stderrIsTerminal)
    }

    /// `stats --json` of a store.
    static func stats(_ store: String) throws -> JSON {
        let r = run(store: store, ["stats", "--json"])
        guard r.status == 0 else { throw HarnessError("stats failed: \(r)") }
        return try r.json()
    }

    /// `head --json` of a store.
    static func head(_ store: String) throws -> JSON {
        let r = run(store: store, ["head", "--json"])
        guard r.status == 0 else { throw HarnessError("head failed: \(r)") }
        return try r.json()
    }

    /// `show --json` of one event, or nil when it is not stored (exit 1).
    static func show(_ store: String, _ target: String) throws -> JSON? {
        let r = run(store: store, ["show", "--json", target])
        if r.status == 1 { return nil }
        guard r.status == 0 else { throw HarnessError("show failed: \(r)") }
        return try r.json()
    }
}

/// The built `pushtrail` executable, run as a real process.
enum Binary {
    /// Where the executable is: `$PUSHTRAIL_BIN`, else next to the test runner (so it
    /// works with the default `.build` and with any `--scratch-path`), else
    /// `.build/debug/pushtrail` above this file.
    static func path() throws -> String {
        let fm = FileManager.default
        var tried: [String] = []
        func usable(_ p: String) -> Bool {
            tried.append(p)
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: p, isDirectory: &isDirectory) && !isDirectory.boolValue
                && fm.isExecutableFile(atPath: p)
        }
        if let p = ProcessInfo.processInfo.environment["PUSHTRAIL_BIN"], !p.isEmpty {
            if usable(p) { return p }
            throw HarnessError("PUSHTRAIL_BIN=\(p) is not an executable file")
        }
        var runners = [URL(fileURLWithPath: CommandLine.arguments[0])]
        if let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            runners.append(URL(fileURLWithPath: exe))
        }
        for runner in runners {
            // Linux: .build/debug/pushtrailPackageTests.xctest; macOS: the bundle's
            // Contents/MacOS/…, a few levels further down.
            var dir = runner.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = dir.appendingPathComponent("pushtrail").path
                if usable(candidate) { return candidate }
                dir = dir.deletingLastPathComponent()
            }
        }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent(".build/debug/pushtrail").path
            if usable(candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw HarnessError(
            "the pushtrail executable was not found (tried \(tried.joined(separator: ", "))): "
                + "run 'swift build --build-tests' first, or set PUSHTRAIL_BIN")
    }

    /// What a process reads as standard input.
    enum Input {
        case none
        case file(String)
        /// Bytes written through a pipe while the process runs.
        case pipe([UInt8])
        /// The read end of a pipe the test writes to as it likes.
        case stream(Pipe)
    }

    /// A started process; `wait()` collects its outcome.
    final class Running: @unchecked Sendable {
        let process: Process
        let outPath: String
        let errPath: String
        let dir: TempDir
        private let lock = NSLock()
        private var timedOut = false

        init(process: Process, outPath: String, errPath: String, dir: TempDir) {
            self.process = process
            self.outPath = outPath
            self.errPath = errPath
            self.dir = dir
        }

        func markTimedOut() {
            lock.lock()
            timedOut = true
            lock.unlock()
        }

        func wait() throws -> Outcome {
            process.waitUntilExit()
            lock.lock()
            let late = timedOut
            lock.unlock()
            let out = Array(FileManager.default.contents(atPath: outPath) ?? Data())
            let err = Array(FileManager.default.contents(atPath: errPath) ?? Data())
            if late {
                throw HarnessError(
                    "pushtrail \(process.arguments ?? []) did not finish in time; stderr: "
                        + "\(String(decoding: err, as: UTF8.self))")
            }
            return Outcome(status: process.terminationStatus, stdoutBytes: out, stderrBytes: err)
        }
    }

    /// Starts the executable (`executable`, else the built one) with `arguments`. The
    /// environment is the test runner's without any `PUSHTRAIL_*` or colour settings,
    /// plus `environment`. With `umask`, the process runs under that umask (through
    /// `/bin/sh`); with `directory`, in that working directory.
    static func start(
        _ arguments: [String], input: Input = .none, environment: [String: String] = [:], umask: String? = nil,
        directory: String? = nil, timeout: TimeInterval = 300, executable: String? = nil
    ) throws -> Running {
        let executable = try executable ?? path()
        let scratch = try TempDir()
        let outPath = scratch.file("stdout")
        let errPath = scratch.file("stderr")
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
            FileManager.default.createFile(atPath: errPath, contents: nil)
        else { throw HarnessError("cannot create output files in \(scratch.path)") }

        let process = Process()
        if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHTRAIL_") && $0.key != "NO_COLOR" }
        env.merge(environment) { _, new in new }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        var pipe: Pipe?
        switch input {
        case .none: process.standardInput = FileHandle.nullDevice
        case .file(let p):
            guard let handle = FileHandle(forReadingAtPath: p) else { throw HarnessError("cannot read \(p)") }
            process.standardInput = handle
        case .pipe:
            pipe = Pipe()
            process.standardInput = pipe
        case .stream(let p):
            process.standardInput = p.fileHandleForReading
        }
        try process.run()
        if case .pipe(let bytes) = input, let pipe {
            let writer = pipe.fileHandleForWriting
            Thread.detachNewThread {
                writer.write(Data(bytes))
                try? writer.close()
            }
        }
        let running = Running(process: process, outPath: outPath, errPath: errPath, dir: scratch)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak running] in
            guard let running, running.process.isRunning else { return }
            running.markTimedOut()
            kill(running.process.processIdentifier, SIGKILL)  // SIGTERM may be blocked in children
        }
        return running
    }

    /// Runs the executable to completion.
    static func run(
        _ arguments: [String], input: Input = .none, environment: [String: String] = [:], umask: String? = nil,
        directory: String? = nil, executable: String? = nil
    ) throws -> Outcome {
        try start(
            arguments, input: input, environment: environment, umask: umask, directory: directory,
            executable: executable
        ).wait()
    }
}

/// A tool from the system (`mdb_stat`, `mdb_dump`, `zstd`), run to read a store the
/// way docs/STORE.md says one can without pushtrail.
enum Tool {
    /// Runs `name` (found on the PATH) with `arguments`: its exit status and standard
    /// output; standard error is discarded.
    static func run(_ name: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs `name` with `arguments` and returns its standard output; a failing run
    /// is recorded as a failed expectation.
    static func output(_ name: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String
    {
        let (status, output) = try run(name, arguments)
        #expect(
            status == 0, "\(name) \(arguments) exited \(status) (is it installed? Scripts/test.sh installs it)",
            sourceLocation: sourceLocation)
        return output
    }
}

/// Builders for NDJSON event lines, small and explicit.
enum Line {
    static let at = "2026-11-29T10:00:00Z"

    /// A JSON string literal.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func delivery(
        _ id: String, user: String = "u_test", notification: String = "n-1", status: Int = 200, at: String = Line.at,
        extra: String = ""
    ) -> String {
        "{\"type\":\"delivery\",\"id\":\(quoted(id)),\"at\":\(quoted(at)),\"user\":\(quoted(user)),"
            + "\"notification_id\":\(quoted(notification)),\"status\":\(status)\(extra)}"
    }

    static func action(
        _ id: String, task: Int = 1101, action: String = "open", outcome: String = "ok", user: String = "u_test",
        at: String = Line.at, extra: String = ""
    ) -> String {
        "{\"type\":\"action\",\"id\":\(quoted(id)),\"at\":\(quoted(at)),\"user\":\(quoted(user)),"
            + "\"task_id\":\(task),\"action\":\(quoted(action)),\"outcome\":\(quoted(outcome))\(extra)}"
    }

    static func notification(
        _ id: String, user: String = "u_test", device: String? = nil, thread: String? = nil, task: Int? = nil,
        at: String = Line.at, extra: String = ""
    ) -> String {
        var aps = "{\"alert\":{\"title\":\"Due soon\",\"body\":\"Take out the bins\"},\"category\":\"TASK_ACTIONABLE\""
        if let thread { aps += ",\"thread-id\":\(quoted(thread))" }
        aps += "}"
        var payload = "{\"aps\":\(aps)"
        if let task { payload += ",\"task_id\":\(task)" }
        payload += "}"
        var line = "{\"type\":\"notification\",\"id\":\(quoted(id)),\"at\":\(quoted(at)),\"user\":\(quoted(user))"
        if let device { line += ",\"device\":\(quoted(device))" }
        return line + ",\"payload\":\(payload)\(extra)}"
    }

    /// `count` distinct deliveries `prefix-0`, `prefix-1`, …, each about `padding` bytes longer.
    /// `count` deliveries; with `padding`, each carries that many characters of
    /// pseudo-random hex, which compresses no better than a device token's (about 2×):
    /// padded events take room in the store whatever its compression.
    static func deliveries(_ prefix: String, count: Int, padding: Int = 0, user: String = "u_test") -> [String] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let digits = Array("0123456789abcdef".utf8)
        return (0..<count).map { i in
            var pad = ""
            if padding > 0 {
                var hex = [UInt8]()
                hex.reserveCapacity(padding)
                while hex.count < padding {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    hex.append(digits[Int(state >> 60)])
                }
                pad = ",\"pad\":\"" + String(decoding: hex, as: UTF8.self) + "\""
            }
            return delivery("\(prefix)-\(i)", user: user, notification: "n-\(i)", extra: pad)
        }
    }
}

/// Time arithmetic done by the tests themselves (not by pushtrail's own code).
enum UTC {
    static let calendar: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }()

    /// Microseconds since the epoch of an RFC 3339 time (`Z` or an offset, any fraction).
    static func microseconds(_ text: String) throws -> Int64 {
        let s = Array(text.utf8)
        func number(_ from: Int, _ count: Int) throws -> Int {
            guard from + count <= s.count, let v = Int(String(decoding: s[from..<(from + count)], as: UTF8.self)) else {
                throw HarnessError("not an RFC 3339 time: \(text)")
            }
            return v
        }
        var components = DateComponents()
        components.year = try number(0, 4)
        components.month = try number(5, 2)
        components.day = try number(8, 2)
        components.hour = try number(11, 2)
        components.minute = try number(14, 2)
        components.second = try number(17, 2)
        guard let date = calendar.date(from: components) else { throw HarnessError("bad date \(text)") }
        var micros = Int64(date.timeIntervalSince1970) * 1_000_000
        var i = 19
        if i < s.count, s[i] == UInt8(ascii: ".") {
            i += 1
            var digits = ""
            while i < s.count, (0x30...0x39).contains(s[i]) {
                digits.append(Character(Unicode.Scalar(s[i])))
                i += 1
            }
            let six = String((digits + "000000").prefix(6))
            micros += Int64(six)!
        }
        guard i < s.count else { throw HarnessError("no zone in \(text)") }
        if s[i] | 0x20 != UInt8(ascii: "z") {
            let sign: Int64 = s[i] == UInt8(ascii: "-") ? -1 : 1
            let offset = Int64(try number(i + 1, 2) * 60 + number(i + 4, 2))
            micros -= sign * offset * 60_000_000
        }
        return micros
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the format times are printed in.
    static func format(_ micros: Int64) -> String {
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let millis = (micros - seconds * 1_000_000) / 1000
        let c = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        func pad(_ v: Int?, _ w: Int) -> String {
            let s = String(v ?? 0)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return
            "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T"
            + "\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))."
            + pad(Int(millis), 3) + "Z"
    }
}

/// Paths of the repository's sample data.
enum Samples {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples").path

    static var events: String { directory + "/events.ndjson" }

    static func apnsFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".apns") }.sorted()
            .map { directory + "/" + $0 }
    }

    /// The Android twins of the `.apns` files: FCM message files, in the same order.
    static func androidFiles() throws -> [String] {
        let android = directory + "/android"
        return try FileManager.default.contentsOfDirectory(atPath: android).filter { $0.hasSuffix(".json") }.sorted()
            .map { android + "/" + $0 }
    }
}

/// File modes, read with stat(2).
func mode(of path: String) -> Int? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return Int(st.st_mode & 0o7777)
}

func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// Whether `s` is 64 lowercase hexadecimal digits.
func isLowercaseSHA256Hex(_ s: String?) -> Bool {
    guard let s, s.utf8.count == 64 else { return false }
    return s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
}
