import PushTrailModel
import PushTrailStore

/// The answers of a cluster: each shard's `--json` answer, merged into the one a single
/// store holding every event would give. Lists merge in (at, shard, seq) order, the
/// shard being its place in the cluster file; `seq` stays each shard's own.
extension Cluster {
    /// A shard answer that is not the JSON asked for.
    func malformed(_ shard: Int) -> CommandError {
        CommandError.io("shard \(file.shards[shard].name) answered with JSON that is not the answer asked for")
    }

    /// `as_of` over the cluster: the time asked for, else `@HEAD` (each shard as it
    /// stood when asked; a seq names an event of one shard only).
    func asOf(_ horizon: Horizon?) -> String {
        horizon.map { Presentation.asOf($0, head: 0) } ?? "@HEAD"
    }

    /// An object answer with `missing_shards` added when shards were left out.
    func withMissing(_ value: JSONValue) -> JSONValue {
        guard case .object(let members) = value, !missing.isEmpty else { return value }
        return .object(members + missingMember)
    }

    /// The shards left out of an answer (with `--partial`), as the member JSON answers end with.
    var missingMember: [(String, JSONValue)] {
        missing.isEmpty ? [] : [("missing_shards", .array(missing.map(JSONValue.string)))]
    }

    // MARK: - Commands

    /// `task N --json`: asked of the shard owning N's partition, with the cluster's book.
    func task(_ id: Int64, horizon: Horizon?) throws -> JSONValue? {
        let owner = file.owner(ofTask: id)
        if let answer = taskLocally(id, horizon: horizon, owner: owner) {
            guard let bytes = answer.bytes else { return nil }
            return try checkedObject(bytes, shard: owner)
        }
        let book = try self.book(for: .timeline(.task(id), horizon), shards: [owner])
        guard let answer = try ask([owner], book: book, { _ in .task(id, horizon) }).first else {
            throw CommandError.io("shard \(file.shards[owner].name), which holds task \(id), did not answer")
        }
        guard let bytes = answer.answer.bytes else { return nil }
        return try checkedObject(bytes, shard: owner)
    }

    /// `task N --json` over local shards only, in one read of the owner's: the other
    /// shards are asked about each device the report consults, as it does. (Gathering
    /// the book first reads the task's events twice.) Nil when a shard is remote or
    /// anything fails: the book gathered beforehand then answers, naming a shard that
    /// cannot (or leaving it out with `--partial`).
    private func taskLocally(_ id: Int64, horizon: Horizon?, owner: Int) -> ReadAnswer? {
        guard !file.hasRemoteShards else { return nil }
        return try? ReadQuestion.task(id, horizon).answer(
            from: store(owner), book: nil, showTokens: showTokens, lookup: lookup(besides: owner))
    }

    /// A device's earliest declaration over every local shard: the asking shard's own
    /// (through its reader) and every other's (`UnregistrationLookup`), merged in shard
    /// order as the gathered book is.
    func lookup(besides owner: Int) -> UnregistrationLookup {
        let shards = Array(file.shards.indices)
        return { [self] own, key in
            var book = UnregistrationBook()
            for shard in shards {
                book.merge(
                    shard == owner
                        ? try own.unregistrationBook(keys: [key])
                        : try store(shard).read { try $0.unregistrationBook(keys: [key]) })
            }
            return book.entries[key]
        }
    }

