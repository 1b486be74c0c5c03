import PushTrailModel
import PushTrailStore

/// How a timeline is drawn: the names on the notification cards, how device tokens
/// show, and whether ids link to the server's pages.
public struct TimelineView: Sendable {
    /// What the timeline is of: "thread task-1102", "task 1102".
    public var subject: String
    /// The app's name on the iOS banners.
    public var appName: String
    /// The app's name on the Android cards.
    public var androidAppName: String
    /// The event times are shown relative to.
    public var anchor: LoadedEvent?
    /// Device tokens as they may be shown (masked unless asked otherwise).
    public var token: @Sendable (String?) -> String
    /// Ids, users and tasks link to their pages (the server's); a standalone report
    /// links nowhere.
    public var links: Bool
    /// The page anchor of an entry: `seq-N`, and over a cluster, whose seqs repeat from
    /// shard to shard, `seq-SHARD-N`.
    public var entryAnchor: @Sendable (LoadedEvent) -> String = { "seq-\($0.seq)" }

    public init(
        subject: String, appName: String, androidAppName: String, anchor: LoadedEvent?,
        token: @escaping @Sendable (String?) -> String, links: Bool
    ) {
        self.subject = subject
        self.appName = appName
        self.androidAppName = androidAppName
        self.anchor = anchor
        self.token = token
        self.links = links
    }

    /// The app names the cards show: `name` if given, else the last part of the iOS
    /// topic or of the Android package, else "App".
    public static func appNames(_ entries: [TimelineEntry], name: String?) -> (ios: String, android: String) {
        let topic = entries.lazy.compactMap { $0.loaded.event.notification?.topic }.first
        let package = entries.lazy.filter { $0.loaded.event.notification?.platform == .android }.compactMap {
            androidPackage($0.loaded.stored.raw)
        }.first
        func lastPart(_ id: String?) -> String? { id.flatMap { $0.split(separator: ".").last.map(String.init) } }
        let ios = name ?? lastPart(topic) ?? lastPart(package) ?? "App"
        return (ios, name ?? lastPart(package) ?? ios)
    }

    /// An Android notification's `payload.android.restricted_package_name`: the app
    /// that FCM delivers it to.
    public static func androidPackage(_ raw: [UInt8]) -> String? {
        var decoder = EventDecoder()
        return try? raw.withUnsafeBytes { bytes in
            try decoder.withView(bytes) { json -> String? in
                json.member(json.root, "payload").flatMap { json.member($0, "android") }
                    .flatMap { json.member($0, "restricted_package_name") }.flatMap { json.string($0) }
            }
        }
    }
}

/// A timeline drawn in HTML, notifications as iOS or Android shows them: the body of
/// `report`'s page and of the server's thread, task and user pages.
///
/// Safety: every string from the store goes through `HTML.escape` into text content, or
/// through `HTML.url` into a link this file makes; none reaches a style or a script.
/// Other attributes hold only values this file makes (class names, seq numbers, RFC
/// 3339 times).
enum Timeline {
    /// The entries as an ordered list.
    static func list(_ h: inout HTMLBuilder, _ entries: [TimelineEntry], _ view: TimelineView) {
        h.raw("<ol class=\"timeline\">\n")
        // The push service behind each notification, for the delivery answers.
        var platforms: [String: Platform] = [:]
        for e in entries {
            if let n = e.loaded.event.notification {
                platforms[EventID.normalizedNotificationIDString(e.loaded.event.id)] = n.platform
            }
        }
        for entry in entries { self.entry(&h, entry, view, platforms: platforms) }
        h.raw("</ol>\n")
    }

