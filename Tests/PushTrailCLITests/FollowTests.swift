import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers of the `log -f` tests, kept in their own namespace.
private enum FollowFixtures {}

extension FollowFixtures {
    /// `pushtrail … log -f` running as a real process, its stdout on a pipe this test
    /// reads with bounded waits only, its stderr in a file.
    final class Follower {
        let process = Process()
        private let stdoutPipe = Pipe()
        private var readEnd: Int32
        private var pending: [UInt8] = []
        private(set) var lines: [String] = []
        private(set) var sawEndOfFile = false
        private let errPath: String
        private let scratch: TempDir

        init(_ arguments: [String]) throws {
            scratch = try TempDir()
            errPath = scratch.file("stderr")
            guard FileManager.default.createFile(atPath: errPath, contents: nil),
                let errHandle = FileHandle(forWritingAtPath: errPath)
            else { throw HarnessError("cannot create \(errPath)") }
            // Foundation's Process closes every other descriptor in its children, so no
            // other process the suite spawns holds an end of this pipe; it closes the
            // write end here once the child has it.
            readEnd = stdoutPipe.fileHandleForReading.fileDescriptor
            process.executableURL = URL(fileURLWithPath: try Binary.path())
            process.arguments = arguments
            let env = ProcessInfo.processInfo.environment.filter {
                !$0.key.hasPrefix("PUSHTRAIL_") && $0.key != "NO_COLOR"
            }
            process.environment = env
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = stdoutPipe
            process.standardError = errHandle
            defer { try? errHandle.close() }
            // The suite's worker threads block SIGINT and SIGTERM, and a spawned child
            // inherits the spawning thread's mask; from a shell, `log -f` starts with them
            // deliverable. Spawn it that way.
            var deliverable = sigset_t()
            sigemptyset(&deliverable)
            sigaddset(&deliverable, SIGINT)
            sigaddset(&deliverable, SIGTERM)
            var previous = sigset_t()
            pthread_sigmask(SIG_UNBLOCK, &deliverable, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            try process.run()
        }

        /// Kills the child if it still runs and closes the pipe: a failing test cannot hang.
        func stop() {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            closeReader()
        }

        /// Closes this end of the pipe: the follower's next write meets a reader that is gone.
        func closeReader() {
            if readEnd >= 0 {
                try? stdoutPipe.fileHandleForReading.close()
                readEnd = -1
            }
        }

        /// Reads what arrives until there are `count` complete lines, the pipe ends, or
        /// `seconds` pass; returns the lines so far.
        @discardableResult
        func waitForLines(_ count: Int, within seconds: TimeInterval) -> [String] {
            let deadline = Date().addingTimeInterval(seconds)
            while lines.count < count && !sawEndOfFile && readEnd >= 0 {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { break }
                var pfd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, Int32(min(left, 0.2) * 1000) + 1)
                if ready < 0 && errno != EINTR { break }
                guard ready > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65536)
                let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    break
                }
                if n == 0 {
                    sawEndOfFile = true
                    break
                }
                pending += chunk[0..<n]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            return lines
        }

        /// Bytes read after the last complete line.
        var partialLine: String { String(decoding: pending, as: UTF8.self) }

        /// Waits up to `seconds` for the child to exit; whether it did.
        func waitForExit(within seconds: TimeInterval) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { return false }
            process.waitUntilExit()
            return true
        }

        func interrupt() { kill(process.processIdentifier, SIGINT) }

        var stderr: String { String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self) }

        /// The printed lines as `log --json` objects.
        func objects() throws -> [JSON] { try lines.map { try JSON.parse($0) } }
    }

    /// The seq of each `log --json` object.
    static func seqs(_ objects: [JSON]) -> [Int?] { objects.map { $0["seq"]?.int } }

    /// Ingests `lines` from a separate `pushtrail ingest` process.
    static func ingest(_ dir: TempDir, _ name: String, _ lines: [String]) throws -> Outcome {
        let file = try dir.write(name, lines: lines)
        return try Binary.run(["--store", dir.store, "ingest", file])
    }
}

