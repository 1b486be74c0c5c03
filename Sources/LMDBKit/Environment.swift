import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an environment is opened. The defaults suit an append-mostly audit log.
public struct EnvironmentOptions: Sendable {
    /// The initial map size in bytes; it grows on demand (see `Environment.write`).
    public var mapSize: Int = 256 << 20
    /// How many named databases the environment may hold.
    public var maxDatabases: UInt32 = 16
    /// How many reader slots (concurrent read transactions across processes).
    public var maxReaders: UInt32 = 126
    /// Open without write access: no write transactions, no lock-file creation.
    public var readOnly = false
    /// Skip the OS read-ahead: lookups touch scattered pages, so read-ahead only
    /// wastes page cache.
    public var noReadahead = true
    /// Skip `fsync` on commit (faster, but the last commits can be lost on power
    /// failure). Off by default: a committed event is durable.
    public var noSync = false
    /// Write pages straight into a writable map (`MDB_WRITEMAP`) instead of through
    /// `pwrite`: a transaction's dirty pages are the file's (page cache), not the
    /// process's memory, so a large transaction costs no heap. LMDB then keeps the
    /// file as long as the map (sparse), and a page the disk cannot back faults with
    /// SIGBUS instead of failing a write. Ignored when `readOnly`.
    public var writeMap = false
    /// File mode for `data.mdb` and `lock.mdb`.
    public var fileMode: mode_t = 0o600
    /// Called with LMDB's message when one of its internal assertions fails (a page
    /// that contradicts itself: a damaged file), before LMDB aborts the process. It
    /// may end the process its own way instead (`_exit`).
    public var assertionHandler: AssertionHandler?

    public typealias AssertionHandler = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void
    /// A name the assertion handler can read back with `Environment.label(of:)` (it
    /// cannot capture anything): kept as LMDB's user context of the environment, so
    /// that environments open at once in one process each keep their own.
    public var label: String?

    public init() {}
}

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// Transactions are scoped (`read { }`, `write { }`): they end when the closure
/// returns, so none can leak. `MDB_NOTLS` is set, so a read transaction is not tied
/// to the thread that began it. Threads of one process may share an environment: its
/// map changes only while none of them has a transaction open.
public final class Environment: @unchecked Sendable {
    let handle: OpaquePointer
    /// The path the environment was opened at.
    public let path: String
    /// Whether the environment was opened read-only.
    public let isReadOnly: Bool
    /// Whether writes go through a writable map (`EnvironmentOptions.writeMap`).
    public let isWriteMap: Bool
    /// Holds the map still while transactions of this process are open.
    private let gate = TransactionGate()