    /// The tasks of the timeline and their state after its last event.
    static func tasks(_ h: inout HTMLBuilder, _ entries: [TimelineEntry], links: Bool = false) {
        var order: [Int64] = []
        var state: [Int64: TaskState] = [:]
        var named: [Int64: PushNotification] = [:]
        for e in entries {
            guard let t = e.taskID, let s = e.taskState else { continue }
            if state[t] == nil { order.append(t) }
            state[t] = s
            if let n = e.loaded.event.notification { named[t] = n }
        }
        guard !order.isEmpty else { return }
        h.raw(
            "<table class=\"tasks\">\n<thead><tr><th>Task</th><th>Name</th><th>Residence</th>"
                + "<th>State at the end</th></tr></thead>\n<tbody>\n"
        )
        for t in order {
            let (s, n) = (state[t]!, named[t])
            h.raw("<tr><td>")
            if links { h.link(HTML.url(["tasks", String(t)]), String(t)) } else { h.text(String(t)) }
            h.raw("</td><td>")
            h.text(n?.taskName ?? "")
            h.raw("</td><td>")
            h.text(n?.residenceName ?? "")
            h.raw("</td><td><span class=\"state \(s.rawValue)\">")
            h.text(s.rawValue)
            h.raw("</span></td></tr>\n")
        }
        h.raw("</tbody>\n</table>\n")
    }

    private static func entry(
        _ h: inout HTMLBuilder, _ entry: TimelineEntry, _ c: TimelineView, platforms: [String: Platform]
    ) {
        let anchor = c.anchor
        let e = entry.loaded.event
        let flagged = entry.findings.isEmpty ? "" : " flagged"
        let outside = entry.member ? "" : " outside"
        let android = e.notification?.platform == .android ? " android" : ""
        let id = HTML.escape(c.entryAnchor(entry.loaded))
        h.raw(
            "<li class=\"entry \(e.type)\(android)\(flagged)\(outside)\" id=\"\(id)\">\n"
                + "<div class=\"when\"><time datetime=\"\(e.at)\">"
        )
        h.text(e.at.description)
        h.raw("</time>")
        if let relative = TimelineText.relative(entry.loaded, to: anchor) {
            h.raw("<span class=\"relative\">")
            h.text(relative)
            h.raw("</span>")
        }
        h.raw("<span class=\"seq\">#\(entry.loaded.seq)</span></div>\n<div class=\"what\">\n")
        if !entry.member {
            h.tag("p", "note", "Not part of \(c.subject): shown because it changed the task's state.")
        }
        switch e.body {
        case .notification(let n) where n.platform == .android: androidCard(&h, n, e, c)
        case .notification(let n): notification(&h, n, e, c)
        case .action(let a): action(&h, a, e)
        case .delivery(let d):
            delivery(&h, d, e, platform: platforms[d.notificationID] ?? d.impliedPlatform)
        }
        h.raw("<p class=\"meta\">")
        if c.links {
            h.raw("id ")
            h.link(HTML.url(["events", e.id]), e.id)
            h.raw(" · user ")
            h.link(HTML.url(["users", e.user]), e.user)
            if e.device != nil { h.text(" · device \(c.token(e.device))") }
            if let ref = e.referencedNotificationID {
                h.raw(" · for notification ")
                h.link(HTML.url(["events", ref]), ref)
            }
        } else {
            var meta = ["id \(e.id)", "user \(e.user)"]
            if e.device != nil { meta.append("device \(c.token(e.device))") }
            if let ref = e.referencedNotificationID { meta.append("for notification \(ref)") }
            h.text(meta.joined(separator: " · "))
        }
        h.raw("</p>\n")
        if let t = entry.taskID, let s = entry.taskState {
            if let tr = entry.transition, tr.from != tr.to {
                h.raw("<p class=\"change\">task ")
                taskNumber(&h, t, links: c.links)
                h.raw(
                    ": <span class=\"state \(tr.from.rawValue)\">\(tr.from.rawValue)</span> → "
                        + "<span class=\"state \(s.rawValue)\">\(s.rawValue)</span></p>\n"
                )
            } else {
                h.raw("<p class=\"after\">task ")
                taskNumber(&h, t, links: c.links)
                h.raw(" is <span class=\"state \(s.rawValue)\">\(s.rawValue)</span></p>\n")
            }
        }
        for f in entry.findings {
            h.raw("<p class=\"finding\"><strong>⚠ \(f.code.rawValue)</strong> ")
            h.text(f.message(tokens: { c.token($0) }))
            h.raw("</p>\n")
        }
        h.raw("</div>\n</li>\n")
    }

