import Foundation
import Testing

/// `log` names the device of each event, so support can tell a user's phone from their
/// tablet when every push arrives twice.
@Suite("log shows the device")
struct LogDeviceTests {
    static let phone = "a1b2c3d4" + String(repeating: "0", count: 48) + "11112222"
    static let tablet = "f9e8d7c6" + String(repeating: "5", count: 48) + "33334444"

    /// A store with one user's two notifications, one to each of their devices, and a
    /// delivery without a device.
    static func store() throws -> TempDir {
        let dir = try TempDir()
        let input = try dir.write(
            "events.ndjson",
            lines: [
                Line.notification("n-phone", user: "u_two", device: phone, task: 1101, at: "2026-11-30T08:00:00Z"),
                Line.notification("n-tablet", user: "u_two", device: tablet, task: 1101, at: "2026-11-30T08:00:01Z"),
                Line.delivery("d-1", user: "u_two", notification: "n-phone", at: "2026-11-30T08:00:02Z"),
            ])
        let ingest = CLI.run(store: dir.store, ["ingest", input])
        guard ingest.status == 0 else { throw HarnessError("ingest failed: \(ingest)") }
        return dir
    }

    /// The masked forms `TokenMask` gives: the first four and last four characters.
    static let maskedPhone = "a1b2…2222"
    static let maskedTablet = "f9e8…4444"

    /// Checks the masked lines of `log --user u_two`.
    static func expectMasked(_ outcome: Outcome) {
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasSuffix(" · device \(maskedPhone)") == true, "\(outcome)")
        #expect(lines.dropFirst().first?.hasSuffix(" · device \(maskedTablet)") == true, "\(outcome)")
        #expect(lines.last?.contains("device") == false, "an event without a device names none: \(outcome)")
        #expect(!outcome.stdout.contains(phone) && !outcome.stdout.contains(tablet))
    }

    /// Checks the lines of `log --user u_two --show-tokens`.
    static func expectFull(_ outcome: Outcome) {
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasSuffix(" · device \(phone)") == true, "\(outcome)")
        #expect(lines.dropFirst().first?.hasSuffix(" · device \(tablet)") == true, "\(outcome)")
    }

    @Test("in-process, log shows two different masked devices and never a full token")
    func maskedInProcess() throws {
        let dir = try Self.store()
        Self.expectMasked(CLI.run(store: dir.store, ["log", "--user", "u_two"]))
    }

    @Test("in-process, log --show-tokens shows both full tokens, also as a global option")
    func fullInProcess() throws {
        let dir = try Self.store()
        Self.expectFull(CLI.run(store: dir.store, ["log", "--user", "u_two", "--show-tokens"]))
        Self.expectFull(CLI.run(["--show-tokens", "--store", dir.store, "log", "--user", "u_two"]))
    }

    @Test("through the real process, log masks the devices and --show-tokens shows them in full")
    func throughTheBinary() throws {
        let dir = try Self.store()
        Self.expectMasked(try Binary.run(["--store", dir.store, "log", "--user", "u_two"]))
        Self.expectFull(try Binary.run(["--store", dir.store, "log", "--user", "u_two", "--show-tokens"]))
    }

    @Test("a line without a device keeps its layout: it ends with the headline, as before")
    func noDeviceLayout() throws {
        let dir = try Self.store()
        let line = CLI.run(store: dir.store, ["log", "--type", "delivery"]).stdout
        #expect(line.hasPrefix("2026-11-30T08:00:02.000Z  #3     u_two      "), "\(line)")
        #expect(!line.contains(" · "), "\(line)")
    }
}