    /// `audit` over the cluster: every shard audited with the cluster's book, the
    /// findings merged in timeline order.
    func audit(_ query: LogQuery, codes: Set<FindingCode>) throws -> [Finding] {
        // A whole audit reports on every notification: every shard's whole book.
        let book = try self.book(for: query.hasIndexedFilter ? .log(query) : nil)
        var findings: [(shard: Int, finding: Finding)] = []
        for (shard, answer) in try askAll(book: book, .audit(query, codes: FindingCode.allCases.filter(codes.contains)))
        {
            guard let bytes = answer.bytes else { continue }
            let ok: Bool? = JSONAnswer.parse(bytes) { v in
                guard let list = v.member(v.root, "findings"), v.kind(list) == .array else { return false }
                for f in v.elements(list) {
                    guard let code = v.member(f, "code").flatMap(v.string).flatMap(FindingCode.init(rawValue:)),
                        let seq = v.member(f, "seq").flatMap(v.int64), let id = v.member(f, "id").flatMap(v.string),
                        let at = v.member(f, "at").flatMap(v.string).flatMap({ Timestamp.parseRFC3339(Array($0.utf8)) }
                        ),
                        let message = v.member(f, "message").flatMap(v.string)
                    else { return false }
                    let finding = Finding(
                        code: code, seq: UInt64(max(0, seq)), id: id, taskID: v.member(f, "task_id").flatMap(v.int64),
                        at: at, evidence: .stated(message))
                    findings.append((shard, finding))
                }
                return true
            }
            guard ok == true else { throw malformed(shard) }
        }
        // An event's findings keep their order: the sort is made stable by position.
        return findings.enumerated().sorted {
            ($0.element.finding.at, $0.element.shard, $0.element.finding.seq, $0.offset)
                < ($1.element.finding.at, $1.element.shard, $1.element.finding.seq, $1.offset)
        }.map(\.element.finding)
    }

    /// `log`'s events over every shard in (at, shard, seq) order, newest first with
    /// `reverse`, each with its shard, given to `body` until it returns false. With
    /// `limit` N each shard gives its last N and the merge keeps the last N. Without,
    /// the merge takes each shard's events as it goes: a local shard's read on a thread
    /// of its own a few hundred ahead, a served shard's answer decoded line by line, so
    /// that the memory does not grow with the log.
    func log(
        _ query: LogQuery, limit: Int?, reverse: Bool, _ body: (_ shard: Int, _ loaded: LoadedEvent) throws -> Bool
    ) throws {
        guard limit == nil else {
            for (shard, loaded) in try collectedLog(query, limit: limit, reverse: reverse) {
                if try !body(shard, loaded) { return }
            }
            return
        }
        let local = file.shards.indices.filter { if case .store = file.shards[$0].location { true } else { false } }
        let remote = file.shards.indices.filter { !local.contains($0) }
        var failures: [ShardFailure] = []
        var sources: [(shard: Int, source: LogSource)] = []
        for shard in local {
            do {
                sources.append((shard, .local(LogFeed(store: try store(shard), query: query, reverse: reverse))))
            } catch {
                failures.append(ShardFailure(shard: file.shards[shard].name, reason: "\(error)"))
            }
        }
        defer { for case (_, .local(let feed)) in sources { feed.cancel() } }
        // The served shards' answers, their failures settled with the local ones'.
        let (answered, failed) =
            remote.isEmpty ? ([], []) : gather(remote) { _ in .log(query, limit: nil, reverse: false) }
        failures += failed
        for (shard, answer) in answered {
            guard let bytes = answer.bytes else { continue }
            guard let lines = LogLines(bytes, reverse: reverse) else { throw malformed(shard) }
            sources.append((shard, .remote(lines)))
        }
        try settle(failures, answered: !sources.isEmpty)
        sources.sort { $0.shard < $1.shard }

        // Each source's next event; the merge takes the least (the greatest with
        // `reverse`) in (at, shard, seq) order. A handful of shards: a scan, not a heap.
        var decoder = EventDecoder()
        var heads: [LoadedEvent?] = []
        for i in sources.indices { heads.append(try next(sources[i], &decoder)) }
        while true {
            var pick: Int?
            for i in heads.indices {
                guard let candidate = heads[i] else { continue }
                guard let p = pick, let best = heads[p] else {
                    pick = i
                    continue
                }
                let before =
                    (candidate.event.at, sources[i].shard, candidate.seq) < (best.event.at, sources[p].shard, best.seq)
                if before != reverse { pick = i }
            }
            guard let p = pick, let event = heads[p] else { return }
            if try !body(sources[p].shard, event) { return }
            heads[p] = try next(sources[p], &decoder)
        }
    }

