import PushTrailModel
import PushTrailStore

/// What a report shows: a timeline and where it came from.
public struct ReportContent: Sendable {
    /// "thread task-1102", "task 1102", "user u_alice since 2026-11-01T00:00:00Z".
    public var subject: String
    /// The command line that selects the same events.
    public var query: String
    public var asOf: String
    public var head: ChainHead
    public var storePath: String
    public var madeAt: Timestamp
    /// The version of pushtrail that made the page.
    public var version: String
    public var entries: [TimelineEntry]
    public var view: TimelineView
    /// Over a cluster: each shard's name and chain head (then `head` is not shown).
    public var shardHeads: [(name: String, head: ChainHead)] = []

    public init(
        subject: String, query: String, asOf: String, head: ChainHead, storePath: String, madeAt: Timestamp,
        version: String, entries: [TimelineEntry], view: TimelineView
    ) {
        self.subject = subject
        self.query = query
        self.asOf = asOf
        self.head = head
        self.storePath = storePath
        self.madeAt = madeAt
        self.version = version
        self.entries = entries
        self.view = view
    }
}

/// `report`'s page: a timeline as one self-contained HTML page. It loads nothing and
/// its Content-Security-Policy forbids scripts, so it opens offline and inert.
public enum ReportPage {
    public static func render(_ c: ReportContent) -> String {
        var h = HTMLBuilder()
        let anchor = c.view.anchor
        h.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        h.raw(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n")
        h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        h.raw("<meta name=\"generator\" content=\"pushtrail \(HTML.escape(c.version))\">\n")
        h.raw("<title>")
        h.text("pushtrail · \(c.subject)")
        h.raw("</title>\n<style>\(Timeline.stylesheet)</style>\n</head>\n<body>\n<header>\n<h1>")
        h.text(c.subject)
        h.raw("</h1>\n<dl class=\"facts\">\n")
        h.fact("Query", code: c.query)
        h.fact("As of", c.asOf)
        if c.shardHeads.isEmpty {
            h.fact("Chain head", code: "@\(c.head.seq) \(c.head.hex)")
            h.fact("Store", code: c.storePath)
        } else {
            h.fact(
                "Chain heads",
                code: c.shardHeads.map { "\($0.name) @\($0.head.seq) \($0.head.hex)" }.joined(separator: "; "))
            h.fact("Cluster", code: c.storePath)
        }
        h.fact("Report made", c.madeAt.description)
        h.fact("Events", Timeline.counts(c.entries))
        if let anchor {
            h.fact("Times relative to", "\(TimelineText.anchorName(anchor.event)) (#\(anchor.seq), \(anchor.event.at))")
        }
        h.raw("</dl>\n")
        Timeline.findingsAlert(&h, c.entries)
        Timeline.tasks(&h, c.entries)
        h.raw("</header>\n<main>\n")
        Timeline.list(&h, c.entries, c.view)
        h.raw("</main>\n<footer>")
        h.text(
            c.shardHeads.isEmpty
                ? "Made by pushtrail \(c.version). Check the store with `pushtrail verify`; "
                    + "a chain head that differs from @\(c.head.seq) \(c.head.hex) means the log changed after this "
                    + "report."
                : "Made by pushtrail \(c.version). Check the shards with `pushtrail verify --cluster`; "
                    + "a shard whose chain head differs from the one above means its log changed after this report."
        )
        h.raw("</footer>\n</body>\n</html>\n")
        return h.out
    }
}

/// How a timeline names times and events in words, for the terminal and the pages.
public enum TimelineText {
    /// "the complete", "the notification", "the delivery": how a line names the anchor.
    public static func anchorName(_ event: Event) -> String {
        switch event.body {
        case .action(let a): "the " + a.action.rawValue.replacingUnderscores
        case .notification: "the notification"
        case .delivery: "the delivery"
        }
    }

    /// The event times are shown relative to by default: the last button press (what
    /// support asks about: "I pressed complete and…"), else the last action, else the
    /// last event.
    public static func anchor(in events: [LoadedEvent]) -> LoadedEvent? {
        events.last { $0.event.actionResponse.map { $0.action != .open && $0.action != .dismiss } ?? false }
            ?? events.last { $0.event.type == .action } ?? events.last
    }

    /// "3 days before the complete", or "← the complete" on the anchor itself.
    public static func relative(_ loaded: LoadedEvent, to anchor: LoadedEvent?) -> String? {
        guard let anchor else { return nil }
        // The same seq and id: over a cluster a seq alone names an event of each shard.
        if anchor.seq == loaded.seq && anchor.event.id == loaded.event.id { return "← " + anchorName(anchor.event) }
        return RelativeTime.describe(loaded.event.at, relativeTo: anchor.event.at) + " " + anchorName(anchor.event)
    }
}

extension String {
    /// `mark_in_progress` → `mark in progress`.
    fileprivate var replacingUnderscores: String {
        // Action names are ASCII, where "_" is a Character of its own: bytes will do.
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return String(map { $0 == "_" ? " " : $0 }) }
        return String(decoding: utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
