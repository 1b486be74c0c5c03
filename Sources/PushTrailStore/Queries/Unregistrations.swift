import PushTrailModel

/// The devices declared dead (an APNs 410, an FCM `UNREGISTERED`) across every shard of
/// a cluster: each device's earliest declaration, keyed by the store's device key (a
/// digest of the token, so the book carries no token).
///
/// `sent_after_unregistered` is the one finding that depends on other tasks' events,
/// and so, in a cluster, on other shards: a query over a cluster first gathers every
/// shard's book, merges them, and hands the merged book to each shard's reader
/// (`StoreReader.unregistrations`), whose audit then consults it instead of its own
/// store, giving the finding one store holding every event would give.
public struct UnregistrationBook: Sendable {
    public private(set) var entries: [[UInt8]: Unregistration] = [:]

    public init() {}

    /// Keeps `u` for `deviceKey` if it is earlier than the one known, in (at, seq) order.
    public mutating func add(deviceKey: [UInt8], _ u: Unregistration) {
        if let known = entries[deviceKey], (known.at, known.seq) <= (u.at, u.seq) { return }
        entries[deviceKey] = u
    }

    /// Adds every entry of `other`, keeping the earlier of two for one device.
    public mutating func merge(_ other: UnregistrationBook) {
        for (key, u) in other.entries { add(deviceKey: key, u) }
    }

    /// The earliest declaration for `device` strictly before `position`'s time.
    public func unregistration(device: String, before position: Position) -> Unregistration? {
        guard let u = entries[Layout.deviceKey(device)], u.at < position.at else { return nil }
        return u
    }
}

/// A device's earliest declaration over every shard of a cluster, asked for when a
/// report first needs it: given the reader of the shard answering (its own
/// declarations count too) and the device key. In one process over local shards this
/// replaces gathering the book beforehand, which reads the report's events twice.
public typealias UnregistrationLookup = (StoreReader, [UInt8]) throws -> Unregistration?

extension StoreReader {
    /// This store's book: for each device key in the `unregistered` index (or each of
    /// `keys` it holds), its earliest declaring delivery.
    public func unregistrationBook(keys only: [[UInt8]]? = nil) throws -> UnregistrationBook {
        var book = UnregistrationBook()
        var keys: [[UInt8]] = []
        if let only {
            keys = only
        } else {
            try txn.withCursor(store.indexes[.unregistered]) { cursor in
                var entry = try cursor.first()
                while let (key, _) = entry {
                    keys.append(Array(key))
                    entry = try cursor.nextKey()
                }
            }
        }
        var decoder = EventDecoder()
        for key in keys {
            // The earliest by the records' headers; only that one is read and decoded.
            for (position, record) in try timelineRecords(of: seqs(.unregistered, key: key)).sorted(by: {
                $0.position < $1.position
            }) {
                let stored = try storedEvent(seq: position.seq, value: record)
                let event = try stored.decode(using: &decoder)
                guard let d = event.delivery, d.declaresTokenDead else { continue }
                book.add(
                    deviceKey: key, Unregistration(deliveryID: event.id, seq: position.seq, at: event.at, delivery: d))
                break
            }
        }
        return book
    }
}

extension StoreReader {
    /// The device keys of the notifications among what `scope` reports on, ascending.
    public func notifiedDevices(_ scope: ReadQuestion.DeviceScope) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        func note(_ loaded: LoadedEvent) {
            if loaded.event.type == .notification, let device = loaded.event.device {
                keys.append(Layout.deviceKey(device))
            }
        }
        switch scope {
        case .timeline(let subject, let horizon):
            switch subject {
            case .thread(let id): try threadEvents(id, horizon: horizon).forEach(note)
            case .task(let id), .taskWithDeliveries(let id): try taskEvents(id, horizon: horizon).forEach(note)
            case .user(let user, let since): try userEvents(user, since: since, horizon: horizon).forEach(note)
            case .event(let id):
                if let seq = try seq(forID: id), let stored = try event(seq: seq) {
                    note(LoadedEvent(stored: stored, event: try stored.decode()))
                }
            }
        case .log(let query):
            try log(query) {
                note($0)
                return true
            }
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        var unique: [[UInt8]] = []
        for k in keys where k != unique.last { unique.append(k) }
        return unique
    }
}

extension UnregistrationBook {
    /// The book in `json` (`Presentation.unregistrations`' form); nil when it is not one.
    public init?(json: [UInt8]) {
        var tape = JSONTape()
        let book: UnregistrationBook? = json.withUnsafeBytes { raw in
            guard (try? tape.parse(raw)) != nil else { return nil }
            return tape.nodes.withUnsafeBufferPointer { nodes in
                UnregistrationBook(view: JSONView(nodes: nodes, bytes: raw))
            }
        }
        guard let book else { return nil }
        self = book
    }

    private init?(view v: JSONView) {
        self.init()
        guard v.kind(v.root) == .object, let list = v.member(v.root, "unregistered"), v.kind(list) == .array else {
            return nil
        }
        for e in v.elements(list) {
            guard v.kind(e) == .object,
                let key = v.member(e, "device_key").flatMap(v.string).flatMap(SHA256.bytes(hex:)),
                key.count == 16, let id = v.member(e, "id").flatMap(v.string),
                let seq = v.member(e, "seq").flatMap(v.int64), seq >= 0,
                let at = v.member(e, "at_us").flatMap(v.int64),
                let status = v.member(e, "status").flatMap(v.int64),
                let reason = v.member(e, "reason").flatMap(v.string)
            else { return nil }
            add(
                deviceKey: key,
                Unregistration(
                    deliveryID: id, seq: UInt64(seq), at: Timestamp(microseconds: at), status: Int(status),
                    reason: reason))
        }
    }
}
