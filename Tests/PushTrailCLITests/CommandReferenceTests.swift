import Foundation
import Testing

@testable import PushTrailCLI

/// docs/COMMANDS.md is written by hand for people; the declarations that generate help,
/// completions and the man page are the truth. These keep the two in step.
@Suite("docs/COMMANDS.md covers every command and option the tool declares")
struct CommandReferenceTests {
    static let reference: String = {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/COMMANDS.md"), encoding: .utf8)) ?? ""
    }()

    /// The part of the reference under `## name`, up to the next `## ` heading.
    static func section(_ name: String) -> String? {
        let lines = reference.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "## \(name)") else { return nil }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }

    @Test("each command has its section, which names each of its options")
    func everyOption() throws {
        #expect(!Self.reference.isEmpty, "docs/COMMANDS.md is missing")
        let global = GlobalOptions.list.map(\.name)
        for command in PushTrail.commands {
            let spec = command.spec
            let section = try #require(Self.section(spec.name), "no '## \(spec.name)' section")
            let log = try #require(Self.section("log"))
            for option in spec.options where !global.contains(option.name) {
                // The shared filters are described once, under log, and linked to.
                let shared = LogFilters.options.contains { $0.name == option.name } && section.contains("(#log)")
                let described = section.contains("--\(option.name)") || (shared && log.contains("--\(option.name)"))
                #expect(described, "'## \(spec.name)' does not describe --\(option.name)")
            }
        }
    }

    @Test("the global options and every exit status are described")
    func globalsAndStatuses() throws {
        let globals = try #require(Self.section("Global options"))
        for option in GlobalOptions.list { #expect(globals.contains("--\(option.name)"), "--\(option.name)") }
        let statuses = try #require(Self.section("Exit statuses"))
        for status in [
            ExitStatus.success, ExitStatus.notFound, ExitStatus.usage, ExitStatus.dataError, ExitStatus.ioError,
        ] {
            #expect(statuses.contains("| \(status) |") || statuses.contains("`\(status)`"), "exit status \(status)")
        }
    }
}
