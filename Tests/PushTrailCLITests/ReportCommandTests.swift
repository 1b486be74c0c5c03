import Foundation
import PushTrailCLI
import PushTrailModel
import PushTrailStore
import PushTrailWeb
import Testing

/// A tag scanner for the report's HTML: every element and attribute the page holds.
/// The report writes well-formed markup with double-quoted attribute values, so a
/// small scanner is enough to see whether payload text became markup.
struct Markup {
    struct Tag {
        var name: String
        var attributes: [(name: String, value: String)]
    }

    var tags: [Tag] = []
    /// The text content with the report's entities decoded.
    var text: String { Markup.decode(rawText) }
    private var rawText = ""

    static func decode(_ s: String) -> String {
        s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    init(_ html: String) {
        var i = html.startIndex
        let end = html.endIndex
        while i < end {
            guard html[i] == "<" else {
                rawText.append(html[i])
                i = html.index(after: i)
                continue
            }
            guard let close = html[i...].firstIndex(of: ">") else { break }
            var inner = html[html.index(after: i)..<close]
            i = html.index(after: close)
            if inner.hasPrefix("/") || inner.hasPrefix("!") { continue }
            if inner.hasSuffix("/") { inner = inner.dropLast() }
            let name = String(inner.prefix { !$0.isWhitespace })
            var attributes: [(String, String)] = []
            var rest = inner.dropFirst(name.count).drop { $0.isWhitespace }
            while !rest.isEmpty {
                let attr = String(rest.prefix { $0 != "=" && !$0.isWhitespace })
                rest = rest.dropFirst(attr.count)
                var value = ""
                if rest.first == "=" {
                    rest = rest.dropFirst()
                    if rest.first == "\"" {
                        rest = rest.dropFirst()
                        value = String(rest.prefix { $0 != "\"" })
                        rest = rest.dropFirst(value.count + 1)
                    } else {
                        value = String(rest.prefix { !$0.isWhitespace })
                        rest = rest.dropFirst(value.count)
                    }
                }
                attributes.append((attr, value))
                rest = rest.drop { $0.isWhitespace }
            }
            tags.append(Tag(name: name.lowercased(), attributes: attributes))
            if name == "style" || name == "title" {
                // Raw text elements: skip to the closing tag.
                guard let r = html[i...].range(of: "</\(name)>") else { break }
                i = r.upperBound
            }
        }
    }

    /// What the report writes, and nothing else.
    static let elements: Set = [
        "html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "code", "p", "table",
        "thead", "tbody", "tr", "th", "td", "span", "main", "ol", "ul", "li", "div", "time", "strong", "footer",
    ]
    static let attributes: Set = ["lang", "charset", "http-equiv", "content", "name", "class", "id", "datetime"]

    /// Elements or attributes the report does not write, or attribute values that look
    /// like URLs or hold characters that would have to be escaped.
    var foreign: [String] {
        var out: [String] = []
        for tag in tags {
            if !Markup.elements.contains(tag.name) { out.append("<\(tag.name)>") }
            for a in tag.attributes {
                if !Markup.attributes.contains(a.name.lowercased()) { out.append("\(a.name)= on <\(tag.name)>") }
                if a.value.contains("<") || a.value.contains("'") && tag.name != "meta" {
                    out.append("\(a.name)=\"\(a.value)\" on <\(tag.name)>")
                }
                if tag.name != "meta" && a.name != "datetime" && a.value.contains(":") {
                    out.append("\(a.name)=\"\(a.value)\" on <\(tag.name)> holds a scheme")
                }
            }
        }
        return out
    }
}

@Suite("report")
struct ReportCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    /// A fresh directory whose store holds the samples.
    static func sampleStore() throws -> TempDir {
        let dir = try TempDir()
        let r = ReplayFixtures.run(dir.store, ["ingest", Samples.events])
        guard r.status == 0 else { throw HarnessError("ingest failed: \(r)") }
        return dir
    }

    static func page(_ store: String, _ argv: [String]) throws -> String {
        let r = ReplayFixtures.run(store, ["report"] + argv + ["-o", "-"])
        guard r.status == 0 else { throw HarnessError("report \(argv) failed: \(r)") }
        return r.stdout
    }

