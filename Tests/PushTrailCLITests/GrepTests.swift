import Foundation
import Testing

/// `log --grep` as a French, German, Greek or Japanese support agent types it.
@Suite("log --grep finds text beyond ASCII, in either case, through the executable")
struct GrepTests {
    /// Notifications whose task and residence names are in several scripts, one written
    /// with JSON escapes, and one plain ASCII event.
    static let names: [(id: String, task: String, residence: String)] = [
        ("n-fr", "Nettoyer les gouttières", "Résidence Côté"),
        ("n-de", "Ölwechsel der Heizung", "Haus am See"),
        ("n-el", "Καθαρισμός υδρορροών", "Οδός Ερμού"),
        ("n-ja", "排水溝の掃除", "東京の家"),
        ("n-esc", "R\\u00e9paration du toit", "Ch\\u00e2teau"),
        ("n-ascii", "Clean the gutters", "Lake House"),
    ]

    func store() throws -> TempDir {
        let dir = try TempDir()
        let lines = Self.names.enumerated().map { i, n in
            Line.notification(n.id, task: 100 + i, at: "2026-11-2\(i)T08:00:00Z")
                .replacingOccurrences(
                    of: "\"task_id\":\(100 + i)",
                    with: "\"task_id\":\(100 + i),\"task_name\":\"\(n.task)\",\"residence_name\":\"\(n.residence)\"")
        }
        let input = try dir.write("names.ndjson", lines: lines)
        let r = try Binary.run(["--store", dir.store, "ingest", input])
        guard r.status == 0 else { throw HarnessError("seeding failed: \(r)") }
        return dir
    }

    /// The ids `log --grep TEXT --raw` prints, through the built binary.
    func grep(_ dir: TempDir, _ text: String) throws -> [String] {
        let r = try Binary.run(["--store", dir.store, "log", "--grep", text, "--raw"])
        #expect(r.status == 0, "\(r)")
        return try r.stdout.split(separator: "\n").map { try JSON.parse(String($0))["id"]?.string ?? "?" }
    }

    @Test("each name is found as typed, in capitals and in lower case; a near miss finds nothing")
    func scripts() throws {
        let dir = try store()
        let cases: [(String, [String])] = [
            ("Résidence", ["n-fr"]), ("RÉSIDENCE CÔTÉ", ["n-fr"]), ("gouttières", ["n-fr"]), ("GOUTTIÈRES", ["n-fr"]),
            ("ölwechsel", ["n-de"]), ("ÖLWECHSEL", ["n-de"]),
            ("ΚΑΘΑΡΙΣΜΌΣ", ["n-el"]), ("καθαρισμός", ["n-el"]), ("ΟΔΌΣ ΕΡΜΟΎ", ["n-el"]),
            ("排水溝", ["n-ja"]), ("東京", ["n-ja"]),
            ("RÉPARATION", ["n-esc"]), ("château", ["n-esc"]),
            ("GUTTERS", ["n-ascii"]), ("lake house", ["n-ascii"]),
            ("Residence Cote", []), ("gouttieres", []), ("排水口", []), ("ΚΑΘΑΡΙΣΜΟΣ", []),
        ]
        for (text, expected) in cases {
            #expect(try grep(dir, text) == expected, "--grep \(text)")
        }
    }
}
