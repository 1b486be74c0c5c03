import Foundation
import PushTrailCLI
import PushTrailHTTPClient
import PushTrailModel
import PushTrailServer
import PushTrailStore
import Testing

/// The exchanges of `pushtrail-cluster`, for the command line run in-process.
struct CurlTransport: RemoteTransport {
    func perform(_ requests: [RemoteRequest]) -> [Result<RemoteReply, RemoteFailure>] {
        HTTPClient.perform(
            requests.map {
                HTTPClientRequest(
                    url: $0.url, method: $0.method, headers: $0.headers, body: $0.body, timeout: $0.timeout,
                    connectTimeout: $0.connectTimeout, caFile: $0.caFile, maxBodyBytes: $0.maxBodyBytes)
            }
        ).map { result in
            switch result {
            case .success(let reply): .success(RemoteReply(status: reply.status, body: reply.body))
            case .failure(let error): .failure(RemoteFailure(reason: error.description))
            }
        }
    }
}

/// Four shard stores holding the partitions of one generated stream, a and b local, c
/// and d behind the real server with read tokens, and one store holding every event:
/// each reading command's `--json` over the cluster equals the single store's, seq
/// aside. The events are split by `Partition.of` as `publish` does (the JetStream path
/// itself is Scripts/cluster-test.sh's).
@Suite("A cluster of four shards, two of them served, answers as one store", .serialized)
final class ClusterTests {
    static let generator = [
        "--events", "6000", "--seed", "11", "--anomalies", "0.05", "--android-share", "0.3", "--start", "2026-11-25",
    ]
    let dir = NSTemporaryDirectory() + "pushtrail-cluster-" + UUID().uuidString
    var one: String { dir + "/one" }
    var clusterFile: String { dir + "/cluster.json" }
    var served: [ServerFixture] = []
    var tokens: [String: String] = [:]
    var events: [[String: Any]] = []

