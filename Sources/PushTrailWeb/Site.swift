import PushTrailModel
import PushTrailStore

/// A page of the support site, or where to send the browser instead.
public struct SitePage: Sendable {
    public var status: UInt32
    public var html: String
    /// Where a redirect (303) goes; nil for a page.
    public var location: String?
}

/// What the pages need to know of a request.
public struct SiteContext: Sendable {
    /// The query's arguments, decoded.
    public var query: [String: String]
    public var now: Timestamp
    /// The viewer's role, as the bar states it.
    public var role: String
    /// The viewer holds the `admin` role, who may see device tokens in full.
    public var isAdmin: Bool
    /// The version of pushtrail serving the pages.
    public var version: String

    public init(query: [String: String], now: Timestamp, role: String, isAdmin: Bool, version: String) {
        self.query = query
        self.now = now
        self.role = role
        self.isAdmin = isAdmin
        self.version = version
    }

    /// An admin asked for device tokens in full (`show_tokens=1`).
    var showTokens: Bool { isAdmin && (query["show_tokens"] == "1" || query["show_tokens"] == "true") }

    /// A device token as the viewer may see it.
    func token(_ token: String?) -> String {
        guard let token else { return "(none)" }
        return showTokens ? token : TokenMask.mask(token)
    }

    /// The query value `name`, nil when absent or empty.
    func value(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }
}

/// A page that cannot be drawn: the status and what to tell the viewer.
public struct SiteFailure: Error, Sendable {
    public var status: UInt32
    public var message: String
}

/// The support site the server draws: search, a user's, a thread's, a task's and an
/// event's pages, the audit, and a live tail of new events. Every page is server-drawn
/// HTML that works without JavaScript, loads only this server's stylesheet (and, on the
/// live tail, its script), and has a URL that states the whole question: with `at`, the
/// page is drawn as the store knew it then, and with `at=@SEQ` (or a time and
/// `through`) it stays exactly the same forever, as events are never changed.
///
/// Safety, as in `Timeline`: every string from the store or the request reaches the
/// page through `HTML.escape` (text and attribute values) or `HTML.url` (links).
public enum Site {
    /// Events a user's page shows at most, newest first (`limit` changes it).
    static let userEvents = 200
    /// Matches a free-text search lists at most.
    static let searchResults = 50
    /// Events the live tail starts with.
    static let liveEvents = 50
    /// Findings the audit page lists at most below its counts.
    static let auditFindings = 500

    // MARK: - Search

    /// `/`: the search box, and what to ask.
    public static func home(_ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let head = try reader.head()
        var h = HTMLBuilder()
        h.raw("<h1>Find what a user received</h1>\n")
        searchForm(&h, "", big: true)
        h.raw(
            "<p>Type a user id, a task number, a thread id, a notification or event id (or <code>@SEQ</code>), "
                + "or words from a notification's text.</p>\n")
        h.raw("<h2>Ask</h2>\n<ul class=\"asks\">\n")
        h.raw("<li><a href=\"/audit\">Audit</a>: what was sent against what was true, by user, task or time</li>\n")
        h.raw("<li><a href=\"/live\">Live</a>: events as they arrive</li>\n")
        h.raw("</ul>\n")
        h.raw("<p class=\"meta\">The store holds \(head.seq) events; chain head <code>@\(head.seq) ")
        h.text(head.hex)
        h.raw("</code>.</p>\n")
        return page(title: "Search", body: h.out, search: nil, c)
    }

    /// `/search?q=`: straight to the one thing `q` names, a short list when it names
    /// several, else the events whose text holds it (`log --grep`'s rules).
    public static func search(_ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        guard let q = c.value("q")?.trimmingSpaces, !q.isEmpty else {
            return SitePage(status: 303, html: "", location: "/")
        }
        let named = try reader.named(q)
        var targets: [(String, String)] = []
        if let seq = named.event {
            let stored = try reader.event(seq: seq)
            let type = (try? stored?.decode().type.description) ?? nil
            targets.append(("the \(type ?? "event") \(q)", HTML.url(["events", q])))
        }
        if let t = named.task { targets.append(("task \(t)", HTML.url(["tasks", String(t)]))) }
        if named.thread { targets.append(("thread \(q)", HTML.url(["threads", q]))) }
        if named.user { targets.append(("user \(q)", HTML.url(["users", q]))) }
        if targets.count == 1 { return SitePage(status: 303, html: "", location: targets[0].1) }

        var h = HTMLBuilder()
        h.raw("<h1>Search: ")
        h.text(q)
        h.raw("</h1>\n")
        if !targets.isEmpty {
            h.raw("<p>This names more than one thing:</p>\n<ul class=\"asks\">\n")
            for (label, href) in targets {
                h.raw("<li>")
                h.link(href, label)
                h.raw("</li>\n")
            }
            h.raw("</ul>\n")
            return page(title: "Search", body: h.out, search: q, c)
        }
        var query = LogQuery()
        query.grep = q
        var found: [LoadedEvent] = []
        try reader.log(query, reverse: true) { loaded in
            found.append(loaded)
            return found.count < searchResults
        }
        if found.isEmpty {
            h.raw(
                "<p role=\"status\">No user, task, thread or event is named that, and no event's text holds it.</p>\n")
        } else {
            h.raw("<p role=\"status\">")
            h.text(
                found.count < searchResults
                    ? "\(found.count) event\(found.count == 1 ? "" : "s") hold this text, newest first."
                    : "The newest \(searchResults) events that hold this text:")
            h.raw("</p>\n")
            eventRows(&h, found, c)
        }
        return page(title: "Search", body: h.out, search: q, c)
    }

