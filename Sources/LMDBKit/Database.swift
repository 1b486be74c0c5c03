import CLMDB

/// Flags a named database is created with.
public struct DatabaseFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Several sorted values per key.
    public static let duplicateSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// With `duplicateSort`: every value of a key has the same size, stored packed.
    public static let duplicateFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
}

/// Flags of a single put.
public struct PutFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Fail with `isKeyExists` rather than overwrite.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// In a duplicate-sort database, do not add a value that is already there.
    public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// The key sorts after every key already stored: skips the tree search.
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// The value sorts after every value of its key.
    public static let appendDuplicate = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
}

/// Counters of one database, from `mdb_stat`.
public struct DatabaseStatistics: Sendable, Equatable {
    public var entries: Int
    public var depth: Int
    public var branchPages: Int
    public var leafPages: Int
    public var overflowPages: Int
    public var pageSize: Int
    /// Bytes of pages the database occupies.
    public var bytes: Int { (branchPages + leafPages + overflowPages) * pageSize }
}

/// A named database in an environment: a sorted map of byte keys to byte values.
///
/// Byte buffers returned by reads point into the memory map and stay valid only until
/// the transaction ends: copy what must outlive it.
public struct Database: Sendable {
    let dbi: MDB_dbi
    /// The flags the database was opened with.
    public let flags: DatabaseFlags

    /// The value stored at `key`, or nil.
    public func get(_ key: UnsafeRawBufferPointer, in txn: Transaction) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdb_get(txn.handle, dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get")
        return v.buffer
    }

    /// The value stored at `key`, or nil.
    public func get(_ key: [UInt8], in txn: Transaction) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { try get($0, in: txn) }
    }

    /// Stores `value` at `key`. Returns false when `noOverwrite`/`noDuplicateData` found
    /// it already there; an `append` out of order throws.
    @discardableResult
    public func put(
        _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = [],
        in txn: Transaction
    ) throws -> Bool {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_put(txn.handle, dbi, &k, &v, flags.rawValue)
        // "Already there" only where the caller asked not to overwrite; with .append an
        // out-of-order key is an error, never a silent no-op.
        if rc == MDB_KEYEXIST, !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try check(rc, "mdb_put")
        return true
    }

    /// Stores `value` at `key` (array convenience).
    @discardableResult
    public func put(_ key: [UInt8], _ value: [UInt8], flags: PutFlags = [], in txn: Transaction) throws -> Bool {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in try put(k, v, flags: flags, in: txn) }
        }
    }

    /// Deletes `key` (and with a `value`, only that duplicate). Returns false when absent.
    @discardableResult
    public func delete(_ key: [UInt8], value: [UInt8]? = nil, in txn: Transaction) throws -> Bool {
        try key.withUnsafeBytes { kb in
            var k = MDB_val(kb)
            let rc: Int32
            if let value {
                rc = value.withUnsafeBytes { vb in
                    var v = MDB_val(vb)
                    return mdb_del(txn.handle, dbi, &k, &v)
                }
            } else {
                rc = mdb_del(txn.handle, dbi, &k, nil)
            }
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "mdb_del")
            return true
        }
    }

    /// Deletes every entry, keeping the database itself (`mdb_drop` without deleting).
    public func empty(in txn: Transaction) throws {
        try check(mdb_drop(txn.handle, dbi, 0), "mdb_drop")
    }

    /// Counters for this database as of `txn`.
    public func statistics(in txn: Transaction) throws -> DatabaseStatistics {
        var s = MDB_stat()
        try check(mdb_stat(txn.handle, dbi, &s), "mdb_stat")
        return DatabaseStatistics(
            entries: s.ms_entries, depth: Int(s.ms_depth), branchPages: s.ms_branch_pages,
            leafPages: s.ms_leaf_pages, overflowPages: s.ms_overflow_pages, pageSize: Int(s.ms_psize))
    }
}

extension MDB_val {
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }

    var buffer: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: mv_data, count: mv_size)
    }
}
