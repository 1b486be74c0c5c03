import Foundation
import PushTrailModel
import PushTrailStore
import Testing

/// The hostile-input corpus of `Tests/Corpus/` (see its README.md) and the helpers that
/// run it through the built executable.
///
/// Each `NAME.ndjson` holds one hostile line per line and `NAME.reasons`, line for line,
/// text its rejection reason must contain. The tests put a good event before, between
/// and after the hostile lines, so hostile line k is input line 2k and every good line
/// is the neighbour of a bad one.
enum HostileFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let corpus = root.appendingPathComponent("Tests/Corpus").path
    static let regressions = root.appendingPathComponent("Fuzz/regressions").path

    /// Every corpus file of hostile lines (accepted.ndjson holds good ones).
    static let classes = [
        "json-syntax", "duplicate-keys", "utf8", "surrogates", "bom", "numbers", "nesting", "nul", "control", "rules",
    ]

    /// A wall-clock budget for one hostile line: the tool must not hang on any input.
    static let secondsPerHostileLine = 1.0

    /// One hostile line and what its rejection must say.
    struct Case: Sendable {
        /// `FILE:LINE` in the corpus, for failure messages.
        var origin: String
        var line: [UInt8]
        var reason: String
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw HarnessError("cannot read \(path)") }
        return Array(data)
    }

    /// The lines of `bytes`, each without its `\n` (a final line break ends the last line).
    static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        var out = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if out.last == [] { out.removeLast() }
        return out
    }

    static func cases(_ name: String) throws -> [Case] {
        let lines = lines(try read("\(corpus)/\(name).ndjson"))
        let reasons = self.lines(try read("\(corpus)/\(name).reasons")).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count == reasons.count else {
            throw HarnessError("\(name).ndjson has \(lines.count) lines but \(name).reasons has \(reasons.count)")
        }
        return zip(lines, reasons).enumerated().map {
            Case(origin: "\(name).ndjson:\($0.offset + 1)", line: $0.element.0, reason: $0.element.1)
        }
    }

    /// A valid event of each type in turn, with an id that names where it stands.
    static func good(_ tag: String, _ k: Int) -> String {
        let id = "good-\(tag)-\(k)"
        switch k % 3 {
        case 0: return Line.delivery(id, user: "u_good", notification: "n-\(k)")
        case 1: return Line.action(id, task: 1100 + k, user: "u_good")
        default: return Line.notification(id, user: "u_good", thread: "task-\(1100 + k)", task: 1100 + k)
        }
    }

    /// An input of `good, hostile₁, good, hostile₂, …, good`.
    struct Interleaved {
        var bytes: [UInt8] = []
        var goodIDs: [String] = []
        /// Input line number → the case on it.
        var hostile: [(number: Int, hostileCase: Case)] = []
    }

    static func interleave(_ cases: [Case], tag: String, terminator: [UInt8] = [0x0A]) -> Interleaved {
        var input = Interleaved()
        func addGood() {
            let k = input.goodIDs.count
            input.goodIDs.append("good-\(tag)-\(k)")
            input.bytes += Array(good(tag, k).utf8) + terminator
        }
        addGood()
        for c in cases {
            input.hostile.append((input.goodIDs.count * 2, c))
            input.bytes += c.line + terminator
            addGood()
        }
        return input
    }

    /// Runs the executable, timing it; a run past `timeout` seconds is killed and fails.
    static func timed(_ arguments: [String], timeout: Double) throws -> (Outcome, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try Binary.start(arguments, timeout: timeout).wait()
        let elapsed = clock.now - start
        return (outcome, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// The ids of the stored events, in timeline order, through `log --json`.
    static func storedIDs(_ store: String) throws -> [String] {
        let r = try Binary.run(["--store", store, "log", "--json"])
        guard r.status == 0 else { throw HarnessError("log --json failed: \(r)") }
        return try JSON.lines(r.stdout).map { $0["event"]?["id"]?.string ?? "?" }
    }

    /// The stderr lines, split on `\n` only (a `\r` inside one must not hide it).
    static func stderrLines(_ outcome: Outcome) -> [String] {
        lines(outcome.stderrBytes).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The C0 control characters in `text`, which a one-line message must not hold.
    static func controlCharacters(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0.value < 0x20 }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }

    /// Checks that stderr holds exactly one `pushtrail: FILE:LINE: reason` line per
    /// hostile line, each one line of plain text with the expected reason.
    static func expectRejections(
        _ outcome: Outcome, file: String, _ hostile: [(number: Int, hostileCase: Case)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let prefix = "pushtrail: \(file):"
        var reported: [Int: String] = [:]
        for line in stderrLines(outcome) {
            guard line.hasPrefix(prefix), let colon = line.dropFirst(prefix.count).firstIndex(of: ":"),
                let number = Int(line[line.index(line.startIndex, offsetBy: prefix.count)..<colon]),
                line[colon...].hasPrefix(": ")
            else {
                Issue.record(
                    "a stderr line without the 'pushtrail: FILE:LINE: ' prefix: \(line.debugDescription)",
                    sourceLocation: sourceLocation)
                continue
            }
            let reason = String(line[line.index(colon, offsetBy: 2)...])
            #expect(reported[number] == nil, "line \(number) reported twice", sourceLocation: sourceLocation)
            reported[number] = reason
        }
        for (number, c) in hostile {
            guard let reason = reported.removeValue(forKey: number) else {
                Issue.record("\(c.origin) (input line \(number)) was not reported", sourceLocation: sourceLocation)
                continue
            }
            #expect(
                !reason.trimmingCharacters(in: .whitespaces).isEmpty, "\(c.origin): empty reason",
                sourceLocation: sourceLocation)
            #expect(
                c.reason.isEmpty || reason.contains(c.reason),
                """
                \(c.origin) (input line \(number)): reason should contain \(c.reason.debugDescription), \
                got \(reason.debugDescription)
                """,
                sourceLocation: sourceLocation)
            #expect(
                controlCharacters(reason).isEmpty,
                """
                \(c.origin) (input line \(number)): the reason holds control characters \(controlCharacters(reason)): \
                \(reason.debugDescription)
                """,
                sourceLocation: sourceLocation)
        }
        #expect(
            reported.isEmpty, "good lines were reported as bad: \(reported.sorted { $0.key < $1.key })",
            sourceLocation: sourceLocation)
    }

    /// Puts `line` between two good events, ingests it, and checks that it is rejected
    /// with `reason`, the good events stored and the run within budget. Returns the
    /// wall-clock seconds.
    @discardableResult
    static func ingestOne(
        _ label: String, _ line: [UInt8], reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Double {
        let dir = try TempDir()
        let input = interleave([Case(origin: label, line: line, reason: reason)], tag: "one")
        let path = try dir.write("input.ndjson", bytes: input.bytes)
        let (ingest, seconds) = try timed(["--store", dir.store, "ingest", path], timeout: 30)
        #expect(
            ingest.status == 65, "\(label): \(ingest.status) \(ingest.stderr.prefix(500))",
            sourceLocation: sourceLocation)
        expectRejections(ingest, file: path, input.hostile, sourceLocation: sourceLocation)
        #expect(try storedIDs(dir.store) == input.goodIDs, "\(label)", sourceLocation: sourceLocation)
        #expect(seconds < secondsPerHostileLine, "\(label): ingest took \(seconds) s", sourceLocation: sourceLocation)
        print("HostileInputTests: \(label): \(line.count) bytes rejected in \(String(format: "%.3f", seconds)) s")
        return seconds
    }

    /// The inputs libFuzzer found, kept in Fuzz/regressions/ as TARGET-what.ext.
    static func regressionFiles(_ target: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: regressions)) ?? [])
            .filter { $0.hasPrefix(target + "-") }.sorted()
    }
}