    // MARK: - A user

    /// `/users/{id}`: the user's devices, their notifications newest first grouped by
    /// thread (each with its buttons, delivery answer and findings), and their presses
    /// with the server's answers.
    public static func user(_ id: String, _ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let horizon = try asOf(c)
        let all = try reader.userEvents(id, since: nil, horizon: horizon)
        guard !all.isEmpty else {
            throw SiteFailure(status: 404, message: "No events for user \(id)\(atNote(horizon)).")
        }
        let limit = try count(c, "limit", default: userEvents)
        let shown = Array(all.suffix(limit))
        let entries = try reader.timeline(shown, horizon: horizon)
        let head = try reader.head()
        var h = HTMLBuilder()
        h.raw("<h1>User ")
        h.text(id)
        h.raw("</h1>\n")
        asOfBar(&h, horizon, head: head, path: ["users", id], steps: nil, c)
        if shown.count < all.count {
            h.raw("<p class=\"meta\">")
            h.text("The newest \(shown.count) of \(all.count) events. ")
            let asked = [("at", c.value("at")), ("through", c.value("through"))]
            h.link(HTML.url(["users", id], asked + [("limit", String(all.count))]), "Show all")
            h.raw("</p>\n")
        }
        Timeline.findingsAlert(&h, entries)

        // Devices: each token the user's events name, with its platform and when seen,
        // and the answer that declared it dead, if one of theirs did.
        var deviceOf: [String: String] = [:]
        for e in all {
            if let n = e.event.device, e.event.type == .notification {
                deviceOf[EventID.normalizedNotificationIDString(e.event.id)] = n
            }
        }
        var dead: [String: (at: Timestamp, status: Int)] = [:]
        for e in all {
            guard let d = e.event.delivery, d.declaresTokenDead,
                let token = deviceOf[EventID.normalizedNotificationIDString(d.notificationID)], dead[token] == nil
            else { continue }
            dead[token] = (e.event.at, d.status)
        }
        var devices: [(token: String, platform: Platform?, first: Timestamp, last: Timestamp, pushes: Int)] = []
        for e in all {
            guard let token = e.event.device else { continue }
            let platform = e.event.notification?.platform
            if let i = devices.firstIndex(where: { $0.token == token }) {
                devices[i].first = min(devices[i].first, e.event.at)
                devices[i].last = max(devices[i].last, e.event.at)
                if platform != nil { devices[i].platform = platform }
                if e.event.type == .notification { devices[i].pushes += 1 }
            } else {
                devices.append((token, platform, e.event.at, e.event.at, e.event.type == .notification ? 1 : 0))
            }
        }
        h.raw("<section aria-labelledby=\"devices\"><h2 id=\"devices\">Devices</h2>\n")
        if devices.isEmpty {
            h.raw("<p>No event names a device.</p>\n")
        } else {
            h.raw(
                "<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">Device</th><th scope=\"col\">Platform</th>"
                    + "<th scope=\"col\">Pushes</th><th scope=\"col\">First seen</th><th scope=\"col\">Last seen</th>"
                    + "<th scope=\"col\">Token</th></tr></thead>\n<tbody>\n")
            for d in devices.sorted(by: { $0.last > $1.last }) {
                h.raw("<tr><td><code>")
                h.text(c.token(d.token))
                h.raw("</code></td><td>")
                h.text(d.platform.map(platformName) ?? "unknown")
                h.raw("</td><td>\(d.pushes)</td><td>")
                time(&h, d.first)
                h.raw("</td><td>")
                time(&h, d.last)
                h.raw("</td><td>")
                if let dead = dead[d.token] {
                    h.raw("<strong class=\"bad\">✗ declared dead</strong> ")
                    h.text("by the \(dead.status) answer at \(dead.at)")
                } else {
                    h.raw("<span class=\"good\">✓ no answer declared it dead</span>")
                }
                h.raw("</td></tr>\n")
            }
            h.raw("</tbody>\n</table></div>\n")
        }
        h.raw("</section>\n")

        // Each notification's deliveries and presses, by its id.
        var answers: [String: [TimelineEntry]] = [:]
        for e in entries where e.loaded.event.type != .notification {
            if let ref = e.loaded.event.referencedNotificationID {
                answers[EventID.normalizedNotificationIDString(ref), default: []].append(e)
            }
        }
        var threads: [(id: String, entries: [TimelineEntry])] = []
        for e in entries.reversed() where e.loaded.event.type == .notification {
            let thread = e.loaded.event.threadID ?? "(no thread)"
            if let i = threads.firstIndex(where: { $0.id == thread }) {
                threads[i].entries.append(e)
            } else {
                threads.append((thread, [e]))
            }
        }
        h.raw("<section aria-labelledby=\"notifications\"><h2 id=\"notifications\">Notifications</h2>\n")
        if threads.isEmpty { h.raw("<p>No notifications.</p>\n") }
        for thread in threads {
            h.raw("<section class=\"thread\"><h3>Thread ")
            if thread.id == "(no thread)" {
                h.text(thread.id)
            } else {
                h.link(
                    HTML.url(["threads", thread.id], [("at", c.value("at")), ("through", c.value("through"))]),
                    thread.id)
            }
            h.raw("</h3>\n<ul class=\"pushes\">\n")
            for e in thread.entries {
                notificationRow(&h, e, answers[EventID.normalizedNotificationIDString(e.loaded.event.id)] ?? [], c)
            }
            h.raw("</ul></section>\n")
        }
        h.raw("</section>\n")

        let presses = entries.filter { $0.loaded.event.type == .action }.reversed()
        h.raw("<section aria-labelledby=\"presses\"><h2 id=\"presses\">Presses and the server's answers</h2>\n")
        if presses.isEmpty {
            h.raw("<p>No actions.</p>\n")
        } else {
            h.raw("<ul class=\"presses\">\n")
            for e in presses {
                h.raw("<li>")
                time(&h, e.loaded.event.at)
                h.raw(" ")
                pressText(&h, e)
                if let ref = e.loaded.event.referencedNotificationID {
                    h.raw(" <span class=\"meta\">on ")
                    h.link(HTML.url(["events", ref]), ref)
                    h.raw("</span>")
                }
                stateAfter(&h, e)
                findingsList(&h, e.findings, c)
                h.raw("</li>\n")
            }
            h.raw("</ul>\n")
        }
        h.raw("</section>\n")
        return page(title: "User \(id)", body: h.out, search: id, c)
    }