    private static func taskNumber(_ h: inout HTMLBuilder, _ t: Int64, links: Bool) {
        if links { h.link(HTML.url(["tasks", String(t)]), String(t)) } else { h.text(String(t)) }
    }

    /// The banner as iOS draws it, with the buttons of its category below.
    private static func notification(_ h: inout HTMLBuilder, _ n: PushNotification, _ e: Event, _ c: TimelineView) {
        h.raw("<div class=\"banner\">\n<div class=\"app\"><span class=\"icon\">")
        h.text(String(c.appName.first.map(String.init)?.uppercased() ?? "?"))
        h.raw("</span><span class=\"name\">")
        h.text(c.appName)
        h.raw("</span><span class=\"clock\">")
        h.text(clockTime(e.at))
        h.raw("</span></div>\n")
        if let title = n.title { h.tag("p", "title", title) }
        if let subtitle = n.subtitle { h.tag("p", "subtitle", subtitle) }
        if let body = n.body { h.tag("p", "body", body) }
        if n.title == nil && n.subtitle == nil && n.body == nil {
            h.tag("p", "body empty", "(no alert text: a silent or badge-only push)")
        }
        h.raw("</div>\n")
        let buttons = Category.buttons(of: n.category)
        if !buttons.isEmpty {
            h.raw("<ul class=\"buttons\">")
            for b in buttons { h.raw("<li>\(label(b))</li>") }
            h.raw("</ul>\n")
        }
        var meta = ["category \(n.category ?? "(none)")"]
        if Category(rawValue: n.category ?? "") == nil { meta.append("not registered by the app: no buttons") }
        if let type = n.notificationType { meta.append(type) }
        if let types = n.buttons { meta.append("button_types [\(types.joined(separator: ", "))]") }
        if let premium = n.isPremium { meta.append(premium ? "premium" : "free") }
        meta.append("\(n.payloadSize) bytes")
        h.tag("p", "meta", meta.joined(separator: " · "))
    }

    /// The notification as Android draws it in the shade: a card with the app's small
    /// icon and name in its header, the title and body, and at most three text buttons.
    /// The buttons the message asked for but the user never saw follow, struck through
    /// and named "not shown" (colour is not the only sign), with the reason: Android
    /// shows no more than three, and the system shows a notification message itself,
    /// without the app and so without its buttons, while the app is in the background.
    private static func androidCard(_ h: inout HTMLBuilder, _ n: PushNotification, _ e: Event, _ c: TimelineView) {
        let limit = PushNotification.androidButtonLimit
        let systemShown = !n.notificationBlocks.isEmpty
        let seen = systemShown ? [] : n.shownButtons
        let unseen = (systemShown ? n.shownButtons : []) + n.hiddenButtons

        h.raw("<div class=\"card\">\n<div class=\"card-head\"><span class=\"glyph\">")
        h.text(String(c.androidAppName.first.map(String.init)?.uppercased() ?? "?"))
        h.raw("</span><span class=\"app\">")
        h.text(c.androidAppName)
        h.raw("</span>")
        if let subtitle = n.subtitle {
            h.raw("<span class=\"sub\">")
            h.text(subtitle)
            h.raw("</span>")
        }
        h.raw("<span class=\"clock\">")
        h.text(clockTime(e.at))
        h.raw("</span></div>\n")
        if let title = n.title { h.tag("p", "title", title) }
        if let body = n.body { h.tag("p", "body", body) }
        if n.title == nil && n.body == nil { h.tag("p", "body empty", "(no title or body in the message)") }
        if !seen.isEmpty {
            h.raw("<ul class=\"actions\">")
            for b in seen {
                h.raw("<li class=\"seen\">")
                h.text(label(b))
                h.raw("</li>")
            }
            h.raw("</ul>\n")
        }
        if !unseen.isEmpty {
            h.raw("<div class=\"unseen\">\n<ul class=\"actions\">")
            for b in unseen {
                h.raw("<li class=\"unseen\"><span class=\"label\">")
                h.text(label(b))
                h.raw("</span> <span class=\"tag\">not shown</span></li>")
            }
            h.raw("</ul>\n")
            if systemShown {
                h.tag(
                    "p", "why",
                    "Not shown: the system displayed this notification without the app (the message has a "
                        + n.notificationBlocks.joined(separator: " and ") + " block), so none of its buttons appeared "
                        + "while the app was in the background.")
            }
            if !n.hiddenButtons.isEmpty {
                h.tag(
                    "p", "why",
                    "Not shown: Android shows at most \(limit) action buttons, and button_types lists "
                        + "\(n.buttons?.count ?? 0).")
            }
            h.raw("</div>\n")
        }
        h.raw("</div>\n")
        var meta = ["android", "category \(n.category ?? "(none)")"]
        if let type = n.notificationType { meta.append(type) }
        if let types = n.buttons { meta.append("button_types [\(types.joined(separator: ", "))]") }
        if let premium = n.isPremium { meta.append(premium ? "premium" : "free") }
        meta.append("\(n.payloadSize) bytes as FCM counts them")
        h.tag("p", "meta", meta.joined(separator: " · "))
    }

