import PushTrailModel
import PushTrailStore

/// The options of the commands that read over a cluster.
enum ClusterOptions {
    static let specs: [OptionSpec] = [
        .option(
            "cluster", "FILE", "answer over every shard of this cluster (default: $PUSHTRAIL_CLUSTER unless --store)",
            completion: .file),
        .flag("partial", "over a cluster: answer from the shards that answer, naming those that do not"),
    ]
}

/// A cluster opened for one command: its shards asked in parallel, local ones in
/// process and remote ones over HTTP, each answering as `--json` does on that shard.
final class Cluster: @unchecked Sendable {
    let file: ClusterFile
    let path: String
    let context: Context
    let partial: Bool
    let showTokens: Bool
    /// The shards that did not answer a question (only with `--partial`), in shard order.
    private(set) var missing: [String] = []
    /// The local shards' stores, opened when first asked.
    private var stores: [Int: Store] = [:]
    private let lock = Monitor()

    init(file: ClusterFile, path: String, context: Context, partial: Bool, showTokens: Bool) {
        self.file = file
        self.path = path
        self.context = context
        self.partial = partial
        self.showTokens = showTokens
    }

    /// The cluster the command line names (`--cluster`, else `$PUSHTRAIL_CLUSTER` when
    /// `--store` is not given), or nil for a single store. A cluster with remote shards
    /// in a `pushtrail` without an HTTP client is handed to `pushtrail-cluster`, which
    /// runs the same command line with one.
    static func named(by arguments: Arguments, _ context: Context) throws -> Cluster? {
        let given = arguments.value("cluster")
        if given != nil, arguments.value("store") != nil {
            throw UsageError("--cluster and --store name different things: give one", command: arguments.command)
        }
        let path =
            given
            ?? (arguments.value("store") == nil
                ? context.variable("PUSHTRAIL_CLUSTER").flatMap { $0.isEmpty ? nil : $0 } : nil)
        guard let path else {
            if arguments.flag("partial") {
                throw UsageError("--partial applies to a cluster: give --cluster FILE", command: arguments.command)
            }
            return nil
        }
        let file = try ClusterFile.load(path)
        if file.hasRemoteShards, context.remote == nil {
            try ServeCommand.replaceProcess(with: "pushtrail-cluster", context.invocation, context)
        }
        return Cluster(
            file: file, path: path, context: context, partial: arguments.flag("partial"),
            showTokens: arguments.flag("show-tokens"))
    }

    /// A seq names an event of one store: over a cluster, times only.
    static func refuseSequence(_ horizon: Horizon?, option: String, command: String) throws {
        switch horizon {
        case .sequence?, .pinned?:
            throw UsageError(
                "--\(option) @SEQ names an event of one store; over a cluster give a time", command: command)
        default: return
        }
    }

    // MARK: - Asking

    /// Asks `shards` (indexes into `file.shards`) `question(shard)` with `book`, all at
    /// once, and returns their answers in shard order. A shard that cannot answer
    /// fails the command (exit 74, naming it) unless `--partial`, where it is named
    /// on stderr and in `missing` and left out.
    /// With `askingOthers` (local shards only), findings ask the other shards about
    /// each device as they meet it, instead of consulting `book`.
    func ask(
        _ shards: [Int], book: UnregistrationBook? = nil, askingOthers: Bool = false,
        _ question: @escaping @Sendable (Int) -> ReadQuestion
    ) throws -> [(shard: Int, answer: ReadAnswer)] {
        let (answers, failures) = gather(shards, book: book, askingOthers: askingOthers, question)
        try settle(failures, answered: !answers.isEmpty || shards.isEmpty)
        return answers
    }