    /// One notification of a user's page: when, where, what it showed, what became of it.
    private static func notificationRow(
        _ h: inout HTMLBuilder, _ e: TimelineEntry, _ answers: [TimelineEntry], _ c: SiteContext
    ) {
        let event = e.loaded.event
        guard let n = event.notification else { return }
        h.raw("<li class=\"push\(e.findings.isEmpty ? "" : " flagged")\">")
        time(&h, event.at)
        h.raw(" <strong>")
        h.text(platformName(n.platform))
        h.raw("</strong> ")
        h.link(HTML.url(["events", event.id]), n.title ?? n.body ?? event.id)
        h.raw("<br><span class=\"meta\">")
        h.text("category \(n.category ?? "(none)") · device \(c.token(event.device)) · ")
        let shown = n.platform == .android && !n.notificationBlocks.isEmpty ? [] : n.shownButtons
        h.text(shown.isEmpty ? "no buttons" : "buttons: " + shown.map(Timeline.label).joined(separator: ", "))
        let unseen = (n.platform == .android && !n.notificationBlocks.isEmpty ? n.shownButtons : []) + n.hiddenButtons
        if !unseen.isEmpty { h.text(" · not shown: " + unseen.map(Timeline.label).joined(separator: ", ")) }
        h.raw("</span>")
        let deliveries = answers.filter { $0.loaded.event.type == .delivery }
        if deliveries.isEmpty {
            h.raw("<br><span class=\"warn\">⚠ no delivery answer stored</span>")
        }
        for d in deliveries {
            guard let answer = d.loaded.event.delivery else { continue }
            let ok = answer.status == 200
            h.raw("<br><span class=\"\(ok ? "good" : "bad")\">\(ok ? "✓" : "✗") ")
            h.text("\(n.platform.service) answered \(answer.status) \(answer.reason ?? (ok ? "accepted" : ""))")
            h.raw("</span>")
        }
        for a in answers where a.loaded.event.type == .action {
            h.raw("<br>")
            pressText(&h, a)
        }
        findingsList(&h, e.findings + answers.flatMap(\.findings), c)
        h.raw("</li>\n")
    }

    /// "u_alice pressed Complete → failed (HTTP 500: Internal Server Error)".
    private static func pressText(_ h: inout HTMLBuilder, _ e: TimelineEntry) {
        guard let a = e.loaded.event.actionResponse else { return }
        let mark = a.outcome == .ok ? "✓" : "✗"
        h.raw("<span class=\"press \(a.outcome.rawValue)\">\(mark) ")
        h.text("\(e.loaded.event.user) pressed ")
        h.raw("<strong>\(Timeline.label(a.action))</strong> → \(a.outcome.rawValue)")
        var answer: [String] = []
        if let s = a.httpStatus { answer.append("HTTP \(s)") }
        if let m = a.error { answer.append(m) }
        if !answer.isEmpty { h.text(" (" + answer.joined(separator: ": ") + ")") }
        h.raw("</span>")
    }

    private static func stateAfter(_ h: inout HTMLBuilder, _ e: TimelineEntry) {
        guard let t = e.taskID, let s = e.taskState else { return }
        h.raw(" <span class=\"meta\">task ")
        h.link(HTML.url(["tasks", String(t)]), String(t))
        h.raw(" then <span class=\"state \(s.rawValue)\">\(s.rawValue)</span></span>")
    }

