import Foundation
import PushTrailModel
import PushTrailStore
import Testing

@testable import PushTrailCLI

@Suite("terminal layout and relative times")
struct TerminalTests {
    /// Runs a command with stdout as a terminal of `columns` columns (or a pipe).
    static func run(_ store: String, _ argv: [String], columns: Int?, environment: [String: String] = [:]) -> Outcome {
        let out = PushTrailCLI.OutputStream(capturingAsTerminal: columns != nil, columns: columns)
        let err = PushTrailCLI.OutputStream()
        let context = Context(stdout: out, stderr: err, environment: environment, clock: { CLI.now })
        let status = PushTrail.main(["--store", store] + argv, context: context)
        return Outcome(status: status, stdoutBytes: out.captured, stderrBytes: err.captured)
    }

    static func sampleStore() throws -> TempDir {
        let dir = try TempDir()
        let r = CLI.run(store: dir.store, ["ingest", Samples.events])
        guard r.status == 0 else { throw HarnessError("ingest failed: \(r)") }
        return dir
    }

    @Test("truncation counts visible columns, keeps escapes and resets the colour")
    func truncate() {
        #expect(Terminal.truncate("abcdef", to: 4) == "abc…")
        #expect(Terminal.truncate("abcd", to: 4) == "abcd")
        let styled = "\u{1B}[1mbold\u{1B}[0m and more"
        #expect(Terminal.visibleWidth(styled) == 13)
        #expect(Terminal.truncate(styled, to: 6) == "\u{1B}[1mbold\u{1B}[0m …\u{1B}[0m")
        #expect(Terminal.visibleWidth("漢字ab") == 6)
        #expect(Terminal.truncate("漢字漢字", to: 5) == "漢字…")
    }

    @Test("one line: C0, DEL and C1 controls become ␣; anything else, © included, is kept")
    func oneLine() {
        #expect(Render.oneLine("a\nb\u{85}c\u{7F}d\u{1B}[31m") == "a␣b␣c␣d␣[31m")
        #expect(Render.oneLine("Due: © 2026 — ✓ Mow") == "Due: © 2026 — ✓ Mow")
        #expect(Render.oneLine("") == "")
    }

    @Test("wrapping breaks at spaces with a hanging indent and keeps long words whole")
    func wrap() {
        #expect(Terminal.wrap("one two three four", width: 9, indent: "  ") == ["one two", "  three", "  four"])
        #expect(Terminal.wrap("a 0123456789abc b", width: 6, indent: " ") == ["a", " 0123456789abc", " b"])
        #expect(Terminal.wrap("short", width: 80, indent: "    ") == ["short"])
    }

    @Test("on a terminal, timeline lines fit its width; piped, they stay whole")
    func width() throws {
        let dir = try Self.sampleStore()
        for argv in [["thread", "task-1109"], ["task", "1109"], ["log", "--user", "u_ben"]] {
            let narrow = Self.run(dir.store, argv + ["--no-color"], columns: 60)
            #expect(narrow.status == 0)
            let lines = narrow.stdout.split(separator: "\n")
            #expect(lines.allSatisfy { Terminal.visibleWidth(String($0)) <= 60 }, "\(argv)")
            #expect(lines.contains { $0.hasSuffix("…") }, "\(argv)")
            let piped = Self.run(dir.store, argv, columns: nil)
            #expect(piped.stdout.split(separator: "\n").contains { $0.count > 60 })
            #expect(!piped.stdout.contains("\u{1B}["))
        }
        // Findings wrap rather than lose words.
        let audit = Self.run(dir.store, ["audit", "--no-color"], columns: 70)
        #expect(
            audit.stdout.split(separator: "\n").allSatisfy {
                Terminal.visibleWidth(String($0)) <= 70 || !$0.contains(" ")
            })
        #expect(
            audit.stdout.replacingOccurrences(of: "\n        ", with: " ").contains(
                "which was cancelled at 2026-11-16T20:00:00.981Z by action act_0030"))
    }

    @Test("colour only on a terminal and never with NO_COLOR")
    func colour() throws {
        let dir = try Self.sampleStore()
        #expect(Self.run(dir.store, ["thread", "task-1109"], columns: 200).stdout.contains("\u{1B}[1m"))
        #expect(
            !Self.run(dir.store, ["thread", "task-1109"], columns: 200, environment: ["NO_COLOR": "1"]).stdout.contains(
                "\u{1B}["))
    }

    @Test("thread and task show times relative to the last button pressed, or to --relative-to")
    func relative() throws {
        let dir = try Self.sampleStore()
        let thread = Self.run(dir.store, ["thread", "task-1109"], columns: nil).stdout
        #expect(thread.contains("times relative to the complete #133"))
        // The TASK_CANCELLED notification, 1 day 12 hours before Ben's rejected complete.
        #expect(thread.contains("      1 day 12 hours before the complete · id 7ee7b766-1555-4454-be79-958f8382bafe"))
        #expect(thread.contains("      ← the complete · id act_0033"))

        let task = Self.run(dir.store, ["task", "1102", "--relative-to", "act_0013"], columns: nil)
        #expect(task.status == 0)
        #expect(task.stdout.contains("times relative to the complete #61"))
        #expect(task.stdout.contains("4 days 8 hours before the complete · id 0d7a0fbb"))
        #expect(task.stdout.contains("15 hours 18 minutes after the complete · id 9d52bfc3"))
        #expect(Self.run(dir.store, ["task", "1102", "--relative-to", "@61"], columns: nil).stdout == task.stdout)

        let wrong = Self.run(dir.store, ["task", "1102", "--relative-to", "act_0033"], columns: nil)
        #expect(wrong.status == 2 && wrong.stdout.isEmpty)
        #expect(wrong.stderr.contains("--relative-to act_0033 is not an event of this timeline"))
    }
}
