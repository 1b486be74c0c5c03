import CLMDB

/// A transaction, lent to the closure of `Environment.read`/`write`, which commit or
/// abort it when the closure returns: there is no way to commit twice. Do not keep it
/// past the closure (it is not `Sendable`, so it cannot cross to another task).
public struct Transaction {
    let handle: OpaquePointer
    /// Whether puts and deletes are allowed.
    public let isWritable: Bool

    /// Runs `body` with a cursor on `database`, closed when `body` returns.
    public func withCursor<R>(_ database: Database, _ body: (Cursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor), "mdb_cursor_open")
        guard let cursor else { throw LMDBError(code: MDB_BAD_TXN, operation: "mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        return try body(Cursor(handle: cursor))
    }

    /// A cursor that lives as long as this write transaction (LMDB frees it when the
    /// transaction ends): for writers that put many entries into the same database,
    /// which `mdb_put` would set a cursor up for each time.
    public func writeCursor(_ database: Database) throws -> Cursor {
        precondition(isWritable, "writeCursor needs a write transaction")
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor), "mdb_cursor_open")
        guard let cursor else { throw LMDBError(code: MDB_BAD_TXN, operation: "mdb_cursor_open") }
        return Cursor(handle: cursor)
    }

    /// The id of this transaction's snapshot.
    public var id: Int { Int(mdb_txn_id(handle)) }
}

@available(*, unavailable)
extension Transaction: Sendable {}
