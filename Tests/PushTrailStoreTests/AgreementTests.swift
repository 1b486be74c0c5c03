import Foundation
import PushTrailModel
import PushTrailStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The generated stream and the ways of asking about its findings that must agree.
enum AgreementFixtures {
    /// A failure of the fixture itself (no generator, a generator that failed).
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The fixed recorded_at of everything appended (tests never read the wall clock).
    static let recordedAt = Timestamp(microseconds: 1_796_117_400_000_000)

    /// A finding as the brief compares them across reports: its code and its event.
    struct Key: Hashable, CustomStringConvertible {
        var code: FindingCode
        var seq: UInt64
        init(_ f: Finding) {
            code = f.code
            seq = f.seq
        }
        var description: String { "\(code.rawValue)@\(seq)" }
    }

    /// Where `pushtrail-gen` is: `$PUSHTRAIL_GEN_BIN`, else beside `$PUSHTRAIL_BIN`,
    /// else next to the test runner (any `--scratch-path`), else `.build/debug` above
    /// this file.
    static func generatorPath() throws -> String {
        let fm = FileManager.default
        var tried: [String] = []
        func usable(_ p: String) -> Bool {
            tried.append(p)
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: p, isDirectory: &isDirectory) && !isDirectory.boolValue
                && fm.isExecutableFile(atPath: p)
        }
        let environment = ProcessInfo.processInfo.environment
        if let p = environment["PUSHTRAIL_GEN_BIN"], !p.isEmpty {
            if usable(p) { return p }
            throw Failure("PUSHTRAIL_GEN_BIN=\(p) is not an executable file")
        }
        if let p = environment["PUSHTRAIL_BIN"], !p.isEmpty {
            let sibling = URL(fileURLWithPath: p).deletingLastPathComponent().appendingPathComponent("pushtrail-gen")
                .path
            if usable(sibling) { return sibling }
        }
        var runners = [URL(fileURLWithPath: CommandLine.arguments[0])]
        if let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            runners.append(URL(fileURLWithPath: exe))
        }
        for runner in runners {
            // Linux: .build/debug/pushtrailPackageTests.xctest; macOS: a few levels down a bundle.
            var dir = runner.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = dir.appendingPathComponent("pushtrail-gen").path
                if usable(candidate) { return candidate }
                dir = dir.deletingLastPathComponent()
            }
        }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent(".build/debug/pushtrail-gen").path
            if usable(candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw Failure(
            "the pushtrail-gen executable was not found (tried \(tried.joined(separator: ", "))): "
                + "run 'swift build --build-tests' first, or set PUSHTRAIL_GEN_BIN")
    }

    /// Runs `pushtrail-gen arguments` to completion, killing it after `timeout` seconds.
    static func generate(_ arguments: [String], in directory: String, timeout: TimeInterval = 120) throws {
        let errPath = directory + "/gen.stderr"
        guard FileManager.default.createFile(atPath: errPath, contents: nil),
            let errHandle = FileHandle(forWritingAtPath: errPath)
        else { throw Failure("cannot create \(errPath)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try generatorPath())
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errHandle
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            throw Failure("pushtrail-gen \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
        }
        process.waitUntilExit()
        try? errHandle.close()
        guard process.terminationStatus == 0, process.terminationReason == .exit else {
            let err = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
            throw Failure(
                "pushtrail-gen \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(err)")
        }
    }

    /// The threads an event belongs to: the one it names, and its notification's.
    static func threads(of seq: UInt64, _ reader: StoreReader) throws -> Set<String> {
        guard let stored = try reader.event(seq: seq) else { return [] }
        let event = try stored.decode()
        var out = Set<String>()
        if let t = event.threadID { out.insert(t) }
        if let ref = event.referencedNotificationID, let t = try notificationThread(ref, reader) { out.insert(t) }
        return out
    }

    /// The `aps.thread-id` of the stored notification `id`.
    static func notificationThread(_ id: String, _ reader: StoreReader) throws -> String? {
        guard let seq = try reader.seq(forID: id), let stored = try reader.event(seq: seq), stored.type == .notification
        else { return nil }
        return try stored.decode().notification?.threadID
    }

    /// What differs between two finding lists, briefly: the findings only one has, or
    /// the first pair that reads differently.
    static func difference(_ a: [Finding], _ aName: String, _ b: [Finding], _ bName: String) -> String {
        let aKeys = Set(a.map(Key.init))
        let bKeys = Set(b.map(Key.init))
        let onlyA = a.map(Key.init).filter { !bKeys.contains($0) }
        let onlyB = b.map(Key.init).filter { !aKeys.contains($0) }
        if !onlyA.isEmpty || !onlyB.isEmpty {
            return "only in \(aName) \(onlyA), only in \(bName) \(onlyB)"
        }
        if let (x, y) = zip(a, b).first(where: { $0 != $1 }) {
            return "\(aName) has \(x) where \(bName) has \(y)"
        }
        return "same findings in another order: \(aName) \(a.map(Key.init)), \(bName) \(b.map(Key.init))"
    }

    /// Milliseconds since `start`, for the timing lines.
    static func since(_ start: ContinuousClock.Instant) -> String {
        let d = ContinuousClock.now - start
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return "\(ms) ms"
    }
}

@Suite("AgreementTests: audit, task and thread reports agree on a generated stream")
struct AgreementTests {
    @Test("audit, task --json and thread --json agree on a generated 100,000-event stream, 30% of it Android")
    func findingsAgree() throws {
        let total = ContinuousClock.now
        try withTemporaryDirectory { dir in
            // 1. Generate.
            var clock = ContinuousClock.now
            let input = dir + "/events.ndjson"
            try AgreementFixtures.generate(
                ["--events", "100000", "--seed", "7", "--anomalies", "0.02", "--android-share", "0.3", "-o", input],
                in: dir)
            print("AgreementTests: generate 100,000 events: \(AgreementFixtures.since(clock))")

            // 2. Ingest in-process.
            clock = ContinuousClock.now
            var options = StoreOptions()
            options.noSync = true
            let store = try Store(path: dir + "/store", create: true, options: options)
            let ingest = Ingest(
                store: store, sources: [.file(input)], options: IngestOptions(),
                clock: { AgreementFixtures.recordedAt })
            var rejections: [Rejection] = []
            ingest.onReject = { rejections.append($0) }
            let summary = try ingest.run()
            #expect(summary.appended == 100_000, "\(summary)")
            #expect(summary.rejected == 0 && summary.conflicts == 0, "\(rejections.prefix(3))")
            print("AgreementTests: ingest: \(AgreementFixtures.since(clock))")

            try store.read { reader in
                // 3. The whole-store audit.
                clock = ContinuousClock.now
                let audit = try reader.audit(LogQuery())
                print("AgreementTests: whole-store audit (\(audit.count) findings): \(AgreementFixtures.since(clock))")

                clock = ContinuousClock.now
                try checkEveryCode(audit)
                try checkBothPlatforms(audit, reader)
                try checkTasksAndThreads(audit, reader)
                print("AgreementTests: task and thread reports: \(AgreementFixtures.since(clock))")

                clock = ContinuousClock.now
                try checkThreadSample(audit, reader)
                print("AgreementTests: thread sample: \(AgreementFixtures.since(clock))")

                clock = ContinuousClock.now
                try checkScopedAudits(audit, reader)
                print("AgreementTests: scoped audits: \(AgreementFixtures.since(clock))")
            }
        }
        print("AgreementTests: total: \(AgreementFixtures.since(total))")
    }

    /// (d) The generator's anomalies cover every finding code.
    private func checkEveryCode(_ audit: [Finding]) throws {
        var counts: [FindingCode: Int] = [:]
        for f in audit { counts[f.code, default: 0] += 1 }
        let shown = FindingCode.allCases.map { "\($0.rawValue): \(counts[$0] ?? 0)" }.joined(separator: ", ")
        for code in FindingCode.allCases {
            #expect((counts[code] ?? 0) > 0, "no \(code.rawValue) finding; counts: \(shown)")
        }
        print("AgreementTests: findings by code: \(shown)")
    }

    /// (d') The rules about a notification itself fire on both platforms' notifications.
    private func checkBothPlatforms(_ audit: [Finding], _ reader: StoreReader) throws {
        let shared: [FindingCode] = [
            .categoryStateMismatch, .buttonsCategoryMismatch, .premiumMismatch, .threadIDMismatch,
            .notificationAfterDelete, .payloadTooLarge, .sentAfterUnregistered,
        ]
        var seen: [FindingCode: Set<String>] = [:]
        for f in audit where shared.contains(f.code) && seen[f.code, default: []].count < 2 {
            guard let n = try reader.event(seq: f.seq)?.decode().notification else { continue }
            seen[f.code, default: []].insert(n.platform.rawValue)
        }
        for code in shared {
            #expect(seen[code] == ["ios", "android"], "\(code.rawValue) on \(seen[code] ?? [])")
        }
        let androidOnly: [FindingCode] = [.tooManyActions, .fcmNotificationMessage, .fcmInvalidData]
        for f in audit where androidOnly.contains(f.code) {
            #expect(try reader.event(seq: f.seq)?.decode().notification?.platform == .android, "\(f.code) #\(f.seq)")
        }
    }

    /// (a) Every audit finding with a task is in that task's history (or, for a
    /// delivery, in its notification's thread); (b) every finding of those histories is
    /// in the audit.
    private func checkTasksAndThreads(_ audit: [Finding], _ reader: StoreReader) throws {
        let auditKeys = Set(audit.map(AgreementFixtures.Key.init))
        #expect(auditKeys.count == audit.count, "the audit reports a (code, seq) twice")
        let byTask = Dictionary(grouping: audit.filter { $0.taskID != nil }, by: { $0.taskID! })
        #expect(!byTask.isEmpty)

        var threadReports: [String: ThreadReport?] = [:]
        func threadFindings(_ thread: String) throws -> [Finding]? {
            if threadReports[thread] == nil {
                threadReports[thread] = try reader.threadReport(thread, horizon: nil)
            }
            return threadReports[thread]!.map { $0.entries.flatMap(\.findings) }
        }

        var missingFromTask: [String] = []
        var missingFromThread: [String] = []
        var missingFromAudit: [String] = []
        var differentText: [String] = []
        for (task, findings) in byTask.sorted(by: { $0.key < $1.key }) {
            guard let report = try reader.taskReport(task, horizon: nil) else {
                missingFromTask.append("task \(task) has findings but no task report")
                continue
            }
            let history = report.history.flatMap(\.findings)
            let historyKeys = Dictionary(
                history.map { (AgreementFixtures.Key($0), $0) }, uniquingKeysWith: { a, _ in a })
            for f in findings {
                guard let stored = try reader.event(seq: f.seq) else {
                    missingFromTask.append("\(f.code.rawValue)@\(f.seq): no such event")
                    continue
                }
                if stored.type == .delivery {
                    // Deliveries are not in task history: look in the notification's thread.
                    let event = try stored.decode()
                    guard let ref = event.referencedNotificationID,
                        let thread = try AgreementFixtures.notificationThread(ref, reader)
                    else {
                        missingFromThread.append("\(f.code.rawValue)@\(f.seq): its notification has no thread")
                        continue
                    }
                    let inThread = try threadFindings(thread) ?? []
                    if let same = inThread.first(where: { AgreementFixtures.Key($0) == AgreementFixtures.Key(f) }) {
                        if same != f { differentText.append("thread \(thread): \(same) vs audit \(f)") }
                    } else {
                        missingFromThread.append("\(f.code.rawValue)@\(f.seq) (task \(task)) not in thread \(thread)")
                    }
                } else if let same = historyKeys[AgreementFixtures.Key(f)] {
                    if same != f { differentText.append("task \(task): \(same) vs audit \(f)") }
                } else {
                    missingFromTask.append("\(f.code.rawValue)@\(f.seq) not in task \(task)'s history")
                }
            }
            for f in history where !auditKeys.contains(AgreementFixtures.Key(f)) {
                missingFromAudit.append("task \(task): \(f.code.rawValue)@\(f.seq)")
            }
        }
        print("AgreementTests: \(byTask.count) task reports, \(threadReports.count) thread reports for deliveries")
        #expect(
            missingFromTask.count == 0,
            "\(missingFromTask.count) audit findings missing from task reports: \(missingFromTask.prefix(10))")
        #expect(
            missingFromThread.count == 0,
            "\(missingFromThread.count) delivery findings missing from thread reports: \(missingFromThread.prefix(10))")
        #expect(
            missingFromAudit.count == 0,
            "\(missingFromAudit.count) task-history findings missing from the audit: \(missingFromAudit.prefix(10))")
        #expect(
            differentText.count == 0, "\(differentText.count) findings read differently: \(differentText.prefix(5))")
    }

    /// (c) For the threads of the first 200 findings, the thread report's findings are
    /// the audit's findings of the thread's members, in the same order.
    private func checkThreadSample(_ audit: [Finding], _ reader: StoreReader) throws {
        var threads: [String] = []
        var seen = Set<String>()
        for f in audit.prefix(200) {
            for t in try AgreementFixtures.threads(of: f.seq, reader).sorted() where seen.insert(t).inserted {
                threads.append(t)
            }
        }
        #expect(threads.count >= 50, "only \(threads.count) threads in the sample")
        var sampledFindings = 0
        var mismatches: [String] = []
        for thread in threads {
            let report = try #require(
                try reader.threadReport(thread, horizon: nil), "thread \(thread)")
            let members = Set(report.entries.map(\.loaded.seq))
            let expected = audit.filter { members.contains($0.seq) }
            let actual = report.entries.flatMap(\.findings)
            sampledFindings += actual.count
            if actual != expected {
                mismatches.append(
                    "thread \(thread): " + AgreementFixtures.difference(actual, "thread", expected, "audit"))
            }
        }
        #expect(
            mismatches.count == 0,
            """
            \(mismatches.count) of \(threads.count) threads disagree with the audit: \
            \(mismatches.prefix(5).joined(separator: "; "))
            """
        )
        #expect(sampledFindings >= 200)
        print("AgreementTests: \(threads.count) sampled threads with \(sampledFindings) findings")
    }

    /// (e) An audit scoped with --task equals the whole-store audit of that task's events.
    private func checkScopedAudits(_ audit: [Finding], _ reader: StoreReader) throws {
        // A task for each code (a delivery's, an unregistered device's, a deleted task's…),
        // and one without findings.
        var tasks: [Int64] = []
        for code in FindingCode.allCases {
            if let t = audit.first(where: { $0.code == code && $0.taskID != nil })?.taskID, !tasks.contains(t) {
                tasks.append(t)
            }
        }
        let flagged = Set(audit.compactMap(\.taskID))
        var clean: Int64?
        try reader.forEachEvent { stored in
            if let t = try stored.decode().taskID, !flagged.contains(t) {
                clean = t
                return false
            }
            return true
        }
        if let clean { tasks.append(clean) }
        #expect(tasks.count >= 5, "tasks \(tasks)")
        print("AgreementTests: scoped audits of tasks \(tasks)")

        for task in tasks {
            var q = LogQuery()
            q.taskID = task
            var seqs = Set<UInt64>()
            try reader.log(q) {
                seqs.insert($0.seq)
                return true
            }
            #expect(!seqs.isEmpty, "task \(task) has no events")
            let expected = audit.filter { seqs.contains($0.seq) }
            let scoped = try reader.audit(q)
            let same = scoped == expected
            #expect(same, "task \(task): \(AgreementFixtures.difference(scoped, "scoped", expected, "whole-store"))")
            #expect(expected.allSatisfy { $0.taskID == task }, "task \(task): \(expected.filter { $0.taskID != task })")
        }
    }
}