/// How lines end in an input file.
enum LineEnding: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case lf, crlf
    var bytes: [UInt8] { self == .lf ? [0x0A] : [0x0D, 0x0A] }
    var testDescription: String { rawValue.uppercased() }
}

@Suite("Hostile input: every malformed line is rejected cleanly, every good one stored")
struct HostileInputTests {
    @Test(
        "every hostile line of a corpus file gets FILE:LINE and its reason; the good lines around them are stored",
        arguments: HostileFixtures.classes, LineEnding.allCases)
    func corpusFile(_ name: String, _ ending: LineEnding) throws {
        // As docs/DESIGN.md reads the input rules: a CRLF line is read as an LF line, so
        // with CRLF endings the same lines are rejected and the good ones stored without
        // their \r; --rejects keeps each rejected line's original bytes, \r included.
        let cases = try HostileFixtures.cases(name)
        let dir = try TempDir()
        let input = HostileFixtures.interleave(cases, tag: name, terminator: ending.bytes)
        let path = try dir.write("\(name).ndjson", bytes: input.bytes)
        let rejects = dir.file("rejects.ndjson")
        let budget = HostileFixtures.secondsPerHostileLine * Double(cases.count)

        let (ingest, seconds) = try HostileFixtures.timed(
            ["--store", dir.store, "ingest", "--rejects", rejects, path], timeout: max(budget, 10))
        print(
            "HostileInputTests: \(name).ndjson (\(ending.testDescription)): \(cases.count) hostile + "
                + "\(input.goodIDs.count) good "
                + "lines ingested in \(String(format: "%.3f", seconds)) s")

        #expect(ingest.status == 65, "\(ingest)")
        HostileFixtures.expectRejections(ingest, file: path, input.hostile)
        let read = input.goodIDs.count + cases.count
        #expect(ingest.stdout.contains("appended \(input.goodIDs.count) of \(read) events"), "\(ingest.stdout)")
        #expect(seconds < budget, "ingesting \(cases.count) hostile lines took \(seconds) s")

        #expect(try HostileFixtures.storedIDs(dir.store) == input.goodIDs)
        let raw = try Binary.run(["--store", dir.store, "log", "--raw"])
        #expect(raw.status == 0)
        #expect(!raw.stdoutBytes.contains(0x0D), "a stored event kept its \\r")
        let expected = try input.goodIDs.indices.map { try JSON.parse(HostileFixtures.good(name, $0)) }
        #expect(try JSON.lines(raw.stdout) == expected)

        let written = try HostileFixtures.read(rejects)
        #expect(
            written == cases.flatMap { $0.line + ending.bytes }, "--rejects must hold each rejected line byte for byte")
        let verify = try Binary.run(["--store", dir.store, "verify"])
        #expect(verify.status == 0, "\(verify)")
    }

    @Test(
        "odd but valid events (4-byte UTF-8, escapes, -0, 1e-999, 64 levels, U+FEFF, a CRLF line) are stored unchanged"
    )
    func acceptedCorpus() throws {
        let dir = try TempDir()
        let path = "\(HostileFixtures.corpus)/accepted.ndjson"
        let lines = HostileFixtures.lines(try HostileFixtures.read(path))
        let (ingest, seconds) = try HostileFixtures.timed(
            ["--store", dir.store, "ingest", "--json", path], timeout: 30)
        print(
            "HostileInputTests: accepted.ndjson: \(lines.count) lines ingested in \(String(format: "%.3f", seconds)) s")
        #expect(ingest.status == 0, "\(ingest)")
        #expect(ingest.stderr.isEmpty, "\(ingest.stderr)")
        #expect(try ingest.json()["appended"]?.int == lines.count)

        let log = try Binary.run(["--store", dir.store, "log", "--json"])
        let stored = Dictionary(
            uniqueKeysWithValues: try JSON.lines(log.stdout).map {
                ($0["event"]?["id"]?.string ?? "?", $0["event"] ?? .null)
            })
        for (k, line) in lines.enumerated() {
            let id = "accepted-\(k + 1)"
            let event = try #require(stored[id], "accepted.ndjson:\(k + 1) was not stored")
            let content = line.last == 0x0D ? Array(line.dropLast()) : line
            let original = try JSON.parse(content)
            #expect(event == original, "accepted.ndjson:\(k + 1) is not stored as it came")
        }
    }

    @Test("huge lines made at test time (100,000-deep nesting, 70 KB lines, 17 MB) are rejected, each within a second")
    func generatedHugeLines() throws {
        func text(_ s: String) -> [UInt8] { Array(s.utf8) }
        func run(_ s: String, _ count: Int) -> [UInt8] { text(String(repeating: s, count: count)) }
        func padded(_ size: Int) -> [UInt8] {
            let bare = Line.delivery("bad", extra: ",\"pad\":\"\"")
            return text(
                Line.delivery(
                    "bad", extra: ",\"pad\":\"" + String(repeating: "x", count: size - bare.utf8.count) + "\""))
        }
        let limit = "over the limit of 65536 (64 KiB)"
        let nesting = "nesting deeper than 64 levels"
        let cases: [(String, [UInt8], String)] = [
            ("100,000-deep arrays", run("[", 100_000) + run("]", 100_000), limit),
            ("100,000 unclosed brackets", run("[", 100_000), limit),
            ("100,000-deep objects", run("{\"a\":", 100_000) + text("1") + run("}", 100_000), limit),
            ("32,000-deep arrays within 64 KiB", run("[", 32_000) + run("]", 32_000), nesting),
            ("13,000 unclosed objects within 64 KiB", run("{\"a\":", 13_000), nesting),
            ("a 70 KB event", padded(70_000), limit),
            ("a 64 KiB + 1 event", padded(65_537), limit),
            ("a 70 KB run of x", run("x", 70_000), limit),
            ("a 70 KB run of NULs", run("\u{0}", 70_000), limit),
            ("a 70 KB run of 0xFF", [UInt8](repeating: 0xFF, count: 70_000), limit),
            ("a 70 KB number", text("{\"type\":\"delivery\",\"status\":") + run("9", 70_000) + text("}"), limit),
            ("a 64,000-digit number", text("{\"n\":") + run("9", 64_000) + text("}"), "too large"),
            ("a 64,000-digit exponent", text("{\"n\":1e") + run("9", 64_000) + text("}"), "too large"),
            (
                "10,000 lone surrogate escapes", text("{\"s\":\"") + run("\\uDC00", 10_000) + text("\"}"),
                "lone low surrogate"
            ),
            (
                "5,000 keys with one twice", text("{" + (0..<5_000).map { "\"k\($0)\":0," }.joined() + "\"k4999\":1}"),
                "duplicate key \"k4999\""
            ),
            ("a 17 MB line", text("{\"pad\":\"") + run("y", 17 << 20) + text("\"}"), "far over the limit"),
        ]
        var total = 0.0
        for (label, line, reason) in cases {
            total += try HostileFixtures.ingestOne(label, line, reason: reason)
        }
        print("HostileInputTests: \(cases.count) generated huge lines: \(String(format: "%.3f", total)) s in all")
    }

    @Test("big lines within the limits (64 KiB of escapes, 5,000 keys, 64 levels) are stored within a second")
    func generatedBigGoodLines() throws {
        let dir = try TempDir()
        let lines = [
            Line.delivery(
                "big-escapes", extra: ",\"pad\":\"" + String(repeating: "\\uD83D\\uDE00", count: 5_400) + "\""),
            Line.delivery("big-keys", extra: "," + (0..<5_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",")),
            Line.delivery(
                "big-deep", extra: ",\"x\":" + String(repeating: "[", count: 63) + String(repeating: "]", count: 63)),
            Line.delivery(
                "big-numbers",
                extra: ",\"n\":[" + Array(repeating: "-1.7976931348623157e308", count: 2_600).joined(separator: ",")
                    + "]"),
        ]
        for line in lines { #expect(line.utf8.count <= 65_536) }
        let path = try dir.write("big.ndjson", lines: lines)
        let (ingest, seconds) = try HostileFixtures.timed(["--store", dir.store, "ingest", path], timeout: 30)
        print("HostileInputTests: \(lines.count) big good lines ingested in \(String(format: "%.3f", seconds)) s")
        #expect(ingest.status == 0, "\(ingest)")
        #expect(try HostileFixtures.storedIDs(dir.store) == ["big-escapes", "big-keys", "big-deep", "big-numbers"])
        #expect(seconds < Double(lines.count) * HostileFixtures.secondsPerHostileLine)
    }

    @Test(
        "--strict with one hostile line among good ones stores nothing of the run", arguments: HostileFixtures.classes)
    func strict(_ name: String) throws {
        let cases = try HostileFixtures.cases(name)
        let hostile = cases[cases.count / 2]
        let dir = try TempDir()
        let before = try dir.write("before.ndjson", lines: [Line.delivery("stored-before")])
        #expect(try Binary.run(["--store", dir.store, "ingest", before]).status == 0)

        let good = (0..<10).map { HostileFixtures.good("strict", $0) }
        let bytes =
            good[..<5].flatMap { Array($0.utf8) + [0x0A] } + hostile.line + [0x0A]
            + good[5...].flatMap { Array($0.utf8) + [0x0A] }
        let path = try dir.write("strict.ndjson", bytes: bytes)
        let (ingest, seconds) = try HostileFixtures.timed(
            ["--store", dir.store, "ingest", "--strict", path], timeout: 10)
        #expect(ingest.status == 65, "\(ingest)")
        HostileFixtures.expectRejections(ingest, file: path, [(6, hostile)])
        #expect(ingest.stdout.contains("nothing from this run was stored"), "\(ingest.stdout)")
        #expect(try HostileFixtures.storedIDs(dir.store) == ["stored-before"], "\(hostile.origin)")
        #expect(seconds < HostileFixtures.secondsPerHostileLine)
        #expect(try Binary.run(["--store", dir.store, "verify"]).status == 0)
    }

    @Test(
        "a garbage time for --since is a usage error: exit 2, one line with a valid form, no crash",
        arguments: [
            "", "-", "--", "@", "@-1", "@+1", "@ 1", "@1.5", "@18446744073709551616", "@\u{FF11}", "1e999", "-1e999",
            "now ",
            "NOW", "Now", "-2", "-h", "-2x", "-2H", "--2h", "+2h", "-2.5h", "- 2h", "-9223372036854775807d",
            "-99999999999999999999s",
            "-\u{0662}h", "2026-13-01", "2026-02-30", "2026-11-29T25:00:00Z", "2026-11-29T10:00:00",
            "2026-11-29 10:00:00Z",
            "∞", "😀", "\u{FEFF}now", String(repeating: "9", count: 10_240), String(repeating: "@", count: 10_240),
            "\u{01}", "\t", "\u{1B}[2J", "\u{1B}]0;title\u{07}", "\r", "now\r", "a\nb", "\u{7F}",
        ])
    func garbageTime(_ text: String) throws {
        let dir = try TempDir()
        let input = try dir.write("one.ndjson", lines: [Line.delivery("one")])
        #expect(try Binary.run(["--store", dir.store, "ingest", input]).status == 0)

        let r = try Binary.run(["--store", dir.store, "log", "--since", text])
        #expect(r.status == 2, "\(text.debugDescription): \(r)")
        #expect(r.stdout.isEmpty)
        let lines = HostileFixtures.stderrLines(r)
        let first = try #require(lines.first, "no error for \(text.debugDescription)")
        #expect(first.hasPrefix("pushtrail log: --since: "), "\(first.debugDescription)")
        #expect(first.contains(TimeExpression.examples), "the error should show valid forms: \(first.debugDescription)")
        // One error line, plus at most the pointer to --help that a usage error may add.
        #expect(
            lines.count <= 2 && lines.dropFirst().allSatisfy { $0.contains("--help") },
            "\(text.debugDescription): \(lines)")
        #expect(
            HostileFixtures.controlCharacters(r.stderr.replacingOccurrences(of: "\n", with: "")).isEmpty,
            """
            the error echoes control characters \(HostileFixtures.controlCharacters(r.stderr)): \
            \(r.stderr.debugDescription)
            """
        )
    }

    @Test("garbage times for --until, --at and import --at are usage errors too")
    func garbageTimeElsewhere() throws {
        let dir = try TempDir()
        let input = try dir.write("one.ndjson", lines: [Line.notification("n-1", thread: "task-1", task: 1)])
        #expect(try Binary.run(["--store", dir.store, "ingest", input]).status == 0)
        let apns = try Samples.apnsFiles()[0]
        for (argv, option) in [
            (["log", "--until", "@-1"], "--until"), (["log", "--until=1e999"], "--until"),
            (["task", "1", "--at", "-"], "--at"), (["thread", "task-1", "--at", "@"], "--at"),
            (["export", "--task", "1", "--at", "1e999", "--bundle", "b", "-o", "-"], "--at"),
            (["import", apns, "--user", "u", "--at", "@3"], "--at"),
            (["import", apns, "--user", "u", "--at", "yesterday"], "--at"),
        ] {
            let r = try Binary.run(["--store", dir.store] + argv)
            #expect(r.status == 2, "\(argv): \(r)")
            let first = HostileFixtures.stderrLines(r).first ?? ""
            #expect(first.contains(option) && first.contains("e.g."), "\(argv): \(first)")
        }
        #expect(try HostileFixtures.storedIDs(dir.store) == ["n-1"])
    }

    @Test("mangled .apns files are each named with a reason, exit 65, and the good file beside them is stored")
    func mangledAPNS() throws {
        let dir = try TempDir()
        let listing = "\(HostileFixtures.corpus)/apns/reasons.txt"
        let expected: [(path: String, reason: String)] = HostileFixtures.lines(try HostileFixtures.read(listing)).map {
            let fields = String(decoding: $0, as: UTF8.self).split(separator: "\t", maxSplits: 1).map(String.init)
            return ("\(HostileFixtures.corpus)/apns/\(fields[0])", fields[1])
        }
        let brackets = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deep = try dir.write("deep.apns", bytes: Array(brackets.utf8))
        let deepPayload = try dir.write("deep-payload.apns", bytes: Array(("{\"aps\":{},\"x\":" + brackets + "}").utf8))
        let bad = expected + [(deep, "nesting deeper than 64 levels"), (deepPayload, "nesting deeper than 64 levels")]
        let good = try Samples.apnsFiles()[0]

        let (r, seconds) = try HostileFixtures.timed(
            ["--store", dir.store, "import", "--user", "u_apns", "--at", "2026-11-29T10:00:00Z"] + bad.map(\.path) + [
                good
            ],
            timeout: 30)
        print("HostileInputTests: \(bad.count) mangled .apns files imported in \(String(format: "%.3f", seconds)) s")
        #expect(r.status == 65, "\(r)")
        let lines = HostileFixtures.stderrLines(r)
        #expect(lines.count == bad.count, "\(lines)")
        for (path, reason) in bad {
            let line = lines.filter { $0.hasPrefix("pushtrail: \(path): ") }
            #expect(line.count == 1, "\(path) should be named once: \(lines)")
            #expect(
                line.first?.contains(reason) == true,
                "\(path): reason should contain \(reason.debugDescription): \(line)")
            #expect(HostileFixtures.controlCharacters(line.first ?? "").isEmpty)
        }
        #expect(r.stdout.contains("\(good): notification"), "\(r.stdout)")
        let stats = try CLI.stats(dir.store)
        #expect(stats["events"]?.int == 1)
        #expect(stats["by_type"]?["notification"]?.int == 1)
        #expect(seconds < Double(bad.count) * HostileFixtures.secondsPerHostileLine)
    }

    @Test("an .apns file over 1 MiB is named and skipped; the good files after it are still imported")
    func oversizedAPNS() throws {
        let dir = try TempDir()
        let big = try dir.write(
            "big.apns", bytes: Array(("{\"aps\":{},\"pad\":\"" + String(repeating: "x", count: 1_100_000) + "\"}").utf8)
        )
        let good = try Samples.apnsFiles()[0]
        let (r, seconds) = try HostileFixtures.timed(
            ["--store", dir.store, "import", "--user", "u_apns", "--at", "2026-11-29T10:00:00Z", big, good], timeout: 30
        )
        #expect(r.status == 65, "\(r)")
        #expect(HostileFixtures.stderrLines(r).count == 1, "\(r)")
        #expect(
            r.stderr.hasPrefix("pushtrail: \(big): "),
            "the file should be named as 'pushtrail: FILE: reason': \(r.stderr)")
        #expect(
            try CLI.stats(dir.store)["events"]?.int == 1, "the good file after the oversized one was not imported: \(r)"
        )
        #expect(seconds < 2 * HostileFixtures.secondsPerHostileLine)
    }

    @Test(
        "every input libFuzzer found in the event decoder is rejected cleanly or stored",
        arguments: HostileFixtures.regressionFiles("EventDecoderFuzz"))
    func eventDecoderRegression(_ name: String) throws {
        let bytes = try HostileFixtures.read("\(HostileFixtures.regressions)/\(name)")
        // ingest reads lines: each line of the input is one case.
        for (k, line) in HostileFixtures.lines(bytes).enumerated()
        where !line.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) {
            let dir = try TempDir()
            let input = HostileFixtures.interleave(
                [HostileFixtures.Case(origin: "\(name):\(k + 1)", line: line, reason: "")], tag: "fuzz")
            let path = try dir.write("input.ndjson", bytes: input.bytes)
            let (r, seconds) = try HostileFixtures.timed(["--store", dir.store, "ingest", path], timeout: 10)
            #expect(seconds < HostileFixtures.secondsPerHostileLine)
            if r.status == 0 {
                #expect(try HostileFixtures.storedIDs(dir.store).count == 3, "\(name):\(k + 1)")
            } else {
                #expect(r.status == 65, "\(name):\(k + 1): \(r)")
                HostileFixtures.expectRejections(r, file: path, input.hostile)
                #expect(try HostileFixtures.storedIDs(dir.store) == input.goodIDs)
            }
        }
    }

    @Test(
        "every input libFuzzer found in the time parser is a valid time or a one-line usage error",
        arguments: HostileFixtures.regressionFiles("TimeExpressionFuzz"))
    func timeExpressionRegression(_ name: String) throws {
        let bytes = try HostileFixtures.read("\(HostileFixtures.regressions)/\(name)")
        // An argument cannot hold NUL; the rest goes to --since as it is.
        let text = String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self)
        let dir = try TempDir()
        let input = try dir.write("one.ndjson", lines: [Line.delivery("one")])
        #expect(try Binary.run(["--store", dir.store, "ingest", input]).status == 0)
        let r = try Binary.run(["--store", dir.store, "log", "--since", text])
        #expect(r.status == 0 || r.status == 2, "\(r)")
        if r.status == 2 {
            let lines = HostileFixtures.stderrLines(r)
            #expect(lines.first?.contains(TimeExpression.examples) == true, "\(lines)")
            #expect(lines.count <= 2, "\(lines)")
            #expect(
                HostileFixtures.controlCharacters(r.stderr.replacingOccurrences(of: "\n", with: "")).isEmpty,
                "\(r.stderr.debugDescription)")
        }
    }

    @Test("the corpus is complete and small: every file has its reasons, under 1 MB in all")
    func corpusIsComplete() throws {
        let fm = FileManager.default
        let names = try fm.contentsOfDirectory(atPath: HostileFixtures.corpus)
        let ndjson = Set(names.filter { $0.hasSuffix(".ndjson") }.map { String($0.dropLast(7)) })
        #expect(ndjson == Set(HostileFixtures.classes + ["accepted"]), "a corpus file is not run by any test")
        for name in HostileFixtures.classes {
            let cases = try HostileFixtures.cases(name)
            #expect(!cases.isEmpty)
            for c in cases {
                #expect(!c.reason.isEmpty, "\(c.origin) has no expected reason")
                #expect(
                    !c.line.allSatisfy { [0x20, 0x09, 0x0D].contains($0) }, "\(c.origin) is blank: ingest skips it")
            }
        }
        var total = 0
        for directory in [HostileFixtures.corpus, HostileFixtures.corpus + "/apns", HostileFixtures.regressions] {
            for name in try fm.contentsOfDirectory(atPath: directory) {
                total += (try fm.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0
            }
        }
        #expect(total < 1_000_000, "the committed corpus is \(total) bytes")
    }
}