    /// Opens (and with write access, creates the files of) the environment in `path`,
    /// which must be an existing directory.
    public init(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: EINVAL, operation: "mdb_env_create") }
        do {
            try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize")
            if let handler = options.assertionHandler { _ = mdb_env_set_assert(env, handler) }
            if let label = options.label { _ = mdb_env_set_userctx(env, strdup(label)) }
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.noReadahead { flags |= UInt32(MDB_NORDAHEAD) }
            if options.noSync { flags |= UInt32(MDB_NOSYNC) }
            if options.writeMap && !options.readOnly { flags |= UInt32(MDB_WRITEMAP) }
            try check(mdb_env_open(env, path, flags, options.fileMode), "mdb_env_open \(path)")
        } catch {
            free(mdb_env_get_userctx(env))
            mdb_env_close(env)
            throw error
        }
        self.handle = env
        self.path = path
        self.isReadOnly = options.readOnly
        self.isWriteMap = options.writeMap && !options.readOnly
    }

    deinit {
        let label = mdb_env_get_userctx(handle)
        mdb_env_close(handle)
        free(label)
    }

    /// The `EnvironmentOptions.label` of the environment `env` was opened with, for an
    /// assertion handler.
    public static func label(of env: OpaquePointer?) -> String? {
        labelCString(of: env).map { String(cString: $0) }
    }

    /// The label as the C string the environment keeps, for a handler that may not
    /// allocate.
    public static func labelCString(of env: OpaquePointer?) -> UnsafePointer<CChar>? {
        guard let env, let label = mdb_env_get_userctx(env) else { return nil }
        return UnsafePointer(label.assumingMemoryBound(to: CChar.self))
    }

    /// Runs `body` in a read-only transaction that ends when `body` returns.
    /// Everything read through it is a consistent snapshot.
    public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        let txn = try begin(flags: UInt32(MDB_RDONLY))
        defer { end(abort: txn) }
        return try body(Transaction(handle: txn, isWritable: false))
    }

    /// Runs `body` in a read-only transaction if one can begin without waiting for the
    /// map to change (another thread's pending growth, or another process's to adopt);
    /// returns nil instead. For a helper thread whose caller holds a transaction open
    /// and waits for it: waiting there could never end.
    public func readIfReady<R>(_ body: (Transaction) throws -> R) throws -> R? {
        guard let txn = try begin(flags: UInt32(MDB_RDONLY), waiting: false) else { return nil }
        defer { end(abort: txn) }
        return try body(Transaction(handle: txn, isWritable: false))
    }

    /// Runs `body` in a write transaction and commits when it returns; throwing aborts.
    ///
    /// When the map is full the transaction is aborted, the map grows and `body` runs
    /// again from the start, so `body` must not have effects outside the transaction
    /// (return its results instead). Write transactions are serialised across threads
    /// and processes by LMDB's writer lock. The map grows once every transaction of
    /// this process has ended; new ones wait for it (`TransactionGate`).
    ///
    /// With `retryingWhenFull` false, a full map is thrown (`isMapFull`) instead, for a
    /// `body` that cannot be run twice.
    public func write<R>(retryingWhenFull: Bool = true, _ body: (Transaction) throws -> R) throws -> R {
        precondition(!isReadOnly, "write transaction on a read-only environment")
        while true {
            let txn = try begin(flags: 0)
            let result: R
            do {
                result = try body(Transaction(handle: txn, isWritable: true))
            } catch let error as LMDBError where error.isMapFull && retryingWhenFull {
                end(abort: txn)
                try growMap()
                continue
            } catch {
                end(abort: txn)
                throw error
            }
            let rc = mdb_txn_commit(txn)  // frees the transaction, success or not
            gate.leave()
            if rc == MDB_MAP_FULL && retryingWhenFull {
                try growMap()
                continue
            }
            try check(rc, "mdb_txn_commit")
            return result
        }
    }

    /// Runs `body`, which opens named databases, in a transaction that commits so the
    /// handles stay valid for the life of the environment (read-only when the
    /// environment is).
    public func openDatabases<R>(_ body: (Transaction) throws -> R) throws -> R {
        if !isReadOnly { return try write(body) }
        let txn = try begin(flags: UInt32(MDB_RDONLY))
        let result: R
        do {
            result = try body(Transaction(handle: txn, isWritable: false))
        } catch {
            end(abort: txn)
            throw error
        }
        let rc = mdb_txn_commit(txn)
        gate.leave()
        try check(rc, "mdb_txn_commit")
        return result
    }

    /// Begins a transaction inside the gate, waiting for the map to change first if it
    /// must (the caller must `end` it, or commit and leave the gate).
    private func begin(flags: UInt32) throws -> OpaquePointer {
        // Only a begin that does not wait can come back without a transaction.
        try begin(flags: flags, waiting: true)!
    }

    /// As `begin(flags:)`; nil instead of waiting when `waiting` is off and the map
    /// must change first.
    private func begin(flags: UInt32, waiting: Bool) throws -> OpaquePointer? {
        while true {
            guard gate.enter(waiting: waiting) else { return nil }
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, flags, &txn)
            if rc == MDB_MAP_RESIZED {
                // Another process grew the file past our map: adopt its size, once no
                // transaction of this process is open.
                gate.leave()
                guard waiting else { return nil }
                try gate.resize { try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize") }
                continue
            }
            guard rc == 0, let txn else {
                gate.leave()
                try check(rc, "mdb_txn_begin")
                throw LMDBError(code: EINVAL, operation: "mdb_txn_begin")
            }
            return txn
        }
    }

    private func end(abort txn: OpaquePointer) {
        mdb_txn_abort(txn)
        gate.leave()
    }

    /// The data file's descriptor (LMDB's own: do not close it).
    public var fileDescriptor: Int32 {
        var fd: Int32 = -1
        mdb_env_get_fd(handle, &fd)
        return fd
    }

    /// Bytes of the file the last committed transaction uses: its pages up to the
    /// last one. Beyond them a `writeMap` file holds only unused, sparse map.
    public var usedBytes: Int { (lastPageNumber + 1) * pageSize }

    /// Cuts the data file of the environment `env` (a raw handle, as LMDB passes to an
    /// assertion handler) back to the pages of its last commit, for a process about to
    /// exit in the middle of a write through a writable map.
    public static func trimToLastCommit(_ env: OpaquePointer) {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        var fd: Int32 = -1
        guard mdb_env_info(env, &info) == 0, mdb_env_stat(env, &stat) == 0, mdb_env_get_fd(env, &fd) == 0, fd >= 0
        else { return }
        _ = ftruncate(fd, off_t((info.me_last_pgno + 1) * Int(stat.ms_psize)))
    }

    /// The current map size in bytes.
    public var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// The highest page number the last committed transaction uses: the file must be at
    /// least `(lastPageNumber + 1) * pageSize` bytes, or it was truncated.
    public var lastPageNumber: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_last_pgno
    }

    /// The page size of the environment.
    public var pageSize: Int {
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return Int(stat.ms_psize)
    }

    /// The id of the last committed transaction: it changes whenever any process
    /// commits, which makes it a cheap "anything new?" probe for followers.
    public var lastTransactionID: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_last_txnid
    }

    /// Sets the map to at least `bytes` (rounded up to 1 MiB); never shrinks it. Waits
    /// until no transaction of this process is open; the calling thread must have none.
    public func ensureMapSize(_ bytes: Int) throws {
        guard bytes > mapSize else { return }
        let rounded = (bytes + (1 << 20) - 1) & ~((1 << 20) - 1)
        try gate.resize {
            guard rounded > mapSize else { return }
            try check(mdb_env_set_mapsize(handle, rounded), "mdb_env_set_mapsize")
        }
    }

    /// Grows the map: doubling while small, then by 1 GiB steps, rounded to 1 MiB.
    /// Waits until no transaction of this process is open; the calling thread must have
    /// none.
    public func growMap() throws {
        let before = mapSize
        try gate.resize {
            // Another thread may have grown it while this one waited: that is enough.
            let current = mapSize
            guard current == before else { return }
            let step = Swift.min(Swift.max(current, 1 << 20), 1 << 30)
            let next = (current + step + (1 << 20) - 1) & ~((1 << 20) - 1)
            try check(mdb_env_set_mapsize(handle, next), "mdb_env_set_mapsize")
        }
    }

    /// Clears the reader slots of processes that died holding a read transaction;
    /// returns how many were cleared.
    @discardableResult
    public func clearStaleReaders() throws -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
        return Int(dead)
    }

    /// Flushes buffers to disk (useful after writing with `noSync`).
    public func sync() throws {
        try check(mdb_env_sync(handle, 1), "mdb_env_sync")
    }

    /// Opens a named database, creating it when `create` is set (write transaction
    /// only). The handle stays valid for the life of the environment once the
    /// transaction that opened it commits.
    public func openDatabase(
        _ name: String, flags: DatabaseFlags = [], create: Bool, in txn: Transaction
    ) throws -> Database {
        var dbi: MDB_dbi = 0
        var raw = flags.rawValue
        if create { raw |= UInt32(MDB_CREATE) }
        try check(mdb_dbi_open(txn.handle, name, raw, &dbi), "mdb_dbi_open \(name)")
        return Database(dbi: dbi, flags: flags)
    }
}