    /// A shard's next event for the merge.
    private func next(_ source: (shard: Int, source: LogSource), _ decoder: inout EventDecoder) throws -> LoadedEvent? {
        switch source.source {
        case .local(let feed):
            do {
                return try feed.next()
            } catch {
                throw CommandError.io("shard \(file.shards[source.shard].name) did not answer: \(error)")
            }
        case .remote(let lines):
            guard let line = lines.next() else { return nil }
            guard let loaded = try logLine(line, &decoder) else { throw malformed(source.shard) }
            return loaded
        }
    }

    /// `log`'s events over every shard, each shard's last `limit`, merged and cut to the
    /// last `limit`.
    private func collectedLog(_ query: LogQuery, limit: Int?, reverse: Bool) throws -> [(
        shard: Int, loaded: LoadedEvent
    )] {
        var all: [(shard: Int, loaded: LoadedEvent)] = []
        var decoder = EventDecoder()
        for (shard, answer) in try askAll(.log(query, limit: limit, reverse: false)) {
            guard let bytes = answer.bytes else { continue }
            guard let lines = LogLines(bytes, reverse: false) else { throw malformed(shard) }
            while let line = lines.next() {
                guard let loaded = try logLine(line, &decoder) else { throw malformed(shard) }
                all.append((shard, loaded))
            }
        }
        all.sort { ($0.loaded.event.at, $0.shard, $0.loaded.seq) < ($1.loaded.event.at, $1.shard, $1.loaded.seq) }
        if let limit, all.count > limit { all.removeFirst(all.count - limit) }
        return reverse ? all.reversed() : all
    }

    /// The event a `log --json` or `show --json` line holds, as stored on its shard.
    func logLine(_ line: [UInt8], _ decoder: inout EventDecoder) throws -> LoadedEvent? {
        let parts: (UInt64, Timestamp, [UInt8], [UInt8])? =
            JSONAnswer.parse(line) { v -> (UInt64, Timestamp, [UInt8], [UInt8])? in
                guard let seq = v.member(v.root, "seq").flatMap(v.int64), seq > 0,
                    let recorded = v.member(v.root, "recorded_at").flatMap(v.string).flatMap({
                        Timestamp.parseRFC3339(Array($0.utf8))
                    }),
                    let event = v.member(v.root, "event"), v.kind(event) == .object
                else { return nil }
                let hash = v.member(v.root, "hash").flatMap(v.string).flatMap(SHA256.bytes(hex:)) ?? []
                return (UInt64(seq), recorded, Array(v.rawText(event)), hash)
            } ?? nil
        guard let (seq, recorded, raw, hash) = parts else { return nil }
        let event = try decoder.decode(raw)
        let stored = StoredEvent(
            seq: seq, type: event.type, recordedAt: recorded, at: event.at, hash: hash, raw: raw)
        return LoadedEvent(stored: stored, event: event)
    }

    /// `show ID`: the shard holding the event and the event; nil when none does. Two
    /// shards holding one id (events partitioned against the contract) are said on stderr.
    func show(_ id: String) throws -> (shard: Int, loaded: LoadedEvent)? {
        let found = try askAll(.show(id)).filter { $0.answer.bytes != nil }
        guard let first = found.first else { return nil }
        if found.count > 1 {
            context.stderr.line(
                "pushtrail: event \(id) is on shards "
                    + found.map { file.shards[$0.shard].name }.joined(separator: " and ")
                    + ": its task's partition decides one; showing \(file.shards[first.shard].name)'s")
        }
        var decoder = EventDecoder()
        guard let loaded = try logLine(first.answer.bytes!, &decoder) else { throw malformed(first.shard) }
        return (first.shard, loaded)
    }

