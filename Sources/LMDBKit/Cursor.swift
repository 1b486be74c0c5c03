import CLMDB

/// A key and value under a cursor; both point into the map (valid until the
/// transaction ends).
public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

/// A position in a database, lent by `Transaction.withCursor`. Each move returns the
/// entry it lands on, or nil when there is none.
public struct Cursor {
    let handle: OpaquePointer

    private func move(
        _ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil,
        value: UnsafeRawBufferPointer? = nil
    ) throws -> Entry? {
        var k = key.map(MDB_val.init) ?? MDB_val()
        var v = value.map(MDB_val.init) ?? MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_cursor_get")
        return (k.buffer, v.buffer)
    }

    public func first() throws -> Entry? { try move(MDB_FIRST) }
    public func last() throws -> Entry? { try move(MDB_LAST) }
    public func next() throws -> Entry? { try move(MDB_NEXT) }
    public func previous() throws -> Entry? { try move(MDB_PREV) }
    public func current() throws -> Entry? { try move(MDB_GET_CURRENT) }
    /// Exactly `key` (its first value in a duplicate-sort database).
    public func find(_ key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_KEY, key: key) }
    /// The first key ≥ `key`.
    public func seek(_ key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// In a duplicate-sort database: the first value ≥ `value` under exactly `key`.
    public func seek(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Entry? {
        try move(MDB_GET_BOTH_RANGE, key: key, value: value)
    }
    public func nextDuplicate() throws -> Entry? { try move(MDB_NEXT_DUP) }
    public func previousDuplicate() throws -> Entry? { try move(MDB_PREV_DUP) }
    public func firstDuplicate() throws -> Entry? { try move(MDB_FIRST_DUP) }
    public func lastDuplicate() throws -> Entry? { try move(MDB_LAST_DUP) }
    public func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }
    public func previousKey() throws -> Entry? { try move(MDB_PREV_NODUP) }
    /// With `duplicateFixed`: up to a page of packed values from the current position.
    public func multiple() throws -> Entry? {
        // LMDB keeps a key's only value inline and then fills in nothing: return it.
        guard let entry = try move(MDB_GET_MULTIPLE) else { return nil }
        return entry.value.baseAddress == nil ? try current() : entry
    }
    /// With `duplicateFixed`: the next page of packed values of the current key.
    public func nextMultiple() throws -> Entry? { try move(MDB_NEXT_MULTIPLE) }

    /// How many values the current key has (duplicate-sort databases).
    public func duplicateCount() throws -> Int {
        var n: Int = 0
        try check(mdb_cursor_count(handle, &n), "mdb_cursor_count")
        return n
    }

    /// Deletes the entry under the cursor; with `allDuplicates`, every value of its key
    /// (a duplicate-sort database).
    public func deleteCurrent(allDuplicates: Bool = false) throws {
        try check(mdb_cursor_del(handle, allDuplicates ? UInt32(MDB_NODUPDATA) : 0), "mdb_cursor_del")
    }

    /// Stores through the cursor (e.g. with `.append` for sorted bulk loads).
    public func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = []) throws -> Bool
    {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_cursor_put(handle, &k, &v, flags.rawValue)
        if rc == MDB_KEYEXIST, !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try check(rc, "mdb_cursor_put")
        return true
    }

    /// Appends `values`, packed values of `size` bytes each in increasing order, to the
    /// values of `key` in a `duplicateFixed` database; each must sort after the key's
    /// values already stored.
    public func appendDuplicates(_ key: UnsafeRawBufferPointer, _ values: UnsafeRawBufferPointer, size: Int) throws {
        var k = MDB_val(key)
        // MDB_MULTIPLE takes two vals: the first value (and the size of each), the count.
        var v = (
            MDB_val(mv_size: size, mv_data: UnsafeMutableRawPointer(mutating: values.baseAddress)),
            MDB_val(mv_size: values.count / size, mv_data: nil)
        )
        try withUnsafeMutablePointer(to: &v) {
            try $0.withMemoryRebound(to: MDB_val.self, capacity: 2) {
                try check(mdb_cursor_put(handle, &k, $0, UInt32(MDB_APPENDDUP | MDB_MULTIPLE)), "mdb_cursor_put")
            }
        }
    }

    /// Stores `value` at `key` unless the key is there; returns the stored value when it is.
    public func insertIfAbsent(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws
        -> UnsafeRawBufferPointer?
    {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_cursor_put(handle, &k, &v, UInt32(MDB_NOOVERWRITE))
        if rc == MDB_KEYEXIST { return v.buffer }
        try check(rc, "mdb_cursor_put")
        return nil
    }

    /// Reserves `size` bytes for the value at `key` and lets `fill` write them in place.
    public func reserve(
        _ key: UnsafeRawBufferPointer, size: Int, flags: PutFlags = [],
        _ fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        var k = MDB_val(key)
        var v = MDB_val(mv_size: size, mv_data: nil)
        try check(mdb_cursor_put(handle, &k, &v, flags.rawValue | UInt32(MDB_RESERVE)), "mdb_cursor_put")
        try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: size))
    }
}

/// Asks the CPU to fetch the cache line at `address` ahead of a read: for a walk over
/// entries, the next entry's memory while this one is worked on. It changes nothing
/// but timing.
@inlinable @inline(__always)
public func prefetch(_ address: UnsafeRawPointer) { pushtrail_prefetch(address) }
