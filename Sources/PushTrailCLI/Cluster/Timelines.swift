import PushTrailModel
import PushTrailStore

/// Timelines over a cluster: each shard's entries (`Presentation.timelineEntry`) read
/// back into the values a single store's query gives, merged in (at, shard, seq)
/// order, so that `thread`, `task`, `show` and `report` draw them with the code that
/// draws one store's. Findings keep the message their shard wrote.
extension Cluster {
    /// The subject's timeline over `shards`, with the cluster's book; nil (local shards
    /// only): each shard asks the others about the devices its findings meet.
    func timeline(
        _ subject: TimelineSubject, horizon: Horizon?, stateChanges: Bool = false, shards: [Int]? = nil,
        book: UnregistrationBook?
    ) throws -> [(shard: Int, entry: TimelineEntry)] {
        var all: [(shard: Int, entry: TimelineEntry)] = []
        var decoder = EventDecoder()
        let asked = try ask(shards ?? Array(file.shards.indices), book: book, askingOthers: book == nil) { _ in
            .timeline(subject, horizon, stateChanges: stateChanges)
        }
        for (shard, answer) in asked {
            guard let bytes = answer.bytes else { continue }
            var start = 0
            for (i, b) in bytes.enumerated() where b == 0x0A {
                guard let entry = try timelineEntry(Array(bytes[start..<i]), &decoder) else { throw malformed(shard) }
                all.append((shard, entry))
                start = i + 1
            }
            guard start == bytes.count else { throw malformed(shard) }
        }
        return all.sorted {
            ($0.entry.loaded.event.at, $0.shard, $0.entry.loaded.seq) < (
                $1.entry.loaded.event.at, $1.shard, $1.entry.loaded.seq
            )
        }
    }

    /// One line of a shard's timeline answer; nil when it is not one.
    private func timelineEntry(_ line: [UInt8], _ decoder: inout EventDecoder) throws -> TimelineEntry? {
        typealias Parts = (
            seq: UInt64, recorded: Timestamp, hash: [UInt8], raw: [UInt8], taskID: Int64?, state: TaskState?,
            transition: Transition?, member: Bool,
            findings: [(code: FindingCode, seq: UInt64, id: String, taskID: Int64?, at: Timestamp, message: String)]
        )
        let parts: Parts? =
            JSONAnswer.parse(line) { v -> Parts? in
                let r = v.root
                guard let seq = v.member(r, "seq").flatMap(v.int64), seq > 0,
                    let recorded = v.member(r, "recorded_at").flatMap(v.string).flatMap({
                        Timestamp.parseRFC3339(Array($0.utf8))
                    }),
                    let hash = v.member(r, "hash").flatMap(v.string).flatMap(SHA256.bytes(hex:)),
                    let event = v.member(r, "event"), v.kind(event) == .object,
                    let member = v.member(r, "member").flatMap(v.bool),
                    let list = v.member(r, "findings"), v.kind(list) == .array
                else { return nil }
                var transition: Transition?
                if let t = v.member(r, "transition"), v.kind(t) == .object {
                    guard let from = v.member(t, "from").flatMap(v.string).flatMap(TaskState.init(rawValue:)),
                        let to = v.member(t, "to").flatMap(v.string).flatMap(TaskState.init(rawValue:)),
                        let invalid = v.member(t, "invalid").flatMap(v.bool)
                    else { return nil }
                    transition = Transition(from: from, to: to, invalid: invalid)
                }
                var findings:
                    [(code: FindingCode, seq: UInt64, id: String, taskID: Int64?, at: Timestamp, message: String)] = []
                for f in v.elements(list) {
                    guard let code = v.member(f, "code").flatMap(v.string).flatMap(FindingCode.init(rawValue:)),
                        let fseq = v.member(f, "seq").flatMap(v.int64), let id = v.member(f, "id").flatMap(v.string),
                        let at = v.member(f, "at_us").flatMap(v.int64),
                        let message = v.member(f, "message").flatMap(v.string)
                    else { return nil }
                    findings.append(
                        (
                            code, UInt64(max(0, fseq)), id, v.member(f, "task_id").flatMap(v.int64),
                            Timestamp(microseconds: at), message
                        ))
                }
                return (
                    UInt64(seq), recorded, hash, Array(v.rawText(event)), v.member(r, "task_id").flatMap(v.int64),
                    v.member(r, "task_state").flatMap(v.string).flatMap(TaskState.init(rawValue:)), transition, member,
                    findings
                )
            } ?? nil
        guard let parts else { return nil }
        let event = try decoder.decode(parts.raw)
        let stored = StoredEvent(
            seq: parts.seq, type: event.type, recordedAt: parts.recorded, at: event.at, hash: parts.hash, raw: parts.raw
        )
        return TimelineEntry(
            loaded: LoadedEvent(stored: stored, event: event), taskID: parts.taskID, taskState: parts.state,
            transition: parts.transition,
            findings: parts.findings.map {
                Finding(
                    code: $0.code, seq: $0.seq, id: $0.id, taskID: $0.taskID, at: $0.at, evidence: .stated($0.message))
            }, member: parts.member)
    }