    /// `stats --json` over every shard: counts added; tasks, threads and users counted once.
    func stats() throws -> JSONValue {
        let answers = try askAll(.stats)
        var events: Int64 = 0
        var byType: [String: Int64] = [:]
        var bytes: Int64 = 0
        var dictionaries: Int64 = 0
        var format: Int64 = 0
        var first: String?
        var last: String?
        var streams: [JSONValue] = []
        for (shard, answer) in answers {
            guard let body = answer.bytes else { continue }
            let ok: Bool? = JSONAnswer.parse(body) { v in
                // A count is a number from 0 to a trillion: anything else is not a store's.
                func int(_ index: Int?) -> Int64? {
                    index.flatMap(v.int64).flatMap { (0...1 << 40).contains($0) ? $0 : nil }
                }
                guard let e = int(v.member(v.root, "events")), let b = int(v.member(v.root, "store_bytes")),
                    let d = int(v.member(v.root, "dictionaries")), let f = int(v.member(v.root, "format"))
                else { return false }
                events += e
                bytes += b
                dictionaries += d
                format = max(format, f)
                var counts = true
                if let t = v.member(v.root, "by_type") {
                    v.forEachMember(t) { k, n in
                        if let c = int(n) { byType[v.string(k) ?? "", default: 0] += c } else { counts = false }
                    }
                }
                guard counts else { return false }
                if let f = v.member(v.root, "first_at").flatMap(v.string) { first = min(first ?? f, f) }
                if let l = v.member(v.root, "last_at").flatMap(v.string) { last = max(last ?? l, l) }
                for s in v.member(v.root, "streams").map(v.elements) ?? [] { streams.append(.raw(v.rawString(s))) }
                return true
            }
            guard ok == true else { throw malformed(shard) }
        }
        return .object(
            [
                ("events", .int(events)),
                ("by_type", .object(EventType.allCases.map { ($0.description, .int(byType[$0.description] ?? 0)) })),
                ("tasks", .int(Int64(try distinctKeys(.tasks)))), ("threads", .int(Int64(try distinctKeys(.threads)))),
                ("users", .int(Int64(try distinctKeys(.users)))),
                ("first_at", .string(first)), ("last_at", .string(last)), ("store_bytes", .int(bytes)),
                ("format", .int(format)), ("dictionaries", .int(dictionaries)), ("streams", .array(streams)),
            ] + missingMember)
    }

    /// `stats` over the cluster for people, from its JSON.
    func statsRows(_ stats: JSONValue) -> [(String, String)] {
        guard case .object(let members) = stats else { return [] }
        func int(_ key: String) -> Int {
            if case .int(let n)? = members.first(where: { $0.0 == key })?.1 { return Int(n) }
            return 0
        }
        func text(_ key: String) -> String {
            if case .string(let s)? = members.first(where: { $0.0 == key })?.1 { return s }
            return "-"
        }
        var types: [String] = []
        if case .object(let byType)? = members.first(where: { $0.0 == "by_type" })?.1 {
            for (name, value) in byType {
                if case .int(let n) = value, let type = EventType(name: name) {
                    types.append("\(grouped(Int(n))) \(type.plural)")
                }
            }
        }
        let shards = file.shards.count - missing.count
        return [
            ("events", "\(grouped(int("events"))) (\(types.joined(separator: ", ")))"),
            ("tasks", grouped(int("tasks"))), ("threads", grouped(int("threads"))), ("users", grouped(int("users"))),
            ("first at", text("first_at")), ("last at", text("last_at")),
            ("stores", "\(IngestCommand.megabytes(int("store_bytes"))) in \(counted(shards, "shard")) of \(path)"),
        ] + missing.map { ("missing", "shard \($0) did not answer") }
    }

    /// How many distinct users, threads or tasks the shards hold together.
    private func distinctKeys(_ kind: ReadQuestion.KeyKind) throws -> Int {
        var keys = Set<String>()
        for (shard, answer) in try askAll(.keys(kind)) {
            guard let bytes = answer.bytes,
                let list: [String] = JSONAnswer.parse(
                    bytes,
                    { v in
                        v.member(v.root, "keys").map { v.elements($0).compactMap(v.string) }
                    }) ?? nil
            else { throw malformed(shard) }
            keys.formUnion(list)
        }
        return keys.count
    }