    private static func findingsList(_ h: inout HTMLBuilder, _ findings: [Finding], _ c: SiteContext) {
        for f in findings {
            h.raw("<br><span class=\"finding\"><strong>⚠ \(f.code.rawValue)</strong> ")
            h.text(f.message(tokens: { c.token($0) }))
            h.raw("</span>")
        }
    }

    // MARK: - A thread, a task

    /// `/threads/{id}`: the thread drawn like `report`, as of `at`.
    public static func thread(_ id: String, _ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let horizon = try asOf(c)
        let members = try reader.threadEvents(id, horizon: horizon)
        guard !members.isEmpty else {
            throw SiteFailure(status: 404, message: "No thread \(id)\(atNote(horizon)).")
        }
        let every = horizon == nil ? members : try reader.threadEvents(id, horizon: nil)
        let entries = try reader.timeline(members, horizon: horizon, stateChanges: true)
        return try timelinePage(
            subject: "thread \(id)", path: ["threads", id], entries: entries, every: every.map(\.seq),
            horizon: horizon, reader, c)
    }

    /// `/tasks/{id}`: the task's state and its events drawn like `report`, as of `at`.
    public static func task(_ id: String, _ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        guard let taskID = Int64(id) else {
            throw SiteFailure(status: 400, message: "A task id is an integer, not \(id).")
        }
        let horizon = try asOf(c)
        let members = try reader.taskTimelineEvents(taskID, horizon: horizon)
        guard !members.isEmpty, let report = try reader.taskReport(taskID, horizon: horizon) else {
            throw SiteFailure(status: 404, message: "No events for task \(taskID)\(atNote(horizon)).")
        }
        let every = horizon == nil ? members : try reader.taskTimelineEvents(taskID, horizon: nil)
        let entries = try reader.timeline(members, horizon: horizon, stateChanges: true)
        var facts = HTMLBuilder()
        let f = report.snapshot.fields
        facts.raw("<dl class=\"facts\">\n")
        facts.raw("<dt>State</dt><dd><span class=\"state \(report.snapshot.state.rawValue)\">")
        facts.raw("\(report.snapshot.state.rawValue)</span></dd>\n")
        if let name = f.taskName { facts.fact("Name", name) }
        if let residence = f.residenceName { facts.fact("Residence", residence) }
        if let due = f.dueDate { facts.fact("Due", due.description) }
        facts.fact("Completions", String(f.completions))
        if let change = report.snapshot.lastChange {
            facts.raw("<dt>Last change</dt><dd>")
            facts.link(HTML.url(["events", change.eventID]), change.eventID)
            facts.text(" at \(change.at)")
            facts.raw("</dd>\n")
        }
        facts.raw("</dl>\n")
        return try timelinePage(
            subject: "task \(taskID)", path: ["tasks", id], entries: entries, every: every.map(\.seq),
            horizon: horizon, reader, c, facts: facts.out)
    }

    private static func timelinePage(
        subject: String, path: [String], entries: [TimelineEntry], every: [UInt64], horizon: Horizon?,
        _ reader: StoreReader, _ c: SiteContext, facts: String = ""
    ) throws -> SitePage {
        let head = try reader.head()
        let names = TimelineView.appNames(entries, name: nil)
        let members = entries.filter(\.member).map(\.loaded)
        let view = TimelineView(
            subject: subject, appName: names.ios, androidAppName: names.android,
            anchor: TimelineText.anchor(in: members), token: { [c] in c.token($0) }, links: true)
        var h = HTMLBuilder()
        h.raw("<h1>")
        h.text(subject.prefix(1).uppercased() + subject.dropFirst())
        h.raw("</h1>\n")
        asOfBar(&h, horizon, head: head, path: path, steps: (shown: members.map(\.seq), every: every), c)
        h.raw(facts)
        h.raw("<p class=\"meta\">")
        h.text(Timeline.counts(entries))
        if let a = view.anchor {
            h.text(" · times relative to \(TimelineText.anchorName(a.event)) (#\(a.seq))")
        }
        h.raw("</p>\n")
        Timeline.findingsAlert(&h, entries)
        Timeline.tasks(&h, entries, links: true)
        h.raw("<h2 class=\"visually-hidden\">Events</h2>\n")
        Timeline.list(&h, entries, view)
        h.raw("<p class=\"meta\">The same as JSON: ")
        let json = HTML.url(["v1"] + path, [("at", atText(horizon)), ("show_tokens", c.showTokens ? "1" : nil)])
        h.link(json, json)
        h.raw("</p>\n")
        return page(title: subject, body: h.out, search: path[1], c)
    }

    // MARK: - An event