    init() throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let input = dir + "/events.ndjson"
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: try ServerProcessTests.built("pushtrail-gen"))
        gen.arguments = Self.generator + ["-o", input]
        try gen.run()
        gen.waitUntilExit()
        try #require(gen.terminationStatus == 0, "pushtrail-gen exited \(gen.terminationStatus)")

        // Each line to the shard of its partition: 8 partitions, two a shard.
        let lines = try String(contentsOfFile: input, encoding: .utf8).split(separator: "\n").map(String.init)
        var decoder = EventDecoder()
        let decoded = try lines.map { try decoder.decode(Array($0.utf8)) }
        var taskOf: [String: Int64] = [:]
        for e in decoded where e.type == .notification {
            if let t = e.taskID { taskOf[EventID.normalizedNotificationIDString(e.id)] = t }
        }
        var parts = [[String]](repeating: [], count: 4)
        for (line, e) in zip(lines, decoded) {
            let task =
                e.taskID ?? e.referencedNotificationID.flatMap { taskOf[EventID.normalizedNotificationIDString($0)] }
            let partition = Partition.of(taskID: try #require(task, "an event without a task: \(line)"), count: 8)
            parts[partition / 2].append(line)
        }
        for (i, part) in parts.enumerated() {
            try (part.joined(separator: "\n") + "\n").write(
                toFile: dir + "/part\(i).ndjson", atomically: false, encoding: .utf8)
        }
        events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }

        #expect(ServerFixture.cli(["--store", one, "ingest", input]).status == 0)
        for i in 0..<2 {
            #expect(ServerFixture.cli(["--store", dir + "/s\(i)", "ingest", dir + "/part\(i).ndjson"]).status == 0)
        }
        for i in 2..<4 {
            let fixture = try ServerFixture(events: dir + "/part\(i).ndjson")
            tokens["TOKEN_\(i)"] = try AccessTokens.add(
                name: "cluster", role: .read, storePath: fixture.storePath, now: ServerFixture.now)
            served.append(fixture)
        }
        try writeCluster(dPort: served[1].server.port)
    }

    deinit {
        served.removeAll()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The cluster file, shard d at `dPort` (a closed port makes it unreachable).
    func writeCluster(dPort: UInt16) throws {
        let cluster = """
            {"stream": "PUSHTRAIL", "partitions": 8, "timeout_seconds": 10, "shards": [
              {"name": "a", "partitions": [0, 1], "store": "s0"},
              {"name": "b", "partitions": "2-3", "store": "s1"},
              {"name": "c", "partitions": [4, 5], "url": "http://127.0.0.1:\(served[0].server.port)",
               "token_env": "TOKEN_2"},
              {"name": "d", "partitions": [6, 7], "url": "http://127.0.0.1:\(dPort)/", "token_env": "TOKEN_3"}]}
            """
        try cluster.write(toFile: clusterFile, atomically: false, encoding: .utf8)
    }

    /// A loopback port nothing listens on: bound, read back and closed.
    static func closedPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// The command line in-process over the cluster, with an HTTP client for c and d.
    func overCluster(_ argv: [String], environment: [String: String]? = nil) -> (
        status: Int32, stdout: [UInt8], stderr: String
    ) {
        let out = OutputStream()
        let err = OutputStream()
        let context = Context(
            stdout: out, stderr: err, environment: environment ?? tokens, clock: { ServerFixture.now },
            stdinIsTerminal: false)
        context.remote = CurlTransport()
        let status = PushTrail.main(argv + ["--cluster", clusterFile], context: context)
        return (status, out.captured, String(decoding: err.captured, as: UTF8.self))
    }

    /// JSON with what is a store's own left out: seqs, store times and hashes, which
    /// shard answered, `as_of` (a store's head), and "seq N" inside messages.
    static func normalized(_ value: Any) -> Any {
        let storeOwn: Set<String> = [
            "seq", "recorded_at", "hash", "shard", "as_of", "store_bytes", "dictionaries", "missing_shards",
        ]
        switch value {
        case let object as [String: Any]:
            return object.filter { !storeOwn.contains($0.key) }.mapValues(normalized)
        case let array as [Any]:
            return array.map(normalized)
        case let text as String:
            return text.replacingOccurrences(of: #"seq \d+"#, with: "seq N", options: .regularExpression)
        default:
            return value
        }
    }

    /// The JSON documents of an answer: one, or one a line.
    static func documents(_ bytes: [UInt8]) -> String {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        let values = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        let data = try? JSONSerialization.data(withJSONObject: normalized(values), options: [.sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    @Test("task, thread, log, show, audit and stats over the cluster equal one store's --json, seq aside")
    func sameAnswers() throws {
        let tasks = Array(Set(events.compactMap { ($0["payload"] as? [String: Any])?["task_id"] as? Int })).sorted()
        let users = Array(Set(events.compactMap { $0["user"] as? String })).sorted()
        var questions: [[String]] = [["stats"], ["audit"], ["log", "--type", "action", "-n", "40", "-r"]]
        for t in GeneratedEquivalenceTests.spread(tasks, 12) {
            questions += [
                ["task", "\(t)"], ["task", "\(t)", "--at", "2026-11-27T12:00:00Z"], ["thread", "task-\(t)"],
                ["log", "--task", "\(t)"], ["audit", "--task", "\(t)"],
            ]
        }
        for u in GeneratedEquivalenceTests.spread(users, 6) {
            questions += [["log", "--user", u, "-n", "7"], ["audit", "--user", u]]
        }
        for e in GeneratedEquivalenceTests.spread(events, 8) { questions.append(["show", e["id"] as! String]) }
        var compared = 0
        for q in questions {
            let single = ServerFixture.cli(["--store", one] + q + ["--json"])
            let cluster = overCluster(q + ["--json"])
            #expect(cluster.status == single.status, "\(q): \(cluster.stderr)")
            #expect(Self.documents(cluster.stdout) == Self.documents(single.stdout), "\(q)")
            #expect(single.status != 0 || !cluster.stdout.isEmpty, "\(q)")
            compared += 1
        }
        #expect(compared == questions.count)
    }

    @Test(
        "sent_after_unregistered across shards: the cluster finds what one store does, more than the shards alone"
    )
    func deadDevicesAcrossShards() throws {
        func count(_ answer: [UInt8]) -> Int {
            let json = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any]
            return (json?["counts"] as? [String: Int])?["sent_after_unregistered"] ?? 0
        }
        let single = count(ServerFixture.cli(["--store", one, "audit", "--json"]).stdout)
        let cluster = count(overCluster(["audit", "--json"]).stdout)
        var alone = 0
        for i in 0..<2 { alone += count(ServerFixture.cli(["--store", dir + "/s\(i)", "audit", "--json"]).stdout) }
        for f in served { alone += count(f.cli(["audit", "--json"]).stdout) }
        #expect(single > 0)
        #expect(cluster == single)
        #expect(alone < single, "each shard alone finds \(alone); the cluster must find \(single)")
    }

    /// The four shards as local stores (c and d read beside their servers).
    func localCluster() throws -> String {
        let local = dir + "/local.json"
        try """
        {"partitions": 8, "shards": [
          {"name": "a", "partitions": [0, 1], "store": "s0"}, {"name": "b", "partitions": [2, 3], "store": "s1"},
          {"name": "c", "partitions": [4, 5], "store": "\(served[0].storePath)"},
          {"name": "d", "partitions": [6, 7], "store": "\(served[1].storePath)"}]}
        """.write(toFile: local, atomically: false, encoding: .utf8)
        return local
    }

    @Test("log without -n, merged as each shard is read, equals one store's: local and served, forward and reverse")
    func streamedLog() throws {
        let local = try localCluster()
        let user = try #require(events.compactMap { $0["user"] as? String }.sorted().first)
        let questions: [[String]] = [
            ["log"], ["log", "-r"], ["log", "--type", "delivery", "-r"], ["log", "--user", user],
            ["log", "--since", "2026-11-26T00:00:00Z", "--until", "2026-11-27T00:00:00Z", "-r"],
        ]
        for q in questions {
            let single = ServerFixture.cli(["--store", one] + q + ["--json"])
            #expect(single.status == 0 && !single.stdout.isEmpty, "\(q)")
            let overLocal = ServerFixture.cli(q + ["--json", "--cluster", local])
            #expect(overLocal.status == 0, "\(q): \(overLocal.stderr)")
            #expect(Self.documents(overLocal.stdout) == Self.documents(single.stdout), "\(q) over local shards")
            let overMixed = overCluster(q + ["--json"])
            #expect(overMixed.status == 0, "\(q): \(overMixed.stderr)")
            #expect(Self.documents(overMixed.stdout) == Self.documents(single.stdout), "\(q) over served shards")
        }
        // The shard that answers each line, in the merge's order: a shard's own order
        // kept, and the whole in time order.
        let raw = ServerFixture.cli(["log", "--json", "--cluster", local]).stdout
        let lines = String(decoding: raw, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == events.count)
        let shards = lines.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["shard"] as? String
        }
        #expect(Set(shards) == ["a", "b", "c", "d"])
    }

    @Test("task and thread over local shards, read once asking the other shards about devices, are one store's")
    func taskOverLocalShards() throws {
        let local = try localCluster()
        let shardStores = [dir + "/s0", dir + "/s1", served[0].storePath, served[1].storePath]
        let audit =
            try JSONSerialization.jsonObject(
                with: Data(ServerFixture.cli(["--store", one, "audit", "--json"]).stdout)) as? [String: Any]
        let findings = try #require(audit?["findings"] as? [[String: Any]])
        let dead = Set(
            findings.filter { $0["code"] as? String == "sent_after_unregistered" }.compactMap {
                $0["task_id"] as? Int
            })
        let tasks = Array(Set(events.compactMap { ($0["payload"] as? [String: Any])?["task_id"] as? Int })).sorted()
        var needsOthers = 0
        for t in dead.sorted() + GeneratedEquivalenceTests.spread(tasks, 10) {
            let single = ServerFixture.cli(["--store", one, "task", "\(t)", "--json"])
            let cluster = ServerFixture.cli(["task", "\(t)", "--json", "--cluster", local])
            #expect(cluster.status == single.status && single.status == 0, "task \(t): \(cluster.stderr)")
            #expect(Self.documents(cluster.stdout) == Self.documents(single.stdout), "task \(t)")
            // For people: the owner's report in one read over local shards, as the rounds
            // give it over served ones (the same stores).
            let text = ServerFixture.cli(["task", "\(t)", "--no-color", "--cluster", local])
            let rounds = overCluster(["task", "\(t)", "--no-color"])
            #expect(text.status == 0 && text.stdout == rounds.stdout, "task \(t) for people: \(text.stderr)")
            // A thread's shards each answer in one read too, asking the others.
            let thread = ServerFixture.cli(["thread", "task-\(t)", "--json", "--cluster", local])
            let threadAlone = ServerFixture.cli(["--store", one, "thread", "task-\(t)", "--json"])
            #expect(Self.documents(thread.stdout) == Self.documents(threadAlone.stdout), "thread task-\(t)")
            let threadText = ServerFixture.cli(["thread", "task-\(t)", "--no-color", "--cluster", local])
            #expect(threadText.stdout == overCluster(["thread", "task-\(t)", "--no-color"]).stdout, "thread task-\(t)")
            let owner = shardStores[Partition.of(taskID: Int64(t), count: 8) / 2]
            let alone = ServerFixture.cli(["--store", owner, "task", "\(t)", "--json"])
            if Self.documents(alone.stdout) != Self.documents(single.stdout) { needsOthers += 1 }
        }
        #expect(!dead.isEmpty)
        #expect(needsOthers > 0, "no task's answer needed another shard's declarations: the test shows nothing")
    }

    @Test("head and verify answer a line per shard")
    func headAndVerify() throws {
        let head = overCluster(["head"])
        #expect(head.status == 0)
        let lines = String(decoding: head.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.map { String($0.prefix(1)) } == ["a", "b", "c", "d"])
        let verify = overCluster(["verify", "--json"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout)) as? [String: Any])
        #expect(json["ok"] as? Bool == true)
        #expect((json["shards"] as? [Any])?.count == 4)
    }

    @Test("a shard that does not answer fails the command with 74 naming it; --partial answers without it")
    func missingShard() throws {
        try writeCluster(dPort: Self.closedPort())
        let failed = overCluster(["stats", "--json"])
        #expect(failed.status == 74)
        #expect(failed.stderr.contains("shard d did not answer"), "\(failed.stderr)")
        #expect(!failed.stderr.contains(tokens["TOKEN_3"]!))
        let partial = overCluster(["stats", "--json", "--partial"])
        #expect(partial.status == 0, "\(partial.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(partial.stdout)) as? [String: Any])
        #expect(json["missing_shards"] as? [String] == ["d"])
        let noToken = overCluster(["head"], environment: ["TOKEN_2": tokens["TOKEN_2"]!])
        #expect(noToken.status == 74)
        #expect(noToken.stderr.contains("$TOKEN_3 is not set"), "\(noToken.stderr)")
    }

    @Test("seqs name one store's events: --at @SEQ and show @SEQ are usage errors over a cluster")
    func sequencesRefused() {
        #expect(overCluster(["task", "1000", "--at", "@5"]).status == 2)
        #expect(overCluster(["show", "@5"]).status == 2)
        #expect(overCluster(["log", "-f"]).status == 2)
        #expect(ServerFixture.cli(["--store", one, "head", "--cluster", clusterFile]).status == 2)
    }

    @Test("$PUSHTRAIL_CLUSTER alone names where reading commands read; a command on one store wants --store")
    func clusterVariable() throws {
        func run(_ argv: [String], _ environment: [String: String]) -> (status: Int32, stdout: [UInt8], stderr: String)
        {
            let out = OutputStream()
            let err = OutputStream()
            let context = Context(
                stdout: out, stderr: err, environment: environment, clock: { ServerFixture.now },
                stdinIsTerminal: false)
            let status = PushTrail.main(argv, context: context)
            return (status, out.captured, String(decoding: err.captured, as: UTF8.self))
        }
        let local = dir + "/local-\(UUID().uuidString).json"
        try """
        {"stream": "PUSHTRAIL", "partitions": 8, "shards": [
          {"name": "a", "partitions": "0-3", "store": "s0"}, {"name": "b", "partitions": "4-7", "store": "s1"}]}
        """.write(toFile: local, atomically: false, encoding: .utf8)
        let cluster = ["PUSHTRAIL_CLUSTER": local]
        let head = run(["head"], cluster)
        #expect(head.status == 0 && String(decoding: head.stdout, as: UTF8.self).hasPrefix("a "), "\(head.stderr)")
        let elsewhere = dir + "/elsewhere-\(UUID().uuidString)"
        for argv in [
            ["ingest", "/dev/null"], ["token", "list"], ["serve"],
            ["consume", "--server", "nats://127.0.0.1:1", "--partitions", "0"],
        ] {
            let refused = run(argv, cluster)
            #expect(refused.status == 2, "\(argv)")
            #expect(
                refused.stderr.contains("$PUSHTRAIL_CLUSTER names a cluster: give --store DIR"), "\(refused.stderr)")
        }
        let named = run(["ingest", "/dev/null", "--store", elsewhere], cluster)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(
            run(["ingest", "/dev/null"], cluster.merging(["PUSHTRAIL_STORE": elsewhere]) { a, _ in a }).status == 0)
    }

    @Test(
        "a cluster file that does not describe one is a usage error saying what is wrong",
        arguments: [
            (
                #"{"partitions": 2, "shards": [{"name": "a", "partitions": [0], "store": "x"}]}"#,
                "partition 1 is owned by no shard"
            ),
            (
                #"{"partitions": 1, "shards": [{"name": "a", "partitions": [0], "store": "x"}, "#
                    + #"{"name": "b", "partitions": [0], "store": "y"}]}"#,
                "partition 0 is owned by both a and b"
            ),
            (
                #"{"partitions": 1, "shards": [{"name": "a", "partitions": [0], "url": "ftp://x"}]}"#,
                "must start with http"
            ),
            (#"{"partitions": 1, "shards": [{"name": "a", "partitions": [0]}]}"#, "needs either \"store\""),
            (#"{"partitions": 0, "shards": []}"#, "partition count"),
            (
                #"{"partitions": 2, "shards": [{"name": "a", "partitions": "0-2", "store": "x"}]}"#,
                "give numbers and ranges within 0…1"
            ),
            (
                #"{"partitions": 2, "shards": [{"name": "a", "partitions": 1, "store": "x"}]}"#,
                "as [0, 1, 2, 3] or \"0-3\""
            ),
            (#"[1, 2]"#, "holds an object"),
            (#"{"partitions": 1, "shards": [{"name": "a b", "partitions": [0], "store": "x"}]}"#, "needs a \"name\""),
        ])
    func badClusterFiles(_ text: String, _ expected: String) throws {
        let path = dir + "/bad-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let answer = ServerFixture.cli(["head", "--cluster", path])
        #expect(answer.status == 2)
        #expect(answer.stderr.contains(expected), "\(answer.stderr)")
    }
}