@Suite("FollowTests: log -f through the executable")
struct FollowTests {
    @Test("log -f --json prints exactly the events another process appends, in order, and exits 0 on SIGINT")
    func followsAppends() throws {
        let dir = try TempDir()
        let existing = [
            Line.delivery("f-1", user: "u1"), Line.action("f-2", user: "u2"),
            Line.notification("F0000000-0000-4000-8000-000000000003", user: "u1", thread: "task-1101", task: 1101),
        ]
        let seeded = try FollowFixtures.ingest(dir, "existing.ndjson", existing)
        try #require(seeded.status == 0, "\(seeded)")

        let follower = try FollowFixtures.Follower(["--store", dir.store, "log", "-f", "--json"])
        defer { follower.stop() }
        follower.waitForLines(3, within: 15)
        try #require(follower.lines.count == 3, "the existing events: \(follower.lines) + \(follower.partialLine)")
        #expect(FollowFixtures.seqs(try follower.objects()) == [1, 2, 3])

        let appended = [Line.delivery("f-4", user: "u2"), Line.action("f-5", action: "dismiss", user: "u1")]
        let more = try FollowFixtures.ingest(dir, "more.ndjson", appended)
        try #require(more.status == 0, "\(more)")
        follower.waitForLines(5, within: 5)
        // A little longer: nothing else may follow.
        follower.waitForLines(6, within: 0.5)
        let printed = try follower.objects()
        #expect(printed.count == 5, "\(follower.lines)")
        #expect(FollowFixtures.seqs(Array(printed.dropFirst(3))) == [4, 5], "\(follower.lines)")
        for (object, line) in zip(printed.dropFirst(3), appended) {
            #expect(object["event"] == (try JSON.parse(line)), "\(object)")
            #expect(object["recorded_at"]?.string != nil, "\(object)")
        }

        follower.interrupt()
        let exited = follower.waitForExit(within: 5)
        try #require(exited, "log -f did not stop within 5 s of SIGINT")
        #expect(follower.process.terminationReason == .exit)
        #expect(follower.process.terminationStatus == 0)
        follower.waitForLines(6, within: 2)
        #expect(follower.sawEndOfFile)
        #expect(
            follower.lines.count == 5 && follower.partialLine.isEmpty, "\(follower.lines) + \(follower.partialLine)")
        #expect(follower.stderr.isEmpty, "stderr: \(follower.stderr)")
    }

    @Test("log -f --user prints only the new events of that user")
    func followsWithFilter() throws {
        let dir = try TempDir()
        let seeded = try FollowFixtures.ingest(
            dir, "existing.ndjson",
            [Line.delivery("g-1", user: "u1"), Line.delivery("g-2", user: "u2"), Line.delivery("g-3", user: "u1")])
        try #require(seeded.status == 0, "\(seeded)")

        let follower = try FollowFixtures.Follower(["--store", dir.store, "log", "-f", "--json", "--user", "u2"])
        defer { follower.stop() }
        follower.waitForLines(1, within: 15)
        try #require(follower.lines.count == 1, "\(follower.lines) + \(follower.partialLine)")
        #expect(FollowFixtures.seqs(try follower.objects()) == [2])

        let more = try FollowFixtures.ingest(
            dir, "more.ndjson",
            [
                Line.delivery("g-4", user: "u1"), Line.action("g-5", user: "u2"), Line.action("g-6", user: "u1"),
                Line.delivery("g-7", user: "u2"),
            ])
        try #require(more.status == 0, "\(more)")
        follower.waitForLines(3, within: 5)
        follower.waitForLines(4, within: 0.5)
        let printed = try follower.objects()
        #expect(FollowFixtures.seqs(printed) == [2, 5, 7], "\(follower.lines)")
        #expect(printed.allSatisfy { $0["event"]?["user"]?.string == "u2" }, "\(follower.lines)")

        follower.interrupt()
        try #require(follower.waitForExit(within: 5), "log -f did not stop within 5 s of SIGINT")
        #expect(follower.process.terminationStatus == 0)
        #expect(follower.stderr.isEmpty, "stderr: \(follower.stderr)")
    }

    @Test("log -f whose reader has gone exits quietly with status 0 at its next write")
    func readerGone() throws {
        let dir = try TempDir()
        let seeded = try FollowFixtures.ingest(
            dir, "existing.ndjson", [Line.delivery("h-1"), Line.delivery("h-2"), Line.delivery("h-3")])
        try #require(seeded.status == 0, "\(seeded)")

        let follower = try FollowFixtures.Follower(["--store", dir.store, "log", "-f", "--json"])
        defer { follower.stop() }
        follower.waitForLines(3, within: 15)
        try #require(follower.lines.count == 3, "\(follower.lines) + \(follower.partialLine)")

        follower.closeReader()
        let more = try FollowFixtures.ingest(dir, "more.ndjson", [Line.delivery("h-4"), Line.delivery("h-5")])
        try #require(more.status == 0, "\(more)")
        let exited = follower.waitForExit(within: 5)
        try #require(exited, "log -f kept running after its reader closed the pipe")
        #expect(follower.process.terminationReason == .exit, "killed by signal \(follower.process.terminationStatus)")
        #expect(follower.process.terminationStatus == 0)
        #expect(follower.stderr.isEmpty, "stderr: \(follower.stderr)")
        #expect(!follower.stderr.localizedCaseInsensitiveContains("broken pipe"))
    }
}
