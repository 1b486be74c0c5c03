import PushTrailModel

/// The JSON objects the reading commands answer with (docs/COMMANDS.md, "JSON output"),
/// built from query results in one place, so that every front end that answers the same
/// question (the CLI's `--json`, and the server's routes) answers it with the same
/// bytes. `tokens` decides how device tokens inside finding messages are shown.
public enum Presentation {
    /// A field whose JSON type the payload decides: strings as strings, anything else
    /// as its JSON text.
    public static func value(_ value: FieldValue?) -> JSONValue {
        switch value {
        case .none: .null
        case .string(let s)?: .string(s)
        case .json(let j)?: .raw(j)
        }
    }

    /// One finding, as `audit --json` lists it and reports embed it.
    public static func finding(_ f: Finding, tokens: (String) -> String) -> JSONValue {
        .object([
            ("code", .string(f.code.rawValue)), ("seq", .uint(f.seq)), ("id", .string(f.id)),
            ("task_id", f.taskID.map { .int($0) } ?? .null), ("at", .string(f.at.description)),
            ("message", .string(f.message(tokens: tokens))),
        ])
    }

    /// `as_of`: the time asked for, `@N` for a seq horizon, or `@HEAD` (everything the
    /// store knew when asked) without one.
    public static func asOf(_ horizon: Horizon?, head: UInt64) -> String {
        switch horizon {
        case .time(let t)?: t.description
        case .sequence(let n)?: "@\(min(n, head))"
        case .pinned(let t, let n)?: "\(t) through @\(min(n, head))"
        case nil: "@\(head)"
        }
    }

    /// `task N --json`.
    public static func task(_ report: TaskReport, asOf: String, tokens: (String) -> String) -> JSONValue {
        let f = report.snapshot.fields
        return .object([
            ("task_id", .int(report.taskID)), ("state", .string(report.snapshot.state.rawValue)),
            ("as_of", .string(asOf)),
            (
                "fields",
                .object([
                    ("task_name", .string(f.taskName)), ("residence_id", value(f.residenceID)),
                    ("residence_name", .string(f.residenceName)), ("due_date", value(f.dueDate)),
                    ("completions", .int(Int64(f.completions))),
                ])
            ),
            (
                "history",
                .array(
                    report.history.map { step in
                        let e = step.loaded.event
                        let a = e.actionResponse
                        return .object([
                            ("seq", .uint(step.loaded.seq)), ("id", .string(e.id)),
                            ("type", .string(e.type.description)),
                            ("at", .string(e.at.description)), ("action", .string(a?.action.rawValue)),
                            ("outcome", .string(a?.outcome.rawValue)), ("from", .string(step.from.rawValue)),
                            ("to", .string(step.to.rawValue)), ("finding", .string(step.findings.first?.code.rawValue)),
                            ("findings", .array(step.findings.map { finding($0, tokens: tokens) })),
                        ])
                    })
            ),
        ])
    }

    /// `thread X --json`.
    public static func thread(_ report: ThreadReport, asOf: String, tokens: (String) -> String) -> JSONValue {
        .object([
            ("thread_id", .string(report.threadID)), ("as_of", .string(asOf)),
            (
                "events",
                .array(
                    report.entries.map { entry in
                        let e = entry.loaded.event
                        var members: [(String, JSONValue)] = [
                            ("seq", .uint(entry.loaded.seq)), ("id", .string(e.id)),
                            ("type", .string(e.type.description)),
                            ("at", .string(e.at.description)), ("user", .string(e.user)),
                            ("task_id", entry.taskID.map { .int($0) } ?? .null),
                            ("task_state", .string(entry.taskState?.rawValue)),
                        ]
                        members += typeFields(e)
                        members.append(("finding", .string(entry.findings.first?.code.rawValue)))
                        members.append(("findings", .array(entry.findings.map { finding($0, tokens: tokens) })))
                        return .object(members)
                    })
            ),
        ])
    }

    /// The per-type fields of an event in `thread --json`.
    public static func typeFields(_ event: Event) -> [(String, JSONValue)] {
        switch event.body {
        case .notification(let n):
            return [
                ("platform", .string(n.platform.rawValue)),
                ("category", .string(n.category)), ("notification_type", .string(n.notificationType)),
                ("title", .string(n.title)), ("subtitle", .string(n.subtitle)), ("body", .string(n.body)),
                ("buttons", .array(n.shownButtons.map(JSONValue.string))),
                ("button_types", n.buttons.map { .array($0.map(JSONValue.string)) } ?? .null),
                ("is_premium", n.isPremium.map(JSONValue.bool) ?? .null),
            ]
        case .action(let a):
            return [
                ("action", .string(a.action.rawValue)), ("outcome", .string(a.outcome.rawValue)),
                ("notification_id", .string(a.notificationID)), ("http_status", .int(a.httpStatus)),
                ("error", .string(a.error)),
            ]
        case .delivery(let d):
            return [
                ("notification_id", .string(d.notificationID)), ("status", .int(d.status)),
                ("reason", .string(d.reason)), ("message_id", .string(d.messageID)),
            ]
        }
    }