    /// `ask` without settling: the answers in shard order, and the shards that failed.
    func gather(
        _ shards: [Int], book: UnregistrationBook? = nil, askingOthers: Bool = false,
        _ question: @escaping @Sendable (Int) -> ReadQuestion
    ) -> (answers: [(shard: Int, answer: ReadAnswer)], failures: [ShardFailure]) {
        let local = shards.filter { if case .store = file.shards[$0].location { true } else { false } }
        let remote = shards.filter { !local.contains($0) }
        precondition(!askingOthers || !file.hasRemoteShards, "served shards are asked with a book")
        typealias Job = @Sendable () throws -> [(Int, Result<ReadAnswer, ShardFailure>)]
        var jobs: [Job] = []
        for shard in local {
            jobs.append { [self] in
                [(shard, self.answerLocally(shard, question(shard), book: book, askingOthers: askingOthers))]
            }
        }
        if !remote.isEmpty {
            jobs.append { [self] in try self.answerRemotely(remote, question, book: book) }
        }
        var answers: [(shard: Int, answer: ReadAnswer)] = []
        var failures: [ShardFailure] = []
        // Threads pay only for work larger than starting them: a question that looks a
        // few keys up in local stores is answered shard after shard.
        let results =
            remote.isEmpty && (jobs.count == 1 || shards.allSatisfy { question($0).isLookup })
            ? jobs.map { job in Result { try job() } } : inParallel(jobs)
        for result in results {
            switch result {
            case .success(let replies):
                for (shard, reply) in replies {
                    switch reply {
                    case .success(let answer): answers.append((shard, answer))
                    case .failure(let f): failures.append(f)
                    }
                }
            case .failure(let error):
                failures.append(ShardFailure(shard: "?", reason: "\(error)"))
            }
        }
        return (answers.sorted { $0.shard < $1.shard }, failures)
    }

    /// Fails the command for the shards in `failures` (exit 74, naming the first), or
    /// with `--partial` names them on stderr and in `missing`; fails it anyway when no
    /// shard `answered`.
    func settle(_ failures: [ShardFailure], answered: Bool) throws {
        guard !failures.isEmpty else { return }
        guard partial else {
            let first = failures[0]
            throw CommandError.io(
                "shard \(first.shard) did not answer: \(first.reason)"
                    + (failures.count > 1
                        ? " (and \(failures.count - 1) more shard\(failures.count == 2 ? "" : "s"))" : "")
                    + "; --partial answers from the others")
        }
        guard answered else {
            throw CommandError.io(
                "no shard answered (shard \(failures[0].shard): \(failures[0].reason)); nothing to answer from")
        }
        for f in failures where !missing.contains(f.shard) {
            missing.append(f.shard)
            context.stderr.line("pushtrail: shard \(f.shard) did not answer: \(f.reason); the answer leaves it out")
        }
    }

    /// Every shard's answer to `question`.
    func askAll(book: UnregistrationBook? = nil, _ question: ReadQuestion) throws -> [(shard: Int, answer: ReadAnswer)]
    {
        try ask(Array(file.shards.indices), book: book) { _ in question }
    }

    /// The cluster's book of dead devices, for a question whose findings report on
    /// `scope` (asked of `shards`, all by default): only the devices its notifications
    /// went to, each with its earliest declaration on any shard. Without a scope (a
    /// whole audit), every shard's whole book.
    func book(for scope: ReadQuestion.DeviceScope?, shards: [Int]? = nil) throws -> UnregistrationBook {
        var keys: [[UInt8]]?
        if let scope {
            var found: [[UInt8]] = []
            for (shard, answer) in try ask(shards ?? Array(file.shards.indices), { _ in .devices(scope) }) {
                guard let bytes = answer.bytes, let list = Cluster.digests(bytes) else { throw malformed(shard) }
                found += list
            }
            guard !found.isEmpty else { return UnregistrationBook() }
            // A long list would not fit a request line: past it, the whole books.
            if found.count <= Cluster.bookKeysLimit { keys = found }
        }
        var book = UnregistrationBook()
        for (shard, answer) in try askAll(.unregistered(keys: keys)) {
            guard let bytes = answer.bytes, let part = UnregistrationBook(json: bytes) else {
                throw CommandError.io("shard \(file.shards[shard].name) sent a book of dead devices that is not one")
            }
            book.merge(part)
        }
        return book
    }

    /// The longest answer a remote shard may send (a whole audit's findings fit).
    static let maxAnswerBytes = 256 << 20

    /// The most device keys asked for by name (about 33 bytes each in the request line).
    static let bookKeysLimit = 200

    /// The digests of a `{"keys": [hex…]}` answer.
    static func digests(_ bytes: [UInt8]) -> [[UInt8]]? {
        JSONAnswer.parse(bytes) { v -> [[UInt8]]? in
            guard let list = v.member(v.root, "keys"), v.kind(list) == .array else { return nil }
            var out: [[UInt8]] = []
            for e in v.elements(list) {
                guard let key = v.string(e).flatMap(SHA256.bytes(hex:)) else { return nil }
                out.append(key)
            }
            return out
        } ?? nil
    }