    private static func action(_ h: inout HTMLBuilder, _ a: ActionResponse, _ e: Event) {
        h.raw("<p class=\"press \(a.outcome.rawValue)\">")
        h.text("\(e.user) pressed ")
        h.raw("<strong>\(label(a.action))</strong> → <span class=\"outcome\">\(a.outcome.rawValue)</span>")
        var answer: [String] = []
        if let s = a.httpStatus { answer.append("HTTP \(s)") }
        if let m = a.error { answer.append(m) }
        if !answer.isEmpty {
            h.raw(" <span class=\"answer\">")
            h.text(answer.joined(separator: ": "))
            h.raw("</span>")
        }
        h.raw("</p>\n")
        if !a.changes.isEmpty {
            h.tag("p", "meta", "changes " + a.changes.map { "\($0.key) = \($0.value)" }.joined(separator: ", "))
        }
    }

    /// The push service's answer: APNs' or FCM's, by the notification it answers.
    private static func delivery(_ h: inout HTMLBuilder, _ d: Delivery, _ e: Event, platform: Platform) {
        let ok = d.status == 200
        let service = platform == .android ? "fcm" : "apns"
        h.raw(
            "<p class=\"\(service) \(ok ? "ok" : "failed")\">\(platform.service) answered <strong>\(d.status)</strong> "
        )
        h.text(d.reason ?? (ok ? "accepted" : ""))
        h.raw("</p>\n")
        if let message = d.messageID { h.tag("p", "meta", "message " + message) }
    }

    /// "3 notifications · 1 action · 4 deliveries": the members of each type.
    static func counts(_ entries: [TimelineEntry]) -> String {
        var counts: [EventType: Int] = [:]
        for e in entries where e.member { counts[e.loaded.event.type, default: 0] += 1 }
        return EventType.allCases.map { counted(counts[$0, default: 0], $0) }.joined(separator: " · ")
    }

    /// The warning above a timeline with findings, which are highlighted below it.
    static func findingsAlert(_ h: inout HTMLBuilder, _ entries: [TimelineEntry]) {
        let findings = entries.reduce(0) { $0 + $1.findings.count }
        guard findings > 0 else { return }
        h.raw("<p class=\"alert\">⚠ ")
        h.text("\(findings) audit finding\(findings == 1 ? "" : "s") in this timeline, highlighted below.")
        h.raw("</p>\n")
    }

    /// "1 action", "4 deliveries".
    private static func counted(_ n: Int, _ type: EventType) -> String {
        "\(n) \(n == 1 ? type.description : type.plural)"
    }

