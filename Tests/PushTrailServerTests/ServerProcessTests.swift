import Foundation
import Testing

/// The `pushtrail-server` executable as an operator runs it: it says where it listens,
/// refuses what it must, and stops cleanly on SIGTERM.
@Suite("pushtrail-server: the process")
struct ServerProcessTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The built server executable.
    static func executable() throws -> String { try built("pushtrail-server") }

    /// The built executable `product` (`.build/debug`).
    static func built(_ product: String) throws -> String {
        let build = root.appendingPathComponent(".build/debug/\(product)").path
        guard FileManager.default.isExecutableFile(atPath: build) else {
            throw Failure(description: "no \(build): build it with swift build --product \(product)")
        }
        return build
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Ingests the sample events into a new store at `dir` with the built CLI; its exit status.
    static func sampleStore(_ dir: String) throws -> Int32 {
        let ingest = Process()
        ingest.executableURL = root.appendingPathComponent(".build/debug/pushtrail")
        ingest.arguments = ["--store", dir, "ingest", root.path + "/Samples/events.ndjson"]
        ingest.standardError = FileHandle.nullDevice
        try ingest.run()
        ingest.waitUntilExit()
        return ingest.terminationStatus
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try executable())
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        try p.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("a non-loopback --listen without tokens is a usage error; a missing store is exit 74; --help")
    func refusals() throws {
        let dir = NSTemporaryDirectory() + "pushtrail-serve-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try Self.sampleStore(dir) == 0)
        let open = try Self.run(["--store", dir, "--listen", "0.0.0.0:8080"])
        #expect(open.status == 2 && open.stderr.contains("not a loopback address"), "\(open)")
        let half = try Self.run(["--store", dir, "--listen", "127.0.0.1:0", "--tls-cert", "/dev/null"])
        #expect(half.status == 2 && half.stderr.contains("go together"), "\(half)")
        let bad = try Self.run(["--listen", "localhost"])
        #expect(bad.status == 2 && bad.stderr.contains("--listen takes ADDR:PORT"), "\(bad)")
        let missing = try Self.run(["--store", "/nonexistent/store", "--listen", "127.0.0.1:0"])
        #expect(missing.status == 74, "\(missing)")
        #expect(try Self.run(["--help"]).status == 0)
        #expect(try Self.run(["--bogus"]).status == 2)
    }

    @Test("it says its port, answers /healthz, and exits 0 on SIGTERM")
    func lifecycle() throws {
        let dir = NSTemporaryDirectory() + "pushtrail-serve-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try Self.sampleStore(dir) == 0)

        let server = Process()
        server.executableURL = URL(fileURLWithPath: try Self.executable())
        server.arguments = ["--store", dir, "--listen", "127.0.0.1:0"]
        let err = Pipe()
        server.standardError = err
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        // The first line names the port the system chose.
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        while !text.contains("\n"), Date() < deadline {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let port = text.split(separator: ":").dropFirst(3).first.flatMap { Int($0.prefix { $0.isNumber }) }
        let found = try #require(port, "no port in \(text)")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-s", "--max-time", "10", "http://127.0.0.1:\(found)/healthz"]
        let out = Pipe()
        curl.standardOutput = out
        try curl.run()
        let body = out.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        #expect(String(decoding: body, as: UTF8.self) == "ok\n")
        server.terminate()  // SIGTERM
        server.waitUntilExit()
        #expect(server.terminationReason == .exit && server.terminationStatus == 0)
        let rest = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("GET /healthz 200 3 "), "\(rest)")
        #expect(rest.contains("stopping"), "\(rest)")
    }
}
