import PushTrailModel
import PushTrailStore
import PushTrailWeb

/// Shared pieces of the human and JSON views of events.
enum Render {
    /// One line describing what happened, for timelines. A notification names its
    /// platform and the buttons it showed; on Android, those the user never saw too
    /// (past Android's three, or all of a notification message's).
    static func headline(_ event: Event, style: Style) -> String {
        switch event.body {
        case .notification(let n):
            var s = "notification " + n.platform.rawValue + " " + style.bold(n.category.map(oneLine) ?? "(no category)")
            let buttons = n.shownButtons
            if buttons.isEmpty {
                s += " (no buttons)"
            } else {
                s += " [" + list(buttons) + "]"
            }
            if n.platform == .android {
                let hidden = n.hiddenButtons
                if !hidden.isEmpty { s += " (not shown: " + list(hidden) + ")" }
                if !n.notificationBlocks.isEmpty && !buttons.isEmpty {
                    s += " (a notification message: no buttons while the app is in the background)"
                }
            }
            if let title = n.title ?? n.body { s += " \"" + oneLine(title) + "\"" }
            return s
        case .action(let a):
            var s = "action " + style.bold(a.action.rawValue) + " → "
            switch a.outcome {
            case .ok: s += style.green("ok")
            case .rejected: s += style.yellow("rejected")
            case .failed: s += style.red("failed")
            }
            switch (a.httpStatus, a.error) {
            case (let h?, let e?): s += " (HTTP " + String(h) + ": " + oneLine(e) + ")"
            case (let h?, nil): s += " (HTTP " + String(h) + ")"
            case (nil, let e?): s += " (" + oneLine(e) + ")"
            case (nil, nil): break
            }
            return s
        case .delivery(let d):
            let ok = d.status == 200
            let text = "delivery " + String(d.status) + (d.reason.map { " " + oneLine($0) } ?? (ok ? " accepted" : ""))
            return ok ? text : style.red(text)
        }
    }

    /// Button names, "a, b, c", each on one line.
    private static func list(_ names: some Sequence<String>) -> String {
        var s = ""
        for (i, b) in names.enumerated() {
            if i > 0 { s += ", " }
            s += oneLine(b)
        }
        return s
    }

    /// `s` as one sh word: bare when plainly safe (unless `quoted`), else in single
    /// quotes with each `'` written as `'\''` (see `ShellQuote`, which finds every quote,
    /// one followed by a combining mark too).
    static func shellWord(_ s: String, quoted: Bool = false) -> String {
        quoted && ShellQuote.isPlain(s) ? "'" + s + "'" : ShellQuote.word(s)
    }

    /// Text made safe for one terminal line: control characters shown as symbols.
    static func oneLine(_ s: String) -> String { MessageText.oneLine(s) }

    /// The event that relative times in a timeline are measured from: the one
    /// `--relative-to` names (an id or @SEQ of the timeline), else the last button
    /// press (what support asks about: "I pressed complete and…"), else the last
    /// action, else the last event.
    static func anchor(in events: [LoadedEvent], relativeTo wanted: String? = nil) throws -> LoadedEvent? {
        if let wanted {
            let seq = wanted.hasPrefix("@") ? UInt64(wanted.dropFirst()) : nil
            guard let found = events.first(where: { $0.event.id == wanted || $0.seq == seq }) else {
                throw UsageError(
                    "--relative-to \(oneLine(wanted)) is not an event of this timeline: give an id or @SEQ it lists")
            }
            return found
        }
        return TimelineText.anchor(in: events)
    }

    static let relativeToOption = OptionSpec.option(
        "relative-to", "EVENT", "show times relative to this event (an id or @SEQ; default: the last button pressed)")

    /// "the complete", "the notification", "the delivery": how a line names the anchor.
    static func anchorName(_ event: Event) -> String { TimelineText.anchorName(event) }

    /// The second line of a timeline entry: when relative to the anchor, and whose.
    static func details(_ loaded: LoadedEvent, anchor: LoadedEvent?, _ device: String) -> String {
        let e = loaded.event
        var out = ""
        if let relative = relative(loaded, to: anchor) {
            out += relative
            out += " · "
        }
        out += "id "
        out += oneLine(e.id)
        out += " · user "
        out += oneLine(e.user)
        if e.device != nil {
            out += " · device "
            out += device
        }
        if let ref = e.referencedNotificationID {
            out += " · for notification "
            out += oneLine(ref)
        }
        return out
    }

    /// "3 days before the complete", or "← the complete" on the anchor itself.
    static func relative(_ loaded: LoadedEvent, to anchor: LoadedEvent?) -> String? {
        TimelineText.relative(loaded, to: anchor)
    }
}

extension String {
    /// Every `character` replaced with `replacement`. The standard library's
    /// `replacing(_:with:)` lives in `_StringProcessing`, which release builds leave out
    /// (see Package.swift).
    func replacingEvery(_ character: Character, with replacement: String) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for c in self {
            if c == character { out += replacement } else { out.append(c) }
        }
        return out
    }
}