    /// A button's label as the app shows it ("Mark In Progress").
    static func label(_ action: ActionKind) -> String { label(action.rawValue) }

    /// The label of a button named in `button_types`, which may name any button.
    static func label(_ name: String) -> String {
        name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }

    /// "08:00" from an RFC 3339 time (UTC), as a banner shows it.
    private static func clockTime(_ t: Timestamp) -> String {
        let s = t.description
        guard let tIndex = s.firstIndex(of: "T") else { return s }
        return String(s[s.index(after: tIndex)...].prefix(5)) + " UTC"
    }

    static let stylesheet = """

        :root { color-scheme: light; --ink: #1c1c1e; --dim: #6e6e73; --line: #d8d8dc; --warn: #b25000; --bad: #c41e3a; \
        --good: #1e7b34; }
        * { box-sizing: border-box; }
        body { margin: 0 auto; max-width: 980px; padding: 24px; \
        font: 14px/1.45 -apple-system, "SF Pro Text", "Helvetica Neue", Arial, sans-serif; color: var(--ink); \
        background: #f2f2f7; }
        h1 { font-size: 22px; margin: 0 0 12px; overflow-wrap: anywhere; }
        code { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
        .facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 16px; }
        .facts dt { color: var(--dim); }
        .facts dd { margin: 0; overflow-wrap: anywhere; }
        .alert { background: #fff4e5; border: 1px solid #f5c27a; border-radius: 8px; padding: 8px 12px; \
        color: var(--warn); font-weight: 600; }
        table.tasks { border-collapse: collapse; margin: 8px 0 16px; background: #fff; border-radius: 8px; \
        overflow: hidden; }
        table.tasks th, table.tasks td { text-align: left; padding: 6px 12px; border-bottom: 1px solid var(--line); }
        table.tasks th { color: var(--dim); font-weight: 500; }
        .timeline { list-style: none; margin: 0; padding: 0; border-left: 2px solid var(--line); }
        .entry { display: grid; grid-template-columns: 210px 1fr; gap: 16px; padding: 12px 0 12px 16px; \
        position: relative; }
        .entry::before { content: ""; position: absolute; left: -7px; top: 18px; width: 12px; height: 12px; \
        border-radius: 50%; background: var(--dim); }
        .entry.notification::before { background: #007aff; }
        .entry.notification.android::before { background: #0b57d0; }
        .entry.flagged::before { background: var(--warn); }
        .entry.flagged .what { border-left: 4px solid var(--warn); padding-left: 10px; }
        .when { color: var(--dim); font-size: 12px; display: flex; flex-direction: column; }
        .when time { color: var(--ink); font-variant-numeric: tabular-nums; }
        .seq { font-family: ui-monospace, Menlo, monospace; }
        .what { min-width: 0; }
        .what p { margin: 4px 0; overflow-wrap: anywhere; }
        .banner { max-width: 380px; background: rgba(250, 250, 252, 0.92); border-radius: 16px; \
        padding: 10px 14px 12px; box-shadow: 0 2px 10px rgba(0, 0, 0, 0.12); }
        .banner .app { display: flex; align-items: center; gap: 6px; color: var(--dim); font-size: 12px; \
        text-transform: uppercase; letter-spacing: 0.02em; }
        .banner .icon { width: 20px; height: 20px; border-radius: 5px; background: linear-gradient(#ffb340, #ff8c00); \
        color: #fff; display: inline-flex; align-items: center; justify-content: center; font-weight: 700; \
        font-size: 12px; }
        .banner .name { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .banner .title { font-weight: 600; margin: 6px 0 0; }
        .banner .subtitle { font-weight: 500; margin: 0; }
        .banner .body { margin: 0; white-space: pre-wrap; }
        .banner .empty { color: var(--dim); font-style: italic; }
        .buttons { list-style: none; max-width: 380px; margin: 6px 0 0; padding: 0; \
        background: rgba(250, 250, 252, 0.92); border-radius: 14px; overflow: hidden; \
        box-shadow: 0 2px 10px rgba(0, 0, 0, 0.08); }
        .buttons li { padding: 10px 14px; color: #007aff; font-size: 15px; border-top: 1px solid var(--line); }
        .buttons li:first-child { border-top: 0; }
        .meta { color: var(--dim); font-size: 12px; }
        .outside { opacity: 0.7; }
        .entry.outside::before { background: #fff; border: 2px solid var(--dim); }
        .note { color: var(--dim); font-size: 12px; font-style: italic; }
        .press { font-size: 15px; }
        .press .outcome { font-weight: 600; }
        .press.ok .outcome, .apns.ok strong, .fcm.ok strong { color: var(--good); }
        .press.rejected .outcome { color: var(--warn); }
        .press.failed .outcome, .apns.failed, .fcm.failed { color: var(--bad); }
        .answer { color: var(--dim); }
        .state { display: inline-block; padding: 0 6px; border-radius: 4px; background: #e5e5ea; font-weight: 600; \
        font-size: 12px; }
        .state.completed { background: #d6f5dd; } .state.cancelled, .state.deleted { background: #fadadd; } \
        .state.in_progress { background: #dbe9ff; }
        .finding { background: #fff4e5; border-radius: 6px; padding: 6px 10px; color: var(--warn); }
        .card { max-width: 412px; background: #fff; border-radius: 20px; padding: 12px 16px 10px; \
        box-shadow: 0 1px 3px rgba(0, 0, 0, 0.18), 0 2px 8px rgba(0, 0, 0, 0.08); \
        font-family: Roboto, "Google Sans", "Noto Sans", system-ui, sans-serif; color: #1f1f1f; }
        .card-head { display: flex; align-items: center; flex-wrap: wrap; gap: 0 6px; font-size: 12px; color: #5f6368; }
        .card-head .glyph { width: 18px; height: 18px; border-radius: 50%; background: #0b57d0; color: #fff; \
        display: inline-flex; align-items: center; justify-content: center; font-size: 10px; font-weight: 700; }
        .card-head .app { color: #1f1f1f; overflow-wrap: anywhere; }
        .card-head .sub::before, .card-head .clock::before { content: "•"; margin-right: 6px; }
        .card-head .sub { overflow-wrap: anywhere; }
        .card .title { font-size: 15px; font-weight: 500; margin: 8px 0 0; }
        .card .body { font-size: 14px; color: #444746; margin: 2px 0 0; white-space: pre-wrap; }
        .card .empty { color: var(--dim); font-style: italic; }
        .card .actions { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 20px; margin: 10px 0 0; \
        padding: 0; }
        .card .actions li { color: #0b57d0; font-size: 13px; font-weight: 500; letter-spacing: 0.06em; \
        text-transform: uppercase; padding: 6px 0; overflow-wrap: anywhere; }
        .card div.unseen { border-top: 1px dashed var(--line); margin-top: 8px; }
        .card .actions li.unseen { color: #80868b; }
        .card li.unseen .label { text-decoration: line-through; text-decoration-thickness: 2px; }
        .card li.unseen .tag { text-transform: none; letter-spacing: 0; font-weight: 600; font-size: 11px; \
        color: var(--warn); border: 1px solid currentColor; border-radius: 4px; padding: 0 4px; margin-left: 2px; \
        white-space: nowrap; }
        .card .why { font-size: 12px; color: #5f6368; margin: 2px 0 4px; }
        footer { color: var(--dim); font-size: 12px; margin-top: 24px; }
        @media (max-width: 600px) { body { padding: 12px; } .entry { grid-template-columns: 1fr; gap: 4px; } \
        .when { flex-direction: row; flex-wrap: wrap; gap: 0 8px; } }
        @media print { body { background: #fff; } \
        .banner, .buttons, .card { box-shadow: none; border: 1px solid var(--line); } }

        """
}