    /// `/events/{id}` or `/events/@SEQ`: the event's facts, where it sits in its task's
    /// story, its findings, its JSON as ingested and its reproduction's downloads.
    public static func event(_ target: String, _ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let seq: UInt64?
        if target.hasPrefix("@") {
            seq = UInt64(target.dropFirst())
        } else {
            seq = try reader.seq(forID: target)
        }
        guard let seq, let stored = try reader.event(seq: seq) else {
            throw SiteFailure(status: 404, message: "No event \(target).")
        }
        let event = try stored.decode()
        let loaded = LoadedEvent(stored: stored, event: event)
        let entry = try reader.timeline([loaded], horizon: nil).first
        var h = HTMLBuilder()
        h.raw("<h1>")
        h.text("\(event.type.description.prefix(1).uppercased())\(event.type.description.dropFirst()) \(event.id)")
        h.raw("</h1>\n<dl class=\"facts\">\n")
        h.fact("Seq", String(stored.seq))
        h.fact("At", event.at.description)
        h.fact("Recorded", stored.recordedAt.description)
        h.raw("<dt>User</dt><dd>")
        h.link(HTML.url(["users", event.user]), event.user)
        h.raw("</dd>\n")
        if event.device != nil { h.fact("Device", code: c.token(event.device)) }
        if let n = event.notification { h.fact("Platform", platformName(n.platform)) }
        if let thread = event.threadID {
            h.raw("<dt>Thread</dt><dd>")
            h.link(HTML.url(["threads", thread], [("at", "@\(stored.seq)")]), thread)
            h.raw("</dd>\n")
        }
        if let entry, let t = entry.taskID {
            h.raw("<dt>Task</dt><dd>")
            h.link(HTML.url(["tasks", String(t)], [("at", "@\(stored.seq)")]), String(t))
            if let s = entry.taskState {
                let from = entry.transition.map { $0.from != $0.to ? "\($0.from.rawValue) → " : "" } ?? ""
                h.raw(" <span class=\"meta\">after this event:</span> \(from)")
                h.raw("<span class=\"state \(s.rawValue)\">\(s.rawValue)</span>")
            }
            h.raw("</dd>\n")
        }
        if let ref = event.referencedNotificationID {
            h.raw("<dt>For notification</dt><dd>")
            h.link(HTML.url(["events", ref]), ref)
            h.raw("</dd>\n")
        }
        if let d = event.delivery {
            h.fact("Answer", "\(d.status) \(d.reason ?? (d.status == 200 ? "accepted" : ""))")
            if let message = d.messageID { h.fact("Message", message) }
        }
        h.fact("Chain hash", code: SHA256.hex(stored.hash))
        h.raw("</dl>\n")
        for f in entry?.findings ?? [] {
            h.raw("<p class=\"finding\"><strong>⚠ \(f.code.rawValue)</strong> ")
            h.text(f.message(tokens: { c.token($0) }))
            h.raw("</p>\n")
        }
        if let n = event.notification {
            h.raw("<section aria-labelledby=\"reproduce\"><h2 id=\"reproduce\">Reproduce</h2>\n<ul class=\"asks\">\n")
            let formats: [(String, String)] =
                n.platform == .ios
                ? [("apns", "a .apns file for the iOS Simulator (xcrun simctl push)")]
                : [("fcm", "the FCM v1 send request"), ("adb", "an adb broadcast for the Android emulator")]
            for (format, what) in formats {
                h.raw("<li>")
                h.link(HTML.url(["v1", "events", event.id, "export"], [("format", format)]), "Download \(format)")
                h.text(": \(what)")
                h.raw("</li>\n")
            }
            h.raw("</ul></section>\n")
        }
        h.raw("<section aria-labelledby=\"raw\"><h2 id=\"raw\">As ingested</h2>\n")
        if c.isAdmin {
            h.raw("<p class=\"meta\">")
            if c.showTokens {
                h.link(HTML.url(["events", target]), "Mask device tokens")
            } else {
                h.link(HTML.url(["events", target], [("show_tokens", "1")]), "Show device tokens in full")
            }
            h.raw("</p>\n")
        }
        var decoder = EventDecoder()
        let masked = !c.showTokens
        let pretty = try stored.raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json in
                JSONPretty.render(json) { path in
                    (path == "device" || (path == "payload.token" && event.notification?.platform == .android))
                        && masked ? JSONValue.quoted(c.token(event.device)) : nil
                }
            }
        }
        h.raw("<pre class=\"json\" tabindex=\"0\">")
        h.text(pretty)
        h.raw("</pre>\n</section>\n")
        return page(title: "\(event.type) \(event.id)", body: h.out, search: event.id, c)
    }

    // MARK: - Audit

    /// `/audit?user=&task=&since=&until=&code=`: counts by code for the filter, each
    /// linking to its findings, each finding to its event and thread. With no filter,
    /// the form and links to the last day and week (a whole store's audit is `pushtrail
    /// audit`'s work, not a page's).
    public static func audit(_ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let query = try logQuery(c)
        var codes: [FindingCode] = []
        for text in (c.value("code") ?? "").split(separator: ",") {
            guard let code = FindingCode(rawValue: String(text)) else {
                throw SiteFailure(status: 400, message: "There is no finding code \(text).")
            }
            codes.append(code)
        }
        let filtered = query.user != nil || query.taskID != nil || query.threadID != nil || query.since != nil
        var h = HTMLBuilder()
        h.raw("<h1>Audit</h1>\n<form class=\"filters\" method=\"get\" action=\"/audit\">\n")
        for (name, label, hint) in [
            ("user", "User", "u_alice"), ("task", "Task", "1102"), ("thread", "Thread", "task-1102"),
            ("since", "Since", "2026-11-01 or -7d"), ("until", "Until", "2026-11-30"),
        ] {
            h.raw("<label>\(label) <input name=\"\(name)\" value=\"")
            h.text(c.query[name] ?? "")
            h.raw("\" placeholder=\"\(hint)\"></label>\n")
        }
        if let code = c.value("code") {
            h.raw("<input type=\"hidden\" name=\"code\" value=\"")
            h.text(code)
            h.raw("\">")
        }
        h.raw("<button type=\"submit\">Audit</button>\n</form>\n")
        guard filtered else {
            let newest = try reader.head().seq > 0 ? try reader.event(seq: reader.head().seq)?.position.at : nil
            h.raw("<p>Choose a user, a task, a thread or a time range.</p>\n")
            if let newest {
                h.raw("<ul class=\"asks\">\n")
                for (label, micros) in [("The last day", Int64(86_400_000_000)), ("The last 7 days", 604_800_000_000)] {
                    let since = Timestamp(microseconds: newest.microseconds - micros)
                    h.raw("<li>")
                    h.link(HTML.url(["audit"], [("since", since.description)]), label)
                    h.text(" before the newest event (\(newest))")
                    h.raw("</li>\n")
                }
                h.raw("</ul>\n")
            }
            return page(title: "Audit", body: h.out, search: "", c)
        }
        let all = try reader.audit(query)
        let findings = codes.isEmpty ? all : all.filter { codes.contains($0.code) }
        var counts: [FindingCode: Int] = [:]
        for f in all { counts[f.code, default: 0] += 1 }
        h.raw("<section aria-labelledby=\"counts\"><h2 id=\"counts\">Findings by code</h2>\n")
        if all.isEmpty {
            h.raw("<p role=\"status\"><span class=\"good\">✓</span> No findings for this filter.</p>\n")
        } else {
            h.raw(
                "<table>\n<thead><tr><th scope=\"col\">Code</th><th scope=\"col\">Findings</th></tr></thead>\n<tbody>\n"
            )
            for code in FindingCode.allCases {
                guard let n = counts[code] else { continue }
                var params = filterParams(c)
                params.append(("code", code.rawValue))
                h.raw("<tr><td>")
                h.link(HTML.url(["audit"], params), code.rawValue)
                h.raw(codes.contains(code) ? " <span class=\"meta\">(listed below)</span>" : "")
                h.raw("</td><td>\(n)</td></tr>\n")
            }
            h.raw("</tbody>\n</table>\n")
            if !codes.isEmpty {
                h.raw("<p>")
                h.link(HTML.url(["audit"], filterParams(c)), "Every code")
                h.raw("</p>\n")
            }
        }
        h.raw("</section>\n")
        if !findings.isEmpty {
            h.raw("<section aria-labelledby=\"findings\"><h2 id=\"findings\">Findings</h2>\n<ol class=\"findings\">\n")
            for f in findings.prefix(auditFindings) {
                h.raw("<li><strong>⚠ \(f.code.rawValue)</strong> ")
                time(&h, f.at)
                h.raw(" ")
                h.text(f.message(tokens: { c.token($0) }))
                h.raw("<br><span class=\"meta\">event ")
                h.link(HTML.url(["events", f.id]), f.id)
                if let thread = try reader.event(seq: f.seq)?.decode().threadID {
                    h.raw(" · thread ")
                    h.link(HTML.url(["threads", thread]), thread)
                }
                if let task = f.taskID {
                    h.raw(" · task ")
                    h.link(HTML.url(["tasks", String(task)]), String(task))
                }
                h.raw("</span></li>\n")
            }
            h.raw("</ol>\n")
            if findings.count > auditFindings {
                h.raw("<p class=\"meta\">")
                h.text("The first \(auditFindings) of \(findings.count): narrow the filter, or run pushtrail audit.")
                h.raw("</p>\n")
            }
            h.raw("</section>\n")
        }
        return page(title: "Audit", body: h.out, search: "", c)
    }

    /// The `log` filters of the request (named as the command line's options, `_` for `-`).
    static func logQuery(_ c: SiteContext) throws -> LogQuery {
        do throws(LogQuery.Invalid) {
            return try LogQuery.parse({ c.value(String($0.map { $0 == "-" ? "_" : $0 })) }, now: c.now)
        } catch {
            throw SiteFailure(status: 400, message: error.description)
        }
    }

    /// The audit's filters as the request gave them, for links.
    private static func filterParams(_ c: SiteContext) -> [(String, String?)] {
        ["user", "task", "thread", "since", "until"].map { ($0, c.value($0)) }
    }

    // MARK: - Live

    /// `/live?…log filters`: the newest events, then, where JavaScript runs, new ones
    /// as they arrive (the SSE stream); without it, a link that reloads the page.
    public static func live(_ reader: StoreReader, _ c: SiteContext) throws -> SitePage {
        let query = try logQuery(c)
        var newest: [LoadedEvent] = []
        try reader.log(query, reverse: true) { loaded in
            newest.append(loaded)
            return newest.count < liveEvents
        }
        let params = ["user", "task", "thread", "type", "category"].map { ($0, c.value($0)) }
        let after = newest.first?.seq ?? 0
        var h = HTMLBuilder()
        h.raw("<h1>Live</h1>\n<p id=\"live-status\" role=\"status\" aria-live=\"polite\">")
        h.text("The newest events, as of @\(try reader.head().seq). ")
        h.link(HTML.url(["live"], params), "Refresh")
        h.raw("</p>\n")
        h.raw("<ol id=\"live-events\" class=\"events\" data-stream=\"")
        h.text(HTML.url(["v1", "stream"], params + [("after", String(try reader.head().seq))]))
        h.raw("\" data-after=\"\(after)\">\n")
        eventRowItems(&h, newest, c)
        h.raw("</ol>\n")
        return page(title: "Live", body: h.out, search: "", c, script: true)
    }

    // MARK: - Pieces

    /// Events as rows: when, what, whose, with links.
    private static func eventRows(_ h: inout HTMLBuilder, _ events: [LoadedEvent], _ c: SiteContext) {
        h.raw("<ol class=\"events\">\n")
        eventRowItems(&h, events, c)
        h.raw("</ol>\n")
    }

    private static func eventRowItems(_ h: inout HTMLBuilder, _ events: [LoadedEvent], _ c: SiteContext) {
        for e in events {
            h.raw("<li>")
            time(&h, e.event.at)
            h.raw(" <span class=\"type\">\(e.event.type)</span> ")
            h.link(HTML.url(["events", e.event.id]), e.event.id)
            h.raw(" ")
            h.text(summary(e.event))
            h.raw(" <span class=\"meta\">#\(e.seq) · user ")
            h.link(HTML.url(["users", e.event.user]), e.event.user)
            if let thread = e.event.threadID {
                h.raw(" · thread ")
                h.link(HTML.url(["threads", thread]), thread)
            }
            h.raw("</span></li>\n")
        }
    }

    /// What an event says, in a few words.
    static func summary(_ event: Event) -> String {
        switch event.body {
        case .notification(let n):
            let buttons = n.shownButtons.isEmpty ? "no buttons" : n.shownButtons.joined(separator: ", ")
            return "\(platformName(n.platform)) \(n.category ?? "(no category)") [\(buttons)] "
                + (n.title ?? n.body ?? "")
        case .action(let a):
            return "\(a.action.rawValue) → \(a.outcome.rawValue)" + (a.httpStatus.map { " (HTTP \($0))" } ?? "")
        case .delivery(let d):
            return "\(d.status) \(d.reason ?? (d.status == 200 ? "accepted" : ""))"
        }
    }

    static func platformName(_ p: Platform) -> String { p == .ios ? "iOS" : "Android" }

    private static func time(_ h: inout HTMLBuilder, _ t: Timestamp) {
        h.raw("<time datetime=\"\(HTML.escape(t.description))\">")
        h.text(t.description)
        h.raw("</time>")
    }

    /// `at` (and `through`) of the request: a time, `@SEQ`, or a time pinned to `@SEQ`.
    static func asOf(_ c: SiteContext) throws -> Horizon? {
        guard let text = c.value("at") else { return nil }
        let horizon: Horizon
        do {
            horizon = try TimeExpression.parse(text, now: c.now)
        } catch {
            throw SiteFailure(status: 400, message: "As of: \(error)")
        }
        guard let through = c.value("through") else { return horizon }
        guard let seq = UInt64(through.hasPrefix("@") ? String(through.dropFirst()) : through),
            case .time(let t) = horizon
        else {
            throw SiteFailure(status: 400, message: "through takes @SEQ, with a time as at.")
        }
        return .pinned(t, through: seq)
    }

    /// The `at` that states `horizon` in a URL.
    static func atText(_ horizon: Horizon?) -> String? {
        switch horizon {
        case .time(let t)?, .pinned(let t, _)?: t.description
        case .sequence(let n)?: "@\(n)"
        case nil: nil
        }
    }

    private static func atNote(_ horizon: Horizon?) -> String {
        horizon == nil ? "" : " as of \(atText(horizon) ?? "")"
    }

    /// A positive count in the query, or `default`.
    private static func count(_ c: SiteContext, _ name: String, default value: Int) throws -> Int {
        guard let text = c.value(name) else { return value }
        guard let n = Int(text), n > 0 else {
            throw SiteFailure(status: 400, message: "\(name) takes a positive count, not \(text).")
        }
        return n
    }

    /// The "as of" control: what the page shows, a form to choose another moment, the
    /// previous and next event of the timeline (`steps`), and the link that shows
    /// exactly this forever.
    private static func asOfBar(
        _ h: inout HTMLBuilder, _ horizon: Horizon?, head: ChainHead, path: [String],
        steps: (shown: [UInt64], every: [UInt64])?, _ c: SiteContext
    ) {
        h.raw("<nav class=\"asof\" aria-label=\"As of\">\n<form method=\"get\" action=\"")
        h.text(HTML.url(path))
        h.raw("\">\n<label for=\"at\">As of</label> <input id=\"at\" name=\"at\" value=\"")
        h.text(atText(horizon) ?? "")
        h.raw("\" placeholder=\"now, 2026-11-08T23:59:00Z or @120\"> <button type=\"submit\">Show</button>\n")
        if c.showTokens { h.raw("<input type=\"hidden\" name=\"show_tokens\" value=\"1\">") }
        h.raw("</form>\n<p>")
        let pinned: Horizon
        switch horizon {
        case nil:
            h.text("Showing everything the store holds (@\(head.seq)). ")
            pinned = .sequence(head.seq)
        case .sequence(let n)?:
            h.text("Showing the store as it was after event @\(min(n, head.seq)). ")
            pinned = .sequence(min(n, head.seq))
        case .time(let t)?:
            h.text("Showing what had happened by \(t), as the store knows it now. ")
            pinned = .pinned(t, through: head.seq)
        case .pinned(let t, let n)?:
            h.text("Showing what had happened by \(t), as the store knew it at @\(min(n, head.seq)). ")
            pinned = .pinned(t, through: min(n, head.seq))
        }
        var params: [(String, String?)] = [("at", atText(pinned))]
        if case .pinned(_, let n) = pinned { params.append(("through", "@\(n)")) }
        params.append(("limit", c.value("limit")))
        if c.showTokens { params.append(("show_tokens", "1")) }
        h.link(HTML.url(path, params), "Link to exactly this", cls: "permalink")
        if let steps {
            // Step through the timeline's own events in the order the store took them.
            let last = steps.shown.max() ?? 0
            let previous = steps.every.filter { $0 < last }.max()
            let next = steps.every.filter { $0 > last }.min()
            h.raw("</p>\n<p class=\"steps\">")
            if let previous {
                h.link(HTML.url(path, [("at", "@\(previous)")]), "← Previous event (@\(previous))", cls: "step")
            } else {
                h.raw("<span class=\"meta\">No earlier event</span>")
            }
            h.raw(" · ")
            if let next {
                h.link(HTML.url(path, [("at", "@\(next)")]), "Next event (@\(next)) →", cls: "step")
            } else {
                h.raw("<span class=\"meta\">No later event</span>")
            }
            if horizon != nil {
                h.raw(" · ")
                h.link(HTML.url(path), "Now")
            }
        }
        h.raw("</p>\n</nav>\n")
    }

    private static func searchForm(_ h: inout HTMLBuilder, _ q: String, big: Bool = false) {
        h.raw("<form role=\"search\" class=\"search\(big ? " big" : "")\" method=\"get\" action=\"/search\">")
        h.raw("<label for=\"q\(big ? "-home" : "")\" class=\"visually-hidden\">Search</label>")
        h.raw("<input id=\"q\(big ? "-home" : "")\" name=\"q\" type=\"search\" value=\"")
        h.text(q)
        h.raw("\" placeholder=\"user, task, thread, event id or text\">")
        h.raw("<button type=\"submit\">Search</button></form>\n")
    }

    /// A whole page: the bar with the search box, then `body`.
    /// The bar's search box shows `search` (nil: no box in the bar, the page has its own).
    static func page(title: String, body: String, search: String?, _ c: SiteContext, script: Bool = false) -> SitePage {
        var h = HTMLBuilder()
        h.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
        h.text("\(title) · pushtrail")
        h.raw("</title>\n<link rel=\"stylesheet\" href=\"/assets/site.css\">\n")
        if script { h.raw("<script src=\"/assets/live.js\" defer></script>\n") }
        h.raw("</head>\n<body>\n<a class=\"skip\" href=\"#main\">Skip to the page</a>\n<header class=\"bar\">\n")
        h.raw("<nav aria-label=\"Site\"><a href=\"/\" class=\"home\">pushtrail</a> <a href=\"/audit\">Audit</a> ")
        h.raw("<a href=\"/live\">Live</a></nav>\n")
        if let search { searchForm(&h, search) }
        h.raw("<form method=\"post\" action=\"/logout\" class=\"signout\"><span class=\"meta\">")
        h.text("\(c.role) role")
        h.raw("</span> <button type=\"submit\">Sign out</button></form>\n")
        h.raw("</header>\n<main id=\"main\" tabindex=\"-1\">\n")
        h.raw(body)
        h.raw("</main>\n<footer>")
        h.text("pushtrail \(c.version)")
        h.raw(" · <a href=\"/v1/head\">chain head</a> · <a href=\"/v1/stats\">stats</a> · ")
        h.raw("<a href=\"/metrics\">metrics</a></footer>\n</body>\n</html>\n")
        return SitePage(status: 200, html: h.out, location: nil)
    }

    /// The page for a failure: its status and message, and the search box.
    public static func failure(_ f: SiteFailure, _ c: SiteContext) -> SitePage {
        var h = HTMLBuilder()
        h.raw("<h1>\(f.status == 404 ? "Not found" : "Cannot show this")</h1>\n<p role=\"alert\">")
        h.text(f.message)
        h.raw("</p>\n<p>Search for something else above, or go back to <a href=\"/\">the start</a>.</p>\n")
        var p = page(title: f.status == 404 ? "Not found" : "Error", body: h.out, search: "", c)
        p.status = f.status
        return p
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
