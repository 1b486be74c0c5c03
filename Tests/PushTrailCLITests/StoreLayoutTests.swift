import Foundation
import Testing

/// docs/STORE.md promises that LMDB's own tools and that page are enough to read a
/// store; these tests hold the page to the store a real ingest makes.
@Suite("Store layout: docs/STORE.md against mdb_stat and mdb_dump")
struct StoreLayoutTests {
    /// The database names in the table under "## Databases" of docs/STORE.md.
    static func documentedDatabases() throws -> Set<String> {
        let doc = try String(contentsOfFile: Samples.directory + "/../docs/STORE.md", encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## Databases").dropFirst().first)
        var names = Set<String>()
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("### ") }) where line.hasPrefix("| `")
        {
            let name = line.dropFirst(3).prefix { $0 != "`" }
            names.insert(String(name))
        }
        return names
    }

    static func sampleStore() throws -> (TempDir, String) {
        let dir = try TempDir()
        let store = dir.file("store")
        let outcome = CLI.run(store: store, ["ingest", Samples.events])
        #expect(outcome.status == 0, "\(outcome)")
        return (dir, store)
    }

    @Test("mdb_stat -a lists exactly the databases docs/STORE.md describes")
    func databasesMatchTheDocs() throws {
        let documented = try Self.documentedDatabases()
        #expect(documented.count >= 8, "the table should be found: \(documented)")
        let (dir, store) = try Self.sampleStore()
        _ = dir
        let stat = try Tool.output("mdb_stat", ["-a", store])
        let listed = Set(
            stat.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("Status of "), line != "Status of Main DB" else { return nil }
                return String(line.dropFirst("Status of ".count))
            })
        #expect(listed == documented, "mdb_stat: \(listed.sorted()); docs: \(documented.sorted())")
    }

    @Test("mdb_dump shows the meta records and an event record as the docs lay them out")
    func recordsMatchTheDocs() throws {
        let (dir, store) = try Self.sampleStore()
        _ = dir
        let meta = try Tool.output("mdb_dump", ["-s", "meta", store])
        // Keys and values in hex, one per line after the header.
        let body = meta.components(separatedBy: "HEADER=END\n").last ?? ""
        let lines = body.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            $0 != "DATA=END"
        }
        var records: [String: String] = [:]
        for i in stride(from: 0, to: lines.count - 1, by: 2) {
            let key = String(decoding: hexBytes(lines[i]), as: UTF8.self)
            records[key] = lines[i + 1]
        }
        #expect(records["format"] == "00000001")
        let head = try CLI.head(store)
        let headRecord = try #require(records["head"])
        // head = seq (8 bytes BE) ‖ SHA-256 (32 bytes)
        #expect(headRecord.count == 80)
        #expect(UInt64(headRecord.prefix(16), radix: 16).map(Int.init) == head["seq"]?.int)
        #expect(String(headRecord.dropFirst(16)) == head["hash"]?.string)

        // The event at seq 1: a 49-byte header, then the JSON exactly as ingested.
        let events = try Tool.output("mdb_dump", ["-s", "events", store])
        let eventLines = (events.components(separatedBy: "HEADER=END\n").last ?? "").split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(eventLines[0] == "0000000000000001")
        let value = hexBytes(eventLines[1])
        let firstLine = try #require(
            try String(contentsOfFile: Samples.events, encoding: .utf8).split(separator: "\n").first)
        #expect(Array(value.dropFirst(49)) == Array(firstLine.utf8))
        #expect(value[0] == 1, "type byte: 1 = notification")
        let show = try #require(try CLI.show(store, "@1"))
        #expect(show["hash"]?.string == value[17..<49].map { String(format: "%02x", $0) }.joined())
    }

    func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = hex.makeIterator()
        while let a = chars.next(), let b = chars.next() {
            out.append(UInt8(String([a, b]), radix: 16) ?? 0)
        }
        return out
    }
}