    @Test("a thread report draws the story: banners, buttons in the app's order, answers, states, the finding")
    func sampleThread() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        let r = ReplayFixtures.run(store, ["report", "--thread", "task-1109", "-o", dir.file("r.html")])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("wrote \(dir.file("r.html")) (9 events, 1 finding, as of @224)"), "\(r)")
        #expect(mode(of: dir.file("r.html")) == 0o600)
        let html = String(decoding: try dir.read("r.html"), as: UTF8.self)
        let markup = Markup(html)
        #expect(markup.foreign.isEmpty, "\(markup.foreign)")

        // The header: the chain head, the query, when it was made.
        let head = try CLI.head(store)
        #expect(html.contains("@224 \(head["hash"]?.string ?? "?")"))
        #expect(html.contains("pushtrail report --thread task-1109"))
        #expect(
            html.contains(CLI.nowText.replacingOccurrences(of: ".000Z", with: "Z"))
                || html.contains("2026-12-01T09:30:00"))

        // Banners in timeline order with their category's buttons, as the app registers them.
        let titles = ["Due soon: Clean dryer vent", "Cancelled: Clean dryer vent", "Overdue: Clean dryer vent"]
        let positions = titles.map { html.range(of: "<p class=\"title\">\($0)</p>")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        let buttonLists = html.components(separatedBy: "<ul class=\"buttons\">").dropFirst().map {
            $0.prefix { $0 != "\n" }.components(separatedBy: "<li>").dropFirst().map {
                $0.replacingOccurrences(of: "</li>", with: "").replacingOccurrences(of: "</ul>", with: "")
            }
        }
        #expect(
            buttonLists == [
                ["Edit", "Complete", "Cancel", "Mark In Progress"], ["Edit", "Complete", "Cancel", "Mark In Progress"],
                ["Uncancel", "Delete"], ["Edit", "Complete", "Cancel", "Mark In Progress"],
            ])

        // The press, the server's answer, the finding where it occurred.
        #expect(html.contains("pressed <strong>Complete</strong> → <span class=\"outcome\">rejected</span>"))
        #expect(html.contains("HTTP 409: Task is cancelled; restore it before completing"))
        let flagged = html.components(separatedBy: "<li class=\"entry notification flagged\" id=\"seq-131\">")
        #expect(flagged.count == 2)
        #expect(flagged.last?.prefix(3000).contains("category_state_mismatch") == true)
        // The in-app cancel is not in the thread but moved the task: listed, marked.
        #expect(html.contains("<li class=\"entry action outside\" id=\"seq-122\">"))
        #expect(
            html.contains(
                "<span class=\"state active\">active</span> → <span class=\"state cancelled\">cancelled</span>"))
        // Relative to the last press.
        #expect(html.contains("1 day 12 hours before the complete"))
        // Tokens are masked.
        #expect(!html.contains("ae4d6fdf"))
    }

    /// The entry of `seq` in a report page: from its `<li>` to the next entry's.
    static func entry(_ html: String, seq: Int) -> String? {
        guard let start = html.range(of: "\" id=\"seq-\(seq)\">") else { return nil }
        let rest = html[start.upperBound...]
        return String(rest.range(of: "<li class=\"entry").map { rest[..<$0.lowerBound] } ?? rest)
    }

    /// The texts of the `<li class="CLS">` items of `html`, their label alone when they have one.
    static func items(_ html: String, _ cls: String) -> [String] {
        html.components(separatedBy: "<li class=\"\(cls)\">").dropFirst().map { item in
            var text = String(item.prefix { $0 != "<" })
            if item.hasPrefix("<span class=\"label\">") {
                text = String(item.dropFirst("<span class=\"label\">".count).prefix { $0 != "<" })
            }
            return Markup.decode(text)
        }
    }

    @Test("an Android notification is a card with at most three text buttons; the ones never seen are struck and named")
    func androidCards() throws {
        let dir = try Self.sampleStore()
        let html = try Self.page(dir.store, ["--thread", "task-1301"])
        #expect(Markup(html).foreign.isEmpty)
        // Story d: the fourth of button_types is past Android's three.
        let four = try #require(Self.entry(html, seq: 184))
        #expect(html.contains("<li class=\"entry notification android flagged\" id=\"seq-184\">"))
        #expect(four.contains("<div class=\"card\">") && !four.contains("<div class=\"banner\">"))
        #expect(four.contains("<span class=\"app\">honeydue</span>"), "the Android package's name")
        #expect(four.contains("<p class=\"title\">Due soon: Replace fridge water filter</p>"))
        #expect(Self.items(four, "seen") == ["Edit", "Complete", "Cancel"])
        #expect(Self.items(four, "unseen") == ["Mark In Progress"])
        #expect(four.contains("<span class=\"tag\">not shown</span>"))
        #expect(four.contains("Android shows at most 3 action buttons, and button_types lists 4."))
        // The next day's push shows its three, and none is marked.
        let next = try #require(Self.entry(html, seq: 188))
        #expect(Self.items(next, "seen") == ["Edit", "Complete", "Cancel"] && Self.items(next, "unseen").isEmpty)
        #expect(html.contains("FCM answered <strong>200</strong> accepted"))
        #expect(!html.contains("APNs answered"))

        // Story e: a notification message shows no button at all; with no buttons, nothing is marked.
        let e = try Self.page(dir.store, ["--thread", "task-1302", "--app-name", "honeyDue"])
        let message = try #require(Self.entry(e, seq: 191))
        #expect(message.contains("<span class=\"app\">honeyDue</span>"))
        #expect(Self.items(message, "seen").isEmpty)
        #expect(Self.items(message, "unseen") == ["Complete", "Cancel", "Mark In Progress"])
        #expect(message.contains("the system displayed this notification without the app"))
        let completed = try #require(Self.entry(e, seq: 195))
        #expect(completed.contains("<div class=\"card\">"))
        #expect(Self.items(completed, "seen").isEmpty && Self.items(completed, "unseen").isEmpty)

        // Story g: one thread, both platforms, each drawn its own way; the answers name their service.
        let g = try Self.page(dir.store, ["--thread", "task-1304"])
        #expect(g.components(separatedBy: "<div class=\"banner\">").count - 1 == 3)
        #expect(g.components(separatedBy: "<div class=\"card\">").count - 1 == 3)
        #expect(g.components(separatedBy: "APNs answered <strong>200</strong>").count - 1 == 3)
        #expect(g.components(separatedBy: "FCM answered <strong>200</strong>").count - 1 == 3)
        #expect(
            Self.items(try #require(Self.entry(g, seq: 207)), "seen") == ["Complete", "Cancel", "Mark In Progress"])
    }

    @Test("the page is self-contained and inert: no scripts, no URLs, a CSP that forbids both")
    func selfContained() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        for argv in [["--thread", "task-1102"], ["--task", "1106"], ["--user", "u_dana", "--since", "2026-11-01"]] {
            let html = try Self.page(store, argv)
            for needle in ["<script", "src=", "href=", "url(", "@import", "http://", "https://", "javascript:"] {
                #expect(!html.lowercased().contains(needle), "\(argv): \(needle)")
            }
            #expect(
                html.contains("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\""))
            #expect(Markup(html).foreign.isEmpty)
        }
    }

    @Test("hostile strings in every field come out as text, never as markup")
    func xss() throws {
        let dir = try TempDir()
        let r = ReplayFixtures.run(dir.store, ["ingest", Self.fixtures + "/xss.ndjson"])
        #expect(r.status == 0, "\(r)")
        let lines = try String(contentsOfFile: Self.fixtures + "/xss.ndjson", encoding: .utf8).split(separator: "\n")
        let thread = "<script>alert('thread')</script>"
        for argv in [
            ["--thread", thread], ["--task", "9001"],
            ["--user", "<img src=x onerror=alert('user')>", "--since", "2026-11-01"],
        ] {
            let html = try Self.page(dir.store, argv)
            let markup = Markup(html)
            #expect(markup.foreign.isEmpty, "\(argv): \(markup.foreign)")
            #expect(
                markup.tags.filter { $0.name == "li" && $0.attributes.contains { $0.value.hasPrefix("entry") } }.count
                    == lines.count)
            // Each Android notification is a card, with the buttons it did not show marked.
            let android = lines.filter { $0.contains(#""platform":"android""#) }.count
            #expect(android == 12)
            #expect(
                markup.tags.filter { $0.name == "div" && $0.attributes.contains { $0.value == "card" } }.count
                    == android)
            #expect(html.components(separatedBy: "<span class=\"tag\">not shown</span>").count - 1 >= android)
            // Every attack string is shown, as text.
            for line in lines {
                let event = try JSON.parse(Array(line.utf8))
                if let title = event["payload"]?["aps"]?["alert"]?["title"]?.string {
                    #expect(markup.text.contains(title), "\(title)")
                    #expect(html.contains(HTML.escape(title)))
                }
                // An Android message's texts: in its data map, or in its notification block.
                let payload = event["payload"]
                for text in [
                    payload?["data"]?["title"], payload?["data"]?["body"], payload?["notification"]?["title"],
                    payload?["notification"]?["body"],
                ].compactMap({ $0?.string }) {
                    #expect(markup.text.contains(text), "\(text)")
                    #expect(html.contains(HTML.escape(text)))
                }
                if let error = event["error"]?.string { #expect(markup.text.contains(error)) }
                if let reason = event["reason"]?.string { #expect(markup.text.contains(reason)) }
                #expect(markup.text.contains(event["id"]?.string ?? "?"))
            }
        }
    }

    @Test("escape leaves no markup character, quote or control character")
    func escaping() {
        let hostile = "<a href='x' onclick=\"y\">&amp;\u{0}\u{7}\u{1B}[31m\u{85}</a>"
        let escaped = HTML.escape(hostile)
        #expect(
            escaped
                == "&lt;a href=&#39;x&#39; onclick=&quot;y&quot;&gt;&amp;amp;"
                + "\u{FFFD}\u{FFFD}\u{FFFD}[31m\u{FFFD}&lt;/a&gt;"
        )
        #expect(HTML.escape("Due: \"Mow\" lawn\nnow\t✓") == "Due: &quot;Mow&quot; lawn\nnow\t✓")
    }

    @Test("--task covers the deliveries of its notifications; --user --since starts at --since")
    func taskAndUser() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        let task = try Self.page(store, ["--task", "1106"])
        // Story c: the 410 answers to Dana's old device are in the task's report.
        #expect(task.contains("APNs answered <strong>410</strong> Unregistered"))
        #expect(task.components(separatedBy: "sent_after_unregistered").count - 1 >= 2)

        let user = try Self.page(store, ["--user", "u_alice", "--since", "2026-11-15"])
        let times = Markup(user).tags.filter { $0.name == "time" }.compactMap {
            $0.attributes.first { $0.name == "datetime" }?.value
        }
        #expect(!times.isEmpty)
        #expect(times.allSatisfy { $0 >= "2026-11-15" })
        #expect(user.contains("user u_alice since 2026-11-15T00:00:00"))
    }

    @Test("--at shows the timeline as it was: the cancel not yet made")
    func asOf() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        let html = try Self.page(store, ["--thread", "task-1109", "--at", "2026-11-16T00:00:00Z"])
        #expect(html.contains("<dt>As of</dt><dd>2026-11-16T00:00:00"))
        #expect(!html.contains("Cancelled: Clean dryer vent"))
        #expect(!html.contains("cancelled</span>"))
    }

    @Test("errors: nothing selected, two selectors, --user without --since, unknown thread, existing file")
    func errors() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        let cases: [([String], Int32, String)] = [
            ([], 2, "name what to report"),
            (["--thread", "task-1109", "--task", "1109"], 2, "only one of"),
            (["--user", "u_alice"], 2, "--user needs --since"),
            (["--thread", "task-1109", "--since", "-7d"], 2, "--since goes with --user"),
            (["--task", "eleven"], 2, "--task takes an integer"),
            (["--thread", "no-such-thread"], 1, "no events for thread no-such-thread"),
        ]
        for (argv, status, message) in cases {
            let r = ReplayFixtures.run(store, ["report"] + argv + ["-o", dir.file("x.html")])
            #expect(r.status == status, "\(argv): \(r)")
            #expect(r.stderr.contains(message), "\(argv): \(r)")
            #expect(!exists(dir.file("x.html")))
        }
        let existing = try dir.write("taken.html", lines: ["keep me"])
        let r = ReplayFixtures.run(store, ["report", "--thread", "task-1109", "-o", existing])
        #expect(r.status == 74 && r.stderr.contains("--force"), "\(r)")
        #expect(try dir.read("taken.html") == Array("keep me\n".utf8))
        #expect(ReplayFixtures.run(store, ["report", "--thread", "task-1109", "-o", existing, "--force"]).status == 0)
        #expect(try dir.read("taken.html").count > 1000)
    }

    @Test("the default file name is built from safe characters, in the working directory")
    func defaultName() throws {
        let dir = try Self.sampleStore()
        let store = dir.store
        let r = try Binary.run(["--store", store, "report", "--thread", "task-1109"], directory: dir.path)
        #expect(r.status == 0, "\(r)")
        #expect(mode(of: dir.file("task-1109-report.html")) == 0o600)
        let missing = try Binary.run(["--store", store, "report", "--thread", "../../etc/x"], directory: dir.path)
        #expect(missing.status == 1, "\(missing)")  // no such thread: nothing written anywhere

        // A hostile thread id gives a safe name inside the working directory.
        let hostile = try TempDir()
        let ingest = ReplayFixtures.run(hostile.store, ["ingest", Self.fixtures + "/xss.ndjson"])
        #expect(ingest.status == 0, "\(ingest)")
        let work = hostile.file("work")
        #expect(mkdir(work, 0o700) == 0)
        let r2 = try Binary.run(
            ["--store", hostile.store, "report", "--thread", "<script>alert('thread')</script>"], directory: work)
        #expect(r2.status == 0, "\(r2)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: work) == [
                "_script_alert__thread____script_-report.html"
            ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: hostile.path).sorted() == ["store", "work"])
    }
}
