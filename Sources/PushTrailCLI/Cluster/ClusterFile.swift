import PushTrailModel
import PushTrailStore

/// A cluster: the shard stores that together hold one stream's partitions, each shard
/// owning a fixed set of them (docs/SCALE.md). Read from the JSON file `--cluster` or
/// `$PUSHTRAIL_CLUSTER` names:
///
///     {"stream": "PUSHTRAIL", "partitions": 8,
///      "shards": [{"name": "a", "partitions": [0, 1, 2, 3], "store": "/srv/pushtrail/a"},
///                 {"name": "b", "partitions": [4, 5, 6, 7], "url": "https://b:8443",
///                  "token_env": "PUSHTRAIL_TOKEN_B", "ca_file": "/etc/pushtrail/ca.pem"}]}
///
/// A relative `store` is relative to the file's directory. Every partition is owned
/// by exactly one shard, so a task's events are all on the shard its partition names.
struct ClusterFile: Sendable {
    enum Location: Sendable, Equatable {
        case store(String)
        case remote(url: String, tokenVariable: String?, caFile: String?)
    }

    struct Shard: Sendable {
        var name: String
        var partitions: [Int]
        var location: Location
    }

    var stream: String
    var partitions: Int
    var shards: [Shard]
    /// Seconds a remote shard has to answer one question (`timeout_seconds`, default 60).
    var timeout: Double
    /// The shard owning each partition, by index into `shards`.
    var owners: [Int]

    /// Whether some shard is reached over HTTP.
    var hasRemoteShards: Bool {
        shards.contains { if case .remote = $0.location { true } else { false } }
    }

    /// The index of the shard holding task `taskID`'s events.
    func owner(ofTask taskID: Int64) -> Int { owners[Partition.of(taskID: taskID, count: partitions)] }

    /// Reads and checks the file at `path`: any fault is a usage error naming the file.
    static func load(_ path: String) throws -> ClusterFile {
        let bytes: [UInt8]
        do {
            bytes = try ImportCommand.readFile(path, kind: "a cluster file")
        } catch let e as CommandError {
            throw UsageError("--cluster: \(e.message)")
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        do {
            return try parse(bytes, directory: directory.isEmpty ? "/" : directory)
        } catch let e as Invalid {
            throw UsageError("--cluster \(path): \(e.reason)")
        }
    }

    struct Invalid: Error { let reason: String }

    /// The cluster `bytes` describe; `directory` anchors relative store paths.
    static func parse(_ bytes: [UInt8], directory: String) throws -> ClusterFile {
        var tape = JSONTape()
        return try bytes.withUnsafeBytes { raw in
            do {
                try tape.parse(raw)
            } catch {
                throw Invalid(reason: "not JSON: \(error)")
            }
            return try tape.nodes.withUnsafeBufferPointer { nodes in
                try parse(JSONView(nodes: nodes, bytes: raw), directory: directory)
            }
        }
    }

    private static func parse(_ v: JSONView, directory: String) throws -> ClusterFile {
        guard v.kind(v.root) == .object else { throw Invalid(reason: "the file holds an object, not a list or value") }
        let stream = v.member(v.root, "stream").flatMap(v.string) ?? "PUSHTRAIL"
        guard let pIndex = v.member(v.root, "partitions"), let count = v.int64(pIndex), (1...4096).contains(count)
        else { throw Invalid(reason: "\"partitions\" must be the stream's partition count (1 to 4096)") }
        guard let sIndex = v.member(v.root, "shards"), v.kind(sIndex) == .array, !v.elements(sIndex).isEmpty else {
            throw Invalid(reason: "\"shards\" must list at least one shard")
        }
        var shards: [Shard] = []
        var owners = [Int](repeating: -1, count: Int(count))
        for (i, s) in v.elements(sIndex).enumerated() {
            guard v.kind(s) == .object, let name = v.member(s, "name").flatMap(v.string), !name.isEmpty,
                !name.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace })
            else { throw Invalid(reason: "shard \(i + 1) needs a \"name\" (no spaces, '/' or '@')") }
            guard !shards.contains(where: { $0.name == name }) else {
                throw Invalid(reason: "two shards are named \(name)")
            }
            // A list of numbers, or the form `consume --partitions` takes ("0-3,6").
            // Not an optional's array: a type of its own costs a command's start-up
            // more than reading the file (the runtime builds it by name).
            var numbers: [Int] = []
            if let list = v.member(s, "partitions"), v.kind(list) == .array {
                for e in v.elements(list) { numbers.append(v.int64(e).map { Int(clamping: $0) } ?? -1) }
            } else if let text = v.member(s, "partitions").flatMap(v.string) {
                guard let parsed = Partition.parseList(text, count: Int(count)) else {
                    throw Invalid(
                        reason: "shard \(name) has \"partitions\": \"\(text)\"; give numbers and ranges "
                            + "within 0…\(count - 1), as \"0-3,6\", or a list, as [0, 1, 2, 3, 6]")
                }
                numbers = parsed
            } else {
                throw Invalid(
                    reason: "shard \(name) needs \"partitions\": the partitions it owns, as [0, 1, 2, 3] or \"0-3\"")
            }
            var owned: [Int] = []
            for n in numbers {
                guard n >= 0, n < count else {
                    throw Invalid(reason: "shard \(name) lists a partition outside 0…\(count - 1)")
                }
                guard owners[n] < 0 else {
                    throw Invalid(reason: "partition \(n) is owned by both \(shards[owners[n]].name) and \(name)")
                }
                owners[n] = i
                owned.append(n)
            }
            let location: Location
            switch (v.member(s, "store").flatMap(v.string), v.member(s, "url").flatMap(v.string)) {
            case (let store?, nil):
                location = .store(store.hasPrefix("/") ? store : directory + "/" + store)
            case (nil, let url?):
                guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                    throw Invalid(reason: "shard \(name)'s url must start with http:// or https://")
                }
                var base = url
                while base.hasSuffix("/") { base.removeLast() }
                location = .remote(
                    url: base, tokenVariable: v.member(s, "token_env").flatMap(v.string),
                    caFile: v.member(s, "ca_file").flatMap(v.string))
            default:
                throw Invalid(reason: "shard \(name) needs either \"store\" (a directory) or \"url\" (a server)")
            }
            shards.append(Shard(name: name, partitions: owned.sorted(), location: location))
        }
        if let free = owners.firstIndex(of: -1) {
            throw Invalid(reason: "partition \(free) is owned by no shard: list every partition once")
        }
        var timeout = 60.0
        if let t = v.member(v.root, "timeout_seconds") {
            guard let n = v.int64(t), (1...3600).contains(n) else {
                throw Invalid(reason: "\"timeout_seconds\" must be a whole number of seconds from 1 to 3600")
            }
            timeout = Double(n)
        }
        return ClusterFile(
            stream: stream, partitions: Int(count), shards: shards, timeout: timeout, owners: owners)
    }
}