    /// One shard's object answer, read member by member.
    struct ShardObject {
        var name: String
        var members: [(String, JSONValue)]

        func member(_ key: String) -> JSONValue? { members.first { $0.0 == key }?.1 }
        func int(_ key: String) -> Int64? {
            if case .raw(let text)? = member(key) { return Int64(text) }
            return nil
        }
        /// A count or seq: nil when missing or negative.
        func uint(_ key: String) -> UInt64? { int(key).flatMap { UInt64(exactly: $0) } }
        func bool(_ key: String) -> Bool? {
            if case .raw(let text)? = member(key) { return text == "true" ? true : text == "false" ? false : nil }
            return nil
        }
        func string(_ key: String) -> String? {
            if case .string(let s)? = member(key) { return s }
            return nil
        }
    }

    /// Each shard's object answer to `question` (`head`, `verify`), in shard order:
    /// strings read, other values kept as their JSON text.
    func perShard(_ question: ReadQuestion) throws -> [ShardObject] {
        try askAll(question).compactMap { shard, answer in
            guard let bytes = answer.bytes else { return nil }
            let members: [(String, JSONValue)]? =
                JSONAnswer.parse(bytes) { v in
                    guard v.kind(v.root) == .object else { return nil }
                    return v.members(v.root).map { key, value in
                        (
                            v.string(key) ?? "",
                            v.kind(value) == .string ? .string(v.string(value) ?? "") : .raw(v.rawString(value))
                        )
                    }
                } ?? nil
            guard let members else { throw malformed(shard) }
            let object = ShardObject(name: file.shards[shard].name, members: members)
            // What head and verify print must be what a store says.
            switch question {
            case .head:
                guard object.uint("seq") != nil, object.string("hash").flatMap(SHA256.bytes(hex:))?.count == 32 else {
                    throw malformed(shard)
                }
            case .verify:
                guard object.bool("ok") != nil, object.uint("events") != nil else { throw malformed(shard) }
            default: break
            }
            return object
        }
    }

    /// A shard's object answer, checked to be one: its `as_of` named with the shard
    /// (`d@4787`: a seq is the shard's), `missing_shards` added when shards were left out.
    private func checkedObject(_ bytes: [UInt8], shard: Int) throws -> JSONValue {
        let members: [(String, JSONValue)]? =
            JSONAnswer.parse(bytes) { v in
                v.kind(v.root) == .object
                    ? v.members(v.root).map { (v.string($0.key) ?? "", .raw(v.rawString($0.value))) } : nil
            } ?? nil
        guard var members else { throw malformed(shard) }
        if let i = members.firstIndex(where: { $0.0 == "as_of" }), case .raw(let text) = members[i].1,
            text.hasPrefix("\"@")
        {
            members[i].1 = .string(file.shards[shard].name + String(text.dropFirst().dropLast()))
        }
        return .object(members + missingMember)
    }
}

/// Where the merge of `log` over a cluster takes a shard's events.
enum LogSource {
    case local(LogFeed)
    case remote(LogLines)
}

/// The lines of a served shard's `log` answer, first to last or last to first; nil
/// when the answer does not end with a line break (it was cut short).
final class LogLines {
    private let bytes: [UInt8]
    private var ends: [Int] = []
    private var index: Int
    private let reverse: Bool

    init?(_ bytes: [UInt8], reverse: Bool) {
        guard bytes.isEmpty || bytes.last == 0x0A else { return nil }
        self.bytes = bytes
        self.reverse = reverse
        for (i, b) in bytes.enumerated() where b == 0x0A { ends.append(i) }
        index = reverse ? ends.count - 1 : 0
    }

    func next() -> [UInt8]? {
        guard index >= 0, index < ends.count else { return nil }
        let start = index == 0 ? 0 : ends[index - 1] + 1
        let line = Array(bytes[start..<ends[index]])
        index += reverse ? -1 : 1
        return line
    }
}