    /// `audit --json`: the findings in timeline order and their counts by code.
    public static func audit(_ findings: [Finding], tokens: (String) -> String) -> JSONValue {
        var counts: [FindingCode: Int] = [:]
        for f in findings { counts[f.code, default: 0] += 1 }
        return .object([
            ("findings", .array(findings.map { finding($0, tokens: tokens) })),
            (
                "counts",
                .object(
                    FindingCode.allCases.compactMap { code in counts[code].map { (code.rawValue, .int(Int64($0))) } })
            ),
        ])
    }

    /// One line of `log --json`: the event as ingested, with what the store added.
    public static func logLine(_ stored: StoredEvent) -> JSONValue {
        .object([
            ("seq", .uint(stored.seq)), ("recorded_at", .string(stored.recordedAt.description)),
            ("event", .raw(String(decoding: stored.raw, as: UTF8.self))),
        ])
    }

    /// `show --json`.
    public static func show(_ stored: StoredEvent) -> JSONValue {
        .object([
            ("seq", .uint(stored.seq)), ("recorded_at", .string(stored.recordedAt.description)),
            ("hash", .string(SHA256.hex(stored.hash))),
            ("event", .raw(String(decoding: stored.raw, as: UTF8.self))),
        ])
    }

    /// `head --json`.
    public static func head(_ head: ChainHead) -> JSONValue {
        .object([("seq", .uint(head.seq)), ("hash", .string(head.hex))])
    }

    /// `stats --json`; `storeBytes` is the store's size on disk.
    public static func stats(_ stats: StoreStatistics, storeBytes: Int64) -> JSONValue {
        .object([
            ("events", .uint(stats.events)),
            ("by_type", .object(EventType.allCases.map { ($0.description, .int(Int64(stats.byType[$0] ?? 0))) })),
            ("tasks", .int(stats.tasks)), ("threads", .int(stats.threads)), ("users", .int(stats.users)),
            ("first_at", .string(stats.firstAt?.description)), ("last_at", .string(stats.lastAt?.description)),
            ("store_bytes", .int(storeBytes)),
            ("format", .int(Int64(stats.format))), ("dictionaries", .int(stats.dictionaries)),
            (
                "streams",
                .array(
                    stats.streams.map {
                        .object([
                            ("stream", .string($0.stream)), ("partition", .int(Int64($0.partition))),
                            ("sequence", .uint($0.sequence)),
                        ])
                    })
            ),
        ])
    }

    /// `ingest --json`'s summary; a server's answer to an append adds the rejected
    /// lines (`rejects`, each its line number and reason) and how many more were not listed.
    public static func ingest(_ summary: IngestSummary, rejects: [Rejection]? = nil, omitted: Int = 0) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("read", .int(Int64(summary.read))), ("appended", .int(Int64(summary.appended))),
            ("duplicates", .int(Int64(summary.duplicates))), ("conflicts", .int(Int64(summary.conflicts))),
            ("rejected", .int(Int64(summary.rejected))), ("first_seq", .uint(summary.firstSeq)),
            ("last_seq", .uint(summary.lastSeq)),
        ]
        if let rejects {
            fields.append(
                (
                    "rejects",
                    .array(rejects.map { .object([("line", .int(Int64($0.line))), ("reason", .string($0.reason))]) })
                ))
            if omitted > 0 { fields.append(("rejects_omitted", .int(Int64(omitted)))) }
        }
        return .object(fields)
    }

    /// `verify --json`.
    public static func verify(_ report: VerifyReport) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("ok", .bool(report.ok)), ("events", .uint(report.events)),
            ("head", .object([("seq", .uint(report.head.seq)), ("hash", .string(report.head.hex))])),
        ]
        if !report.ok {
            members.append(("first_bad_seq", .uint(report.firstBadSeq)))
            members.append(("reason", .string(report.problem)))
        }
        return .object(members)
    }

    /// A store's book of dead devices, as a cluster gathers it (`/v1/unregistered`) and
    /// hands it back to each shard with a question (see `UnregistrationBook`). `at_us`
    /// is the declaration's time in microseconds, exact, for ordering.
    public static func unregistrations(_ book: UnregistrationBook) -> JSONValue {
        .object([
            (
                "unregistered",
                .array(
                    book.entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { key, u in
                        .object([
                            ("device_key", .string(SHA256.hex(key))), ("id", .string(u.deliveryID)),
                            ("seq", .uint(u.seq)), ("at_us", .int(u.at.microseconds)),
                            ("status", .int(Int64(u.status))), ("reason", .string(u.reason)),
                        ])
                    })
            )
        ])
    }

    /// Digests of a store's users or threads (`StoreReader.keyDigests`), as hex.
    public static func keyDigests(_ digests: [[UInt8]]) -> JSONValue {
        .object([("keys", .array(digests.map { .string(SHA256.hex($0)) }))])
    }
}