    /// The store of local shard `shard`, opened once. Opens take turns: LMDB's open
    /// holds a lock file's exclusive lock while it sets up and waits for another's, so
    /// two processes each opening two shards at once from two threads can each wait on
    /// the other (the kernel refuses that, EDEADLK). One open at a time cannot.
    func store(_ shard: Int) throws -> Store {
        try lock.locked {
            if let open = stores[shard] { return open }
            guard case .store(let dir) = file.shards[shard].location else {
                preconditionFailure("shard \(shard) is not local")
            }
            let store = try Store(path: dir, create: false)
            stores[shard] = store
            return store
        }
    }

    private func answerLocally(_ shard: Int, _ question: ReadQuestion, book: UnregistrationBook?, askingOthers: Bool)
        -> Result<ReadAnswer, ShardFailure>
    {
        do {
            let store = try self.store(shard)
            return .success(
                try question.answer(
                    from: store, book: book, showTokens: showTokens,
                    lookup: askingOthers ? lookup(besides: shard) : nil))
        } catch {
            return .failure(ShardFailure(shard: file.shards[shard].name, reason: "\(error)"))
        }
    }

    private func answerRemotely(
        _ shards: [Int], _ question: @Sendable (Int) -> ReadQuestion, book: UnregistrationBook?
    ) throws -> [(Int, Result<ReadAnswer, ShardFailure>)] {
        guard let transport = context.remote else {
            preconditionFailure("a cluster with remote shards runs in pushtrail-cluster")
        }
        var out: [(Int, Result<ReadAnswer, ShardFailure>)] = []
        var requests: [RemoteRequest] = []
        var asked: [Int] = []
        for shard in shards {
            let s = file.shards[shard]
            guard case .remote(let base, let variable, let caFile) = s.location else { continue }
            var headers: [(String, String)] = [("Accept", "application/json")]
            if let variable {
                guard let token = context.variable(variable), !token.isEmpty else {
                    out.append(
                        (
                            shard,
                            .failure(
                                ShardFailure(
                                    shard: s.name, reason: "$\(variable) is not set: it holds the shard's read token"))
                        ))
                    continue
                }
                headers.append(("Authorization", "Bearer " + token))
            }
            let (method, url, body) = question(shard).request(base: base, book: book, showTokens: showTokens)
            if body != nil { headers.append(("Content-Type", "application/json")) }
            requests.append(
                RemoteRequest(
                    url: url, method: method, headers: headers, body: body, timeout: file.timeout,
                    connectTimeout: min(10, file.timeout), caFile: caFile, maxBodyBytes: Cluster.maxAnswerBytes))
            asked.append(shard)
        }
        for (shard, result) in zip(asked, transport.perform(requests)) {
            let name = file.shards[shard].name
            switch result {
            case .failure(let f):
                out.append((shard, .failure(ShardFailure(shard: name, reason: f.reason))))
            case .success(let reply) where reply.status == 200:
                out.append((shard, .success(.found(reply.body))))
            case .success(let reply):
                let message = Cluster.errorMessage(reply.body) ?? "HTTP \(reply.status)"
                // Only a task or an event can be missing from a shard; any other 404 is a
                // shard that does not serve what a cluster asks (a wrong URL, an older
                // server), and must not be taken for an empty answer.
                if reply.status == 404, question(shard).canBeMissing {
                    out.append((shard, .success(.missing(message))))
                } else {
                    out.append((shard, .failure(ShardFailure(shard: name, reason: "HTTP \(reply.status): \(message)"))))
                }
            }
        }
        return out
    }

    /// The `error` of a server's `{"error": "…"}` answer.
    static func errorMessage(_ body: [UInt8]) -> String? {
        JSONAnswer.parse(body) { v in v.member(v.root, "error").flatMap(v.string) } ?? nil
    }
}

/// Reading a shard's JSON answer.
enum JSONAnswer {
    /// `body(view)` over `bytes` parsed; nil when they are not JSON.
    static func parse<R>(_ bytes: [UInt8], _ body: (JSONView) throws -> R) rethrows -> R? {
        var tape = JSONTape()
        return try bytes.withUnsafeBytes { raw -> R? in
            guard (try? tape.parse(raw, maxDepth: 256)) != nil else { return nil }
            return try tape.nodes.withUnsafeBufferPointer { nodes in try body(JSONView(nodes: nodes, bytes: raw)) }
        }
    }
}