    /// `thread X` over the cluster: every shard's part of the thread; nil when no shard has it.
    func threadReport(_ id: String, horizon: Horizon?) throws -> ThreadReport? {
        // Over local shards that all open, each asks the others about devices as it goes:
        // gathering the book first reads the thread's events twice on every shard. (A
        // shard that does not open is named, or left out with --partial, by the rounds.)
        let local = !file.hasRemoteShards && file.shards.indices.allSatisfy { (try? store($0)) != nil }
        let book = local ? nil : try book(for: .timeline(.thread(id), horizon))
        let entries = try timeline(.thread(id), horizon: horizon, book: book)
        return entries.isEmpty ? nil : ThreadReport(threadID: id, entries: entries.map(\.entry))
    }

    /// `task N` over the cluster: the owning shard's answer, with the cluster's book;
    /// nil when it holds no event of the task.
    func taskReport(_ id: Int64, horizon: Horizon?) throws -> (report: TaskReport, asOf: String)? {
        let owner = file.owner(ofTask: id)
        // Over local shards only: the owner's report in one read, as `task --json` (a
        // failure falls back to the rounds below, which name the shard).
        if !file.hasRemoteShards, let store = try? store(owner) {
            let lookup = lookup(besides: owner)
            do {
                return try store.read { plain in
                    var reader = plain
                    reader.unregistrationLookup = lookup
                    guard let report = try reader.taskReport(id, horizon: horizon) else { return nil }
                    return (report, file.shards[owner].name + Presentation.asOf(horizon, head: try reader.head().seq))
                }
            } catch {}
        }
        let book = try self.book(for: .timeline(.task(id), horizon), shards: [owner])
        guard let asked = try ask([owner], book: book, { _ in .task(id, horizon) }).first else {
            throw CommandError.io("shard \(file.shards[owner].name), which holds task \(id), did not answer")
        }
        guard let answer = asked.answer.bytes else { return nil }
        let history = try timeline(.task(id), horizon: horizon, shards: [owner], book: book).map { _, e in
            HistoryEntry(
                loaded: e.loaded, from: e.transition?.from ?? e.taskState ?? .active,
                to: e.transition?.to ?? e.taskState ?? .active, findings: e.findings)
        }
        typealias Facts = (state: TaskState, fields: TaskFields, asOf: String)
        let facts: Facts? =
            JSONAnswer.parse(answer) { v -> Facts? in
                guard let state = v.member(v.root, "state").flatMap(v.string).flatMap(TaskState.init(rawValue:)),
                    let asOf = v.member(v.root, "as_of").flatMap(v.string),
                    let f = v.member(v.root, "fields"), v.kind(f) == .object
                else { return nil }
                func value(_ name: StaticString) -> FieldValue? {
                    guard let i = v.member(f, name), v.kind(i) != .null else { return nil }
                    return v.kind(i) == .string ? .string(v.string(i) ?? "") : .json(v.rawString(i))
                }
                var fields = TaskFields()
                fields.taskName = v.member(f, "task_name").flatMap(v.string)
                fields.residenceID = value("residence_id")
                fields.residenceName = v.member(f, "residence_name").flatMap(v.string)
                fields.dueDate = value("due_date")
                fields.completions = Int(v.member(f, "completions").flatMap(v.int64) ?? 0)
                return (state, fields, asOf)
            } ?? nil
        guard let facts else { throw malformed(owner) }
        var snapshot = TaskSnapshot(taskID: id)
        snapshot.state = facts.state
        snapshot.fields = facts.fields
        return (TaskReport(taskID: id, snapshot: snapshot, history: history), file.shards[owner].name + facts.asOf)
    }
}
