import LMDBKit

/// Changes a store behind pushtrail's back, through LMDB directly, the way an attacker
/// or a bad disk would. Each call opens the environment, makes one write transaction
/// and closes the environment before returning, so no other handle of this process
/// is open on the store while it writes (callers run no command meanwhile).
enum Tampering {
    /// A seq as the store keys it: 8 bytes, big-endian.
    static func seqKey(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

    /// The size of an event value's header, before the raw JSON (docs: type, recorded_at, at, hash).
    static let eventHeaderSize = 49

    /// Runs `body` in one write transaction on the named database of the store at `path`.
    static func write<R>(
        _ path: String, database: String, flags: DatabaseFlags = [], _ body: (Database, Transaction) throws -> R
    ) throws -> R {
        var options = EnvironmentOptions()
        options.maxDatabases = 16
        let env = try Environment(path: path, options: options)
        let db = try env.openDatabases { txn in try env.openDatabase(database, flags: flags, create: false, in: txn) }
        return try env.write { txn in try body(db, txn) }
    }

    /// Changes one byte of the raw JSON of event `seq`: the first character of its
    /// `user` value becomes `replacement`. Everything else (header, hash) is kept.
    /// Returns the byte offset changed within the value.
    @discardableResult
    static func rewriteUserByte(_ path: String, seq: UInt64, replacement: UInt8 = UInt8(ascii: "Z")) throws -> Int {
        try write(path, database: "events") { events, txn in
            guard let stored = try events.get(seqKey(seq), in: txn) else { throw HarnessError("no event seq \(seq)") }
            var value = Array(stored)
            let marker = Array("\"user\":\"".utf8)
            guard let at = firstIndex(of: marker, in: value, from: eventHeaderSize) else {
                throw HarnessError("event seq \(seq) has no \"user\":\" in its JSON")
            }
            let offset = at + marker.count
            guard value[offset] != replacement else { throw HarnessError("byte already \(replacement)") }
            value[offset] = replacement
            try events.put(seqKey(seq), value, in: txn)
            return offset
        }
    }

    /// The raw event value (header and JSON) of `seq`.
    static func value(_ path: String, seq: UInt64) throws -> [UInt8]? {
        try write(path, database: "events") { events, txn in try events.get(seqKey(seq), in: txn).map(Array.init) }
    }

    /// Removes event `seq` from the events database (and nothing else).
    static func deleteEvent(_ path: String, seq: UInt64) throws {
        let removed = try write(path, database: "events") { events, txn in try events.delete(seqKey(seq), in: txn) }
        guard removed else { throw HarnessError("event seq \(seq) was not there to delete") }
    }

    /// Swaps the stored values of events `a` and `b` (a reordering).
    static func swapEvents(_ path: String, _ a: UInt64, _ b: UInt64) throws {
        try write(path, database: "events") { events, txn in
            guard let va = try events.get(seqKey(a), in: txn).map(Array.init),
                let vb = try events.get(seqKey(b), in: txn).map(Array.init)
            else { throw HarnessError("missing event") }
            try events.put(seqKey(a), vb, in: txn)
            try events.put(seqKey(b), va, in: txn)
        }
    }

    /// Removes, from a dup-sort index (`users`, `threads`, `tasks`, …), the one entry
    /// under `key` for `seq`: an 8-byte seq value, or a 16-byte (at, seq) position in
    /// `time` (docs/STORE.md).
    static func deleteIndexEntry(_ path: String, index: String, key: [UInt8], seq: UInt64) throws {
        try write(path, database: index, flags: [.duplicateSort, .duplicateFixed]) { db, txn in
            let wanted = seqKey(seq)
            let value: [UInt8]? = try txn.withCursor(db) { cursor in
                guard try key.withUnsafeBytes({ try cursor.find($0) }) != nil else { return nil }
                var entry = try cursor.firstDuplicate()
                while let (_, v) = entry {
                    if v.count == 8, Array(v) == wanted { return Array(v) }
                    if v.count == 16, Array(v[8..<16]) == wanted { return Array(v) }
                    entry = try cursor.nextDuplicate()
                }
                return nil
            }
            guard let value else { throw HarnessError("no \(index) entry for seq \(seq)") }
            guard try db.delete(key, value: value, in: txn) else { throw HarnessError("delete found nothing") }
        }
    }

    /// Removes the id → seq entry of an event id (its exact bytes).
    static func deleteID(_ path: String, id: String) throws {
        let removed = try write(path, database: "ids") { ids, txn in try ids.delete(Array(id.utf8), in: txn) }
        guard removed else { throw HarnessError("id \(id) was not in the ids database") }
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
