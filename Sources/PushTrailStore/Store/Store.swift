import LMDBKit
import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a store cannot be used or a store operation failed: values that a front end
/// (the command line, a server) turns into its own words and statuses. `description`
/// is a neutral one-line statement of the fact, with no advice.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No store at `path` (a reader never creates one).
    case missing(path: String)
    case notADirectory(path: String)
    /// The store directory is writable by others.
    case insecure(path: String, mode: UInt32)
    case notAStore(path: String, detail: String)
    /// The store's format is newer than this build reads.
    case newerFormat(path: String, found: UInt32, supported: UInt32)
    /// A stored event cannot be read back as it was written.
    case damaged(seq: UInt64, detail: String)
    /// The disk refused a write (no space, quota, I/O error): the transaction was not
    /// committed and everything committed before is intact.
    case writeRefused(path: String, errno: Int32)
    /// A file or system operation failed; `message` says which and why.
    case io(String)

    public var description: String {
        switch self {
        case .missing(let path):
            "no store at \(path)"
        case .notADirectory(let path):
            "\(path) is not a directory"
        case .insecure(let path, let mode):
            "store directory \(path) is writable by others (mode \(String(mode, radix: 8)))"
        case .notAStore(let path, let detail):
            "\(path) is not a pushtrail store (\(detail))"
        case .newerFormat(let path, let found, let supported):
            "store \(path) has format \(found), newer than this build reads (\(supported))"
        case .damaged(let seq, let detail):
            "event seq \(seq) is damaged (\(detail))"
        case .writeRefused(let path, let code):
            "cannot write store \(path): \(String(cString: strerror(code))); what was committed before is intact"
        case .io(let message):
            message
        }
    }
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// Initial map size; the map grows on demand.
    public var mapSize = 256 << 20
    /// Skip fsync on commit (benchmarks, bulk loads that can be redone).
    public var noSync = false
    /// Writers write through a writable map (see `Store` and docs/STORE.md).
    public var writeMap = true
    /// While the recent tier holds this many events or more, each tiered write moves a
    /// slice of it into the main databases (`Store.write`).
    public var foldEvents = Store.defaultFoldEvents
    /// The ids a run of the recent tier takes before a tiered write starts the next
    /// (`TierRuns`).
    public var runCapacity = TierRuns.capacity
    /// Decoded events kept for later questions (`DecodedEvents`): for a process that
    /// answers many (the server); 0 keeps none.
    public var keptEvents = 0

    public init() {}
}

/// The seq indexes' databases, one per `Layout.Index`. Stored properties rather than a
/// `[Layout.Index: Database]`: a query process would otherwise instantiate that dictionary
/// type and look up `Layout.Index: Hashable` at run time, a scan of the conformance records.
struct IndexDatabases: Sendable {
    private let time, users, tasks, threads, refs, unregistered: Database

    init(_ open: (Layout.Index) throws -> Database) rethrows {
        time = try open(.time)
        users = try open(.users)
        tasks = try open(.tasks)
        threads = try open(.threads)
        refs = try open(.refs)
        unregistered = try open(.unregistered)
    }

    subscript(_ index: Layout.Index) -> Database {
        switch index {
        case .time: time
        case .users: users
        case .tasks: tasks
        case .threads: threads
        case .refs: refs
        case .unregistered: unregistered
        }
    }
}

/// Databases beside `ids`, `users`, `tasks`, `threads` and `refs`, of the same shapes,
/// that hold the recent tier: its runs (`runs.ids`, `runs.users`, …; `TierRuns`), or,
/// in a store an older build wrote, its first layout (`recent.ids`, …), keyed as the
/// main databases, which a write of this build moves into them (`Store.fold`).
struct RecentDatabases: Sendable {
    let ids, users, tasks, threads, refs: Database

    init(_ open: (String, DatabaseFlags) throws -> Database) rethrows {
        ids = try open("ids", [])
        let dup: DatabaseFlags = [.duplicateSort, .duplicateFixed]
        users = try open(Layout.Index.users.rawValue, dup)
        tasks = try open(Layout.Index.tasks.rawValue, dup)
        threads = try open(Layout.Index.threads.rawValue, dup)
        refs = try open(Layout.Index.refs.rawValue, dup)
    }

    /// The recent database of `index`; nil for `time` and `unregistered`, which have none.
    subscript(_ index: Layout.Index) -> Database? {
        switch index {
        case .users: users
        case .tasks: tasks
        case .threads: threads
        case .refs: refs
        case .time, .unregistered: nil
        }
    }

    /// The name of a recent database: the main one's, after `recent.`.
    static func name(_ main: String) -> String { "recent." + main }

    /// The database of slot `slot` (in the order of `TierRuns.names`).
    func database(_ slot: Int) -> Database {
        switch slot {
        case 0: ids
        case 1: users
        case 2: tasks
        case 3: threads
        default: refs
        }
    }
}

/// The event log: an LMDB environment with the events, the chain and the indexes.
///
/// Appends write an event, its chain hash and all its index entries in one write
/// transaction, so readers never see one without the others. Several processes may
/// append at once: LMDB's writer lock serialises them and each reads the chain head
/// inside its own transaction.
///
/// A writable store writes through LMDB's writable map (`MDB_WRITEMAP`): a
/// transaction's pages live in the page cache, not in this process's memory, so
/// transactions can be large. LMDB sizes the file to its map (sparse) whenever it maps
/// it, which could cut off pages another writer is filling; so every writer takes an
/// exclusive `flock` on `data.mdb` around whatever can resize the file (opening, growing
/// the map, a write transaction, `trim`), and a write transaction first makes sure the
/// file reaches its own map. A page the disk cannot back (a full disk) faults with
/// SIGBUS instead of failing a write; `MapFaultGuard` turns that into a one-line error
/// and exit 74, which leaves the last commit intact like any crash.
public final class Store: @unchecked Sendable {
    public let path: String
    let env: Environment
    /// Our own descriptor of `data.mdb` for the writers' `flock` (-1 when read-only).
    private let lockFD: Int32
    let meta: Database
    let events: Database
    let ids: Database
    let indexes: IndexDatabases
    /// The recent tier's first layout; nil unless an older build wrote the store.
    let recent: RecentDatabases?
    /// The runs of the recent tier (`TierRuns`): databases of the same shapes named
    /// `runs.ids`, `runs.users`, …, whose keys start with their run's number; nil in a
    /// store that no writer of this build has opened yet.
    let runs: RecentDatabases?
    /// What this process knows of the runs' keys, for the writer (`RunKeyFilters`).
    let runFilters = RunKeyFilters()

    /// The indexes the recent tier holds, each by name (`ids`, then `Layout.Index`'s)
    /// with its recent and its main database; none without a tier.
    var tieredIndexes: [(name: String, recent: Database, main: Database)] {
        guard let recent else { return [] }
        return [("ids", recent.ids, ids)]
            + [Layout.Index.users, .tasks, .threads, .refs].map { ($0.rawValue, recent[$0]!, indexes[$0]) }
    }
    /// The compression dictionaries read so far.
    let dictionaries = DictionaryCache()
    /// See `StoreOptions.keptEvents`.
    let decodedEvents: DecodedEvents?
    /// `StoreOptions.foldEvents`.
    let foldEvents: Int
    /// `StoreOptions.runCapacity`.
    let runCapacity: Int
    /// The default `StoreOptions.foldEvents`: a larger tier holds more runs for each
    /// look-up to ask, a smaller one has its slices reach more of the main databases'
    /// leaves per event (docs/PERFORMANCE.md).
    public static let defaultFoldEvents = 81_920
    /// A tiered write over `foldEvents` moves this fraction (1/N) of the tier, so that
    /// it copies about 1/N of the main databases' leaves (`Store.foldRuns`); a sixteenth
    /// left twice the runs to ask, and appended slower.
    static let foldSlices = 8

    /// Opens the store in directory `path`. With `create`, makes the directory (0700)
    /// and the environment (files 0600) when missing; without, a missing store is
    /// `StoreError.missing` and the store is opened read-only.
    public init(path: String, create: Bool, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        foldEvents = max(1, options.foldEvents)
        runCapacity = max(1, options.runCapacity)
        decodedEvents = options.keptEvents > 0 ? DecodedEvents(capacity: options.keptEvents) : nil
        var st = stat()
        if stat(path, &st) != 0 {
            guard errno == ENOENT else {
                throw StoreError.io("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            guard create else { throw StoreError.missing(path: path) }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw StoreError.io("cannot create store directory \(path): \(String(cString: strerror(errno)))")
            }
            chmod(path, 0o700)
            guard stat(path, &st) == 0 else {
                throw StoreError.io("cannot read \(path): \(String(cString: strerror(errno)))")
            }
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw StoreError.notADirectory(path: path) }
        if st.st_mode & 0o022 != 0 { throw StoreError.insecure(path: path, mode: UInt32(st.st_mode & 0o7777)) }
        let dataPath = path + "/data.mdb"
        if !create && access(dataPath, F_OK) != 0 { throw StoreError.missing(path: path) }
        if access(dataPath, F_OK) == 0 {
            var ds = stat()
            if stat(dataPath, &ds) == 0 {
                // Empty: a first open that failed (a full disk); LMDB starts it afresh.
                if ds.st_size == 0 && !create { throw StoreError.missing(path: path) }
                if ds.st_size > 0 && ds.st_size < 8192 {
                    throw StoreError.notAStore(
                        path: path, detail: "data.mdb is \(ds.st_size) bytes, too small to be an LMDB file")
                }
            }
        }

        // LMDB sizes a writable map's file when it maps it, which would hide a truncated
        // file and change a foreign one: a writer first opens the store as a reader,
        // with every check a reader makes.
        if create && options.writeMap {
            var ds = stat()
            if stat(dataPath, &ds) == 0 && ds.st_size > 0 {
                do {
                    _ = try Store(path: path, create: false, options: options)
                } catch StoreError.notAStore(_, let detail) where detail == Store.databasesMissing {
                    // A creation that never committed (an older pushtrail's): completed below.
                }
            }
        }

        var envOptions = EnvironmentOptions()
        envOptions.mapSize = options.mapSize
        envOptions.noSync = options.noSync
        envOptions.readOnly = !create
        envOptions.maxDatabases = 24
        envOptions.writeMap = create && options.writeMap
        envOptions.assertionHandler = DamagedPageGuard.handler
        envOptions.label = path
        if create && access(dataPath, F_OK) != 0 { try Store.createAtomically(path, envOptions) }
        var lockFD: Int32 = -1
        if create {
            lockFD = open(dataPath, O_RDONLY | O_CLOEXEC)
            guard lockFD >= 0 else {
                throw StoreError.io("cannot open \(dataPath): \(String(cString: strerror(errno)))")
            }
        }
        self.lockFD = lockFD
        do {
            let options = envOptions
            env = try Store.exclusively(lockFD) { try Environment(path: path, options: options) }
        } catch let error as LMDBError {
            if error.isCorruption {
                throw StoreError.notAStore(path: path, detail: "data.mdb is not a valid LMDB file")
            }
            throw StoreError.io("cannot open store \(path): \(error)")
        }

        // A file shorter than the pages its meta page names was truncated: reading it
        // would fault (SIGBUS) instead of failing.
        var fileStat = stat()
        if stat(dataPath, &fileStat) == 0, fileStat.st_size > 0,
            (env.lastPageNumber + 1) * env.pageSize > Int(fileStat.st_size)
        {
            throw StoreError.notAStore(
                path: path,
                detail: """
                    data.mdb is \(fileStat.st_size) bytes but its pages reach \
                    \((env.lastPageNumber + 1) * env.pageSize): it was truncated
                    """
            )
        }
        do {
            let env = self.env
            (meta, events, ids, indexes, recent, runs) = try Store.exclusively(lockFD) {
                try env.openDatabases { try Store.openDatabases(env, create: create, $0) }
            }
        } catch let error as LMDBError {
            if error.code == -30798 {  // MDB_NOTFOUND: a database is missing
                throw StoreError.notAStore(path: path, detail: Store.databasesMissing)
            }
            if error.isCorruption { throw StoreError.notAStore(path: path, detail: "its databases are damaged") }
            throw StoreError.io("cannot open store \(path): \(error)")
        }
        // Reader slots of processes that died mid-read pin old pages; free them.
        if create { _ = try? env.clearStaleReaders() }
        // The format must be one this build understands.
        let format: UInt32? = try env.read { txn in
            guard let raw = try meta.get(Layout.metaFormatKey, in: txn), raw.count == 4 else { return nil }
            return UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))
        }
        guard let format else { throw StoreError.notAStore(path: path, detail: "no format record") }
        if format > Layout.formatVersion {
            throw StoreError.newerFormat(path: path, found: format, supported: Layout.formatVersion)
        }
    }

    /// Opens (with `create`, creates) the store's databases and its format record.
    private static func openDatabases(
        _ env: Environment, create: Bool, _ txn: Transaction
    ) throws -> (Database, Database, Database, IndexDatabases, RecentDatabases?, RecentDatabases?) {
        let meta = try env.openDatabase("meta", create: create, in: txn)
        let events = try env.openDatabase("events", create: create, in: txn)
        let ids = try env.openDatabase("ids", create: create, in: txn)
        let indexes = try IndexDatabases { index in
            try env.openDatabase(index.rawValue, flags: [.duplicateSort, .duplicateFixed], create: create, in: txn)
        }
        var recent: RecentDatabases?
        do {
            recent = try RecentDatabases { name, flags in
                try env.openDatabase(RecentDatabases.name(name), flags: flags, create: false, in: txn)
            }
        } catch let error as LMDBError where error.code == -30798 {
            // MDB_NOTFOUND: only a store an older build wrote has the tier's first layout.
        }
        var runs: RecentDatabases?
        do {
            runs = try RecentDatabases { name, flags in
                try env.openDatabase(TierRuns.databaseName(name), flags: flags, create: create, in: txn)
            }
        } catch let error as LMDBError where error.code == -30798 && !create {
            // MDB_NOTFOUND: no writer of this build has opened the store yet.
        }
        if create, try meta.get(Layout.metaFormatKey, in: txn) == nil {
            try meta.put(
                Layout.metaFormatKey, withUnsafeBytes(of: Layout.initialFormatVersion.bigEndian) { Array($0) }, in: txn)
        }
        return (meta, events, ids, indexes, recent, runs)
    }

    /// Makes `dir/data.mdb` appear only once it holds a committed, initialised store:
    /// the file is built in a private directory beside it and linked into place
    /// (`link` fails rather than replace a store another process made first). A
    /// process killed while creating a store leaves no `data.mdb` that readers would
    /// find half made — only its private directory, removed by the next creator.
    private static func createAtomically(_ dir: String, _ options: EnvironmentOptions) throws {
        removeAbandonedCreations(in: dir)
        let scratch = dir + "/.creating-\(getpid())"
        removeScratch(scratch)
        guard mkdir(scratch, 0o700) == 0 else {
            throw StoreError.io("cannot create \(scratch): \(String(cString: strerror(errno)))")
        }
        defer { removeScratch(scratch) }
        do {
            let env = try Environment(path: scratch, options: options)
            _ = try env.openDatabases { try openDatabases(env, create: true, $0) }
        } catch let error as LMDBError {
            throw StoreError.io("cannot create store \(dir): \(error)")
        }
        if link(scratch + "/data.mdb", dir + "/data.mdb") != 0 && errno != EEXIST {
            throw StoreError.io("cannot create store \(dir): \(String(cString: strerror(errno)))")
        }
        // The new name must survive a power cut as well as the file's contents.
        let fd = open(dir, O_RDONLY | O_DIRECTORY)
        if fd >= 0 {
            _ = fsync(fd)
            _ = close(fd)
        }
    }

    /// Private creation directories whose process is gone.
    private static func removeAbandonedCreations(in dir: String) {
        guard let d = opendir(dir) else { return }
        defer { closedir(d) }
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(".creating-"), let pid = Int32(name.dropFirst(".creating-".count)), pid != getpid(),
                kill(pid, 0) != 0 && errno == ESRCH
            else { continue }
            removeScratch(dir + "/" + name)
        }
    }

    /// A creation directory and the two files LMDB makes in it.
    private static func removeScratch(_ scratch: String) {
        _ = unlink(scratch + "/data.mdb")
        _ = unlink(scratch + "/lock.mdb")
        _ = rmdir(scratch)
    }

    static let databasesMissing = "its databases are missing"

    deinit {
        // A writer leaves the file no longer than the pages in use, however it ends.
        try? trim()
        if lockFD >= 0 { close(lockFD) }
    }

    /// Runs `body` holding the writers' `flock` on `data.mdb` (a no-op for -1).
    ///
    /// A `flock` is held by the open file, not by a thread: a second thread of this
    /// process would take it again at once, and its unlock would free the first's. The
    /// process's threads queue on `WriterMutex` first, so the lock is held from the
    /// first taker's lock to its unlock (the same thread may nest).
    static func exclusively<R>(_ fd: Int32, _ body: () throws -> R) throws -> R {
        guard fd >= 0 else { return try body() }
        let writers = WriterMutex.shared
        guard writers.lock(fd) == 1 else {
            defer { writers.unlock(fd) }
            return try body()
        }
        defer { writers.unlock(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw StoreError.io("cannot lock the store: \(String(cString: strerror(errno)))")
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Runs `body` in a write transaction of this store, under the writers' lock, with
    /// the file as long as this process's map (another writer may have trimmed it) and
    /// faults on the map, commit included, guarded.
    func writeTransaction<R>(retryingWhenFull: Bool = true, _ body: (Transaction) throws -> R) throws -> R {
        try mapErrors {
            try Store.exclusively(lockFD) {
                guard env.isWriteMap else { return try env.write(retryingWhenFull: retryingWhenFull, body) }
                try extendFileToMap()
                // The commit writes through the map too.
                return try MapFaultGuard.guarding(store: path) {
                    try env.write(retryingWhenFull: retryingWhenFull, body)
                }
            }
        }
    }

    /// Makes the file reach the map, so that writes through the map land inside it.
    private func extendFileToMap() throws {
        let fd = env.fileDescriptor
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw StoreError.io("cannot read \(path)/data.mdb: \(String(cString: strerror(errno)))")
        }
        let size = env.mapSize
        if Int(st.st_size) < size && ftruncate(fd, off_t(size)) != 0 {
            throw StoreError.writeRefused(path: path, errno: errno)
        }
    }

    /// Cuts the file back to the pages the last commit uses (a writable map leaves it
    /// as long as the map). Harmless to other writers: they extend it again inside
    /// their next transaction, and readers never read past the last commit.
    public func trim() throws {
        guard env.isWriteMap else { return }
        try Store.exclusively(lockFD) {
            let used = env.usedBytes
            var st = stat()
            if fstat(env.fileDescriptor, &st) == 0, Int(st.st_size) > used {
                _ = ftruncate(env.fileDescriptor, off_t(used))
            }
        }
    }

    /// Starts reading the whole file into the page cache on a background thread, for
    /// a command about to read all of it (`verify`, a whole-store `audit`). The store
    /// is mapped without read-ahead because lookups touch scattered pages; a walk over
    /// a cold store would then fault its pages in one at a time (a 1M-event store:
    /// 59 s cold against 19 s warm). Advisory: it changes no result.
    public func prefetch() {
        #if os(Linux)
            let fd = env.fileDescriptor
            let size = env.usedBytes
            guard fd >= 0, size > 0 else { return }
            let thread = WorkerThread {
                let step = 32 << 20
                var offset = 0
                while offset < size {
                    guard posix_fadvise(fd, off_t(offset), off_t(min(step, size - offset)), POSIX_FADV_WILLNEED) == 0
                    else { return }
                    offset += step
                }
            }
            thread.start()
            // Advisory work that may outlive the command's walk: nothing waits for it.
            thread.detach()
        #endif
    }

    /// Runs `body` on a consistent snapshot of the store.
    public func read<R>(_ body: (StoreReader) throws -> R) throws -> R {
        try mapErrors { try env.read { try body(StoreReader(store: self, txn: $0)) } }
    }

    /// Runs `body` on a snapshot if one can be taken without waiting for the map to
    /// change; nil instead. For a helper thread whose caller holds a snapshot open and
    /// waits for the helper.
    public func readIfReady<R>(_ body: (StoreReader) throws -> R) throws -> R? {
        try mapErrors { try env.readIfReady { try body(StoreReader(store: self, txn: $0)) } }
    }

    /// Clears reader slots left by processes that died mid-read.
    public func clearStaleReaders() throws -> Int { try mapErrors { try env.clearStaleReaders() } }

    /// Grows the map ahead of a write of up to `bytes` of events so that it cannot
    /// fill: room for every used page to be copied on write once, and three times the
    /// new events (their records, index entries and page splits). The file is sparse
    /// beyond the pages in use, and `trim` cuts it back.
    public func makeRoom(for bytes: Int) throws {
        try mapErrors {
            try Store.exclusively(lockFD) { try env.ensureMapSize(2 * env.usedBytes + 3 * bytes + (64 << 20)) }
        }
    }

    /// The id of the last committed write, for followers to poll cheaply.
    public var lastTransactionID: Int { env.lastTransactionID }

    /// Bytes of the data file the store uses: its pages up to the last committed one
    /// (a writer's file may reach further, sparse, until it is trimmed).
    public var fileBytes: Int { env.usedBytes }

    /// Whether the file system holding `path` has (almost) no room left for this
    /// process: under 64 KiB available.
    static func isFull(_ path: String) -> Bool {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return false }
        return UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < 64 << 10
    }

    func mapErrors<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as LMDBError {
            if error.isCorruption { throw StoreError.notAStore(path: path, detail: "LMDB reports: \(error)") }
            if error.code == ENOSPC || error.code == EDQUOT {
                throw StoreError.writeRefused(path: path, errno: error.code)
            }
            if error.code == EIO {
                // LMDB reports a write cut short as EIO; on a file system with no room
                // left, that is a full disk.
                throw StoreError.writeRefused(path: path, errno: Store.isFull(path) ? ENOSPC : EIO)
            }
            throw StoreError.io("store \(path): \(error)")
        }
    }
}

/// The chain head: the last event's seq and hash (seq 0 and 32 zero bytes when empty).
public struct ChainHead: Equatable, Sendable {
    public var seq: UInt64
    public var hash: [UInt8]

    public static let empty = ChainHead(seq: 0, hash: [UInt8](repeating: 0, count: 32))

    public init(seq: UInt64, hash: [UInt8]) {
        self.seq = seq
        self.hash = hash
    }

    public var hex: String { SHA256.hex(hash) }
}

/// One stored event with what the store added to it.
public struct StoredEvent: Sendable {
    public var seq: UInt64
    public var type: EventType
    public var recordedAt: Timestamp
    public var at: Timestamp
    public var hash: [UInt8]
    /// The event exactly as ingested (without its line break).
    public var raw: [UInt8]

    public var position: Position { Position(at: at, seq: seq) }

    /// An event as another store holds it (a shard of a cluster answering over HTTP).
    public init(seq: UInt64, type: EventType, recordedAt: Timestamp, at: Timestamp, hash: [UInt8], raw: [UInt8]) {
        self.seq = seq
        self.type = type
        self.recordedAt = recordedAt
        self.at = at
        self.hash = hash
        self.raw = raw
    }

    /// Decodes the raw event; a stored event that no longer decodes is damaged.
    public func decode() throws -> Event {
        var decoder = EventDecoder()
        return try decode(using: &decoder)
    }

    /// `decode()` with a decoder kept across events: its tape, sized for the longest
    /// line so far, is reused rather than allocated and cleared for each one.
    public func decode(using decoder: inout EventDecoder) throws -> Event {
        do {
            return try decoder.decode(raw)
        } catch {
            throw StoreError.damaged(seq: seq, detail: error.reason)
        }
    }
}

/// Read access to one snapshot of the store.
public struct StoreReader {
    let store: Store
    let txn: Transaction
    /// A cluster's merged book of dead devices: when set, `sent_after_unregistered`
    /// consults it instead of this store's own deliveries (see `UnregistrationBook`).
    public var unregistrations: UnregistrationBook?
    /// Or, over local shards, where to find a device's declarations as a report needs
    /// them (see `UnregistrationLookup`).
    public var unregistrationLookup: UnregistrationLookup?

    /// The events whose ids and seqs the recent tier holds, not yet moved into the
    /// main databases (docs/STORE.md).
    public func recentTierEvents() throws -> Int { try store.recentEvents(in: txn) }

    /// The chain head as of this snapshot.
    public func head() throws -> ChainHead {
        guard let raw = try store.meta.get(Layout.metaHeadKey, in: txn), raw.count == 40 else { return .empty }
        return ChainHead(seq: Layout.readBigEndian(raw), hash: Array(raw[8..<40]))
    }

    /// How many events of each type are stored.
    public func counts() throws -> [EventType: Int] {
        var out: [EventType: Int] = [:]
        for type in EventType.allCases { out[type] = 0 }
        guard let raw = try store.meta.get(Layout.metaCountsKey, in: txn), raw.count == 24 else { return out }
        for type in EventType.allCases {
            out[type] = Int(Layout.readBigEndian(raw, at: 8 * (Int(type.rawValue) - 1)))
        }
        return out
    }

    /// The event stored as `seq`.
    public func event(seq: UInt64) throws -> StoredEvent? {
        guard let value = try store.events.get(Layout.bigEndian(seq), in: txn) else { return nil }
        return try storedEvent(seq: seq, value: value)
    }

    func storedEvent(seq: UInt64, value: UnsafeRawBufferPointer) throws -> StoredEvent {
        guard value.count > Layout.eventHeaderSize, let kind = Layout.recordKind(value[0]) else {
            throw StoreError.damaged(seq: seq, detail: "its header is malformed")
        }
        return StoredEvent(
            seq: seq, type: kind.type,
            recordedAt: Timestamp(microseconds: Layout.signedFromOrdered(Layout.readBigEndian(value, at: 1))),
            at: Timestamp(microseconds: Layout.signedFromOrdered(Layout.readBigEndian(value, at: 9))),
            hash: Array(value[Layout.hashRange]),
            raw: try json(seq: seq, value: value))
    }

    /// The JSON of a stored record: its body, decompressed when it is compressed.
    func json(seq: UInt64, value: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard value.count > Layout.eventHeaderSize, let kind = Layout.recordKind(value[0]) else {
            throw StoreError.damaged(seq: seq, detail: "its header is malformed")
        }
        guard kind.compressed else { return Array(value[Layout.eventHeaderSize...]) }
        let id = value[Layout.eventHeaderSize]
        guard let dictionary = try dictionary(id) else {
            throw StoreError.damaged(seq: seq, detail: "it is compressed with dictionary \(id), which the store lacks")
        }
        guard
            let raw = store.dictionaries.decompress(
                UnsafeRawBufferPointer(rebasing: value[(Layout.eventHeaderSize + 1)...]), with: dictionary)
        else { throw StoreError.damaged(seq: seq, detail: "its compressed record does not decompress") }
        return raw
    }

    /// Compression dictionary `id`, or nil when the store lacks it.
    func dictionary(_ id: UInt8) throws -> RecordDictionary? {
        try store.dictionaries.dictionary(id, meta: store.meta, txn: txn)
    }

    /// The newest compression dictionary, which new records are compressed with.
    public func latestDictionary() throws -> RecordDictionary? {
        try dictionaryNumbers().last.flatMap { try dictionary($0) }
    }

    /// The numbers of the stored compression dictionaries, in ascending order.
    public func dictionaryNumbers() throws -> [UInt8] {
        let prefix = Layout.dictionaryKeyPrefix
        var numbers: [UInt8] = []
        try txn.withCursor(store.meta) { cursor in
            var entry = try prefix.withUnsafeBytes { try cursor.seek($0) }
            while let (key, _) = entry, key.count > prefix.count, key.starts(with: prefix) {
                if let n = UInt8(String(decoding: key[prefix.count...], as: UTF8.self)), n > 0 { numbers.append(n) }
                entry = try cursor.next()
            }
        }
        return numbers.sorted()
    }

    /// The store's format (`meta/format`).
    public func format() throws -> UInt32 {
        guard let raw = try store.meta.get(Layout.metaFormatKey, in: txn), raw.count == 4 else { return 0 }
        return UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))
    }

    /// The seq of the event with id `id` (notification ids compare case-insensitively).
    public func seq(forID id: String) throws -> UInt64? {
        if let raw = try storedID(Array(id.utf8)) { return Layout.readBigEndian(raw) }
        let lowered = EventID.normalizedNotificationID(id)
        if lowered != Array(id.utf8), let raw = try storedID(lowered) {
            let seq = Layout.readBigEndian(raw)
            // Only a notification's id is case-insensitive.
            return try event(seq: seq)?.type == .notification ? seq : nil
        }
        return nil
    }

    /// The value of `key` in `ids`, in the main database or the recent tier.
    func storedID(_ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        guard !key.isEmpty && key.count <= 511 else { return nil }
        if let raw = try store.ids.get(key, in: txn) { return raw }
        if let raw = try store.recent?.ids.get(key, in: txn) { return raw }
        return try key.withUnsafeBytes { try runValue(ofID: $0, runs: tierRuns()) }
    }

    /// The seqs filed under `key` in `index` (not `time`), in seq order: the main
    /// database's, then the recent tier's (all greater).
    public func seqs(_ index: Layout.Index, key: [UInt8]) throws -> [UInt64] {
        precondition(index != .time, "the time index holds positions")
        // LMDB refuses an empty key or one over 511 bytes; no such key is ever stored.
        guard !key.isEmpty && key.count <= 511 else { return [] }
        var out: [UInt64] = []
        try appendSeqs(store.indexes[index], key: key, to: &out)
        if let recent = store.recent?[index] { try appendSeqs(recent, key: key, to: &out) }
        if let runs = store.runs, let slot = TierRuns.slot(index) {
            for run in try tierRuns().runs where run.entries[slot] > 0 {
                try appendSeqs(runs.database(slot), key: TierRuns.key(run.number, key), to: &out)
            }
        }
        return out
    }

    /// Appends the seqs filed under `key` in the duplicate-sort database `db` to `out`.
    private func appendSeqs(_ db: Database, key: [UInt8], to out: inout [UInt64]) throws {
        try txn.withCursor(db) { cursor in
            guard let (_, first) = try key.withUnsafeBytes({ try cursor.find($0) }) else { return }
            // A key with one value keeps it inline, where MDB_GET_MULTIPLE finds nothing.
            if try cursor.duplicateCount() == 1 {
                if first.count == 8 { out.append(Layout.readBigEndian(first)) }
                return
            }
            var page = try cursor.multiple()
            while let (_, values) = page {
                var offset = 0
                while offset + 8 <= values.count {
                    out.append(Layout.readBigEndian(values, at: offset))
                    offset += 8
                }
                page = try cursor.nextMultiple()
            }
        }
    }

    /// The positions of the events filed under `key` in `index`, in timeline order.
    public func positions(_ index: Layout.Index, key: [UInt8]) throws -> [Position] {
        if index == .time {
            var out: [Position] = []
            try forEachPosition {
                out.append($0)
                return true
            }
            return out
        }
        return try timelinePositions(of: seqs(index, key: key))
    }

    /// The positions of the events `seqs`, in timeline order, read from their headers
    /// alone (nothing is decompressed or decoded). An index entry naming an event that
    /// is not stored is damage.
    func timelinePositions(of seqs: [UInt64]) throws -> [Position] {
        try timelineRecords(of: seqs).map(\.position)
    }

    /// The events `seqs` in timeline order, each with its stored record, which points
    /// into the map and stays valid while this reader's transaction lasts: a caller that
    /// reads some of them after ordering them looks each up once.
    func timelineRecords(of seqs: [UInt64]) throws -> [(position: Position, record: UnsafeRawBufferPointer)] {
        var out: [(position: Position, record: UnsafeRawBufferPointer)] = []
        out.reserveCapacity(seqs.count)
        for seq in seqs {
            guard let value = try store.events.get(Layout.bigEndian(seq), in: txn) else {
                throw StoreError.damaged(seq: seq, detail: "an index names it but it is not stored")
            }
            guard value.count > Layout.eventHeaderSize else {
                throw StoreError.damaged(seq: seq, detail: "its header is malformed")
            }
            let at = Timestamp(microseconds: Layout.signedFromOrdered(Layout.readBigEndian(value, at: 9)))
            out.append((Position(at: at, seq: seq), value))
        }
        out.sort { $0.position < $1.position }
        return out
    }

    /// Calls `body` with every position of the `time` index, from the oldest (or newest
    /// with `reverse`), until it returns false.
    public func forEachPosition(reverse: Bool = false, _ body: (Position) throws -> Bool) throws {
        try txn.withCursor(store.indexes[.time]) { cursor in
            let found = try Layout.timeKey.withUnsafeBytes { try cursor.find($0) }
            guard found != nil else { return }
            var entry = reverse ? try cursor.lastDuplicate() : try cursor.firstDuplicate()
            while let (_, value) = entry {
                if try !body(Layout.decodePosition(value)) { return }
                entry = reverse ? try cursor.previousDuplicate() : try cursor.nextDuplicate()
            }
        }
    }

    /// The distinct keys of an index (how many users, tasks, threads there are).
    public func keyCount(_ index: Layout.Index) throws -> Int {
        var n = try txn.withCursor(store.indexes[index]) { cursor in
            var n = 0
            var entry = try cursor.first()
            while entry != nil {
                n += 1
                entry = try cursor.nextKey()
            }
            return n
        }
        // The recent tier's keys that the main database lacks.
        let main = store.indexes[index]
        if let recent = store.recent?[index] {
            try txn.withCursor(recent) { cursor in
                var entry = try cursor.first()
                while let (key, _) = entry {
                    if try main.get(key, in: txn) == nil { n += 1 }
                    entry = try cursor.nextKey()
                }
            }
        }
        // The runs' keys that neither holds.
        if let slot = TierRuns.slot(index) {
            for key in try runKeys(slot) where try main.get(key, in: txn) == nil {
                if try store.recent?[index]?.get(key, in: txn) == nil { n += 1 }
            }
        }
        return n
    }

    /// The first 16 bytes of the SHA-256 of each key of `index`, ascending: a shard's
    /// users or threads, comparable with another shard's without naming anyone.
    public func keyDigests(_ index: Layout.Index) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        func collect(_ db: Database) throws {
            try txn.withCursor(db) { cursor in
                var entry = try cursor.first()
                while let (key, _) = entry {
                    out.append(Array(SHA256.digest(key).prefix(16)))
                    entry = try cursor.nextKey()
                }
            }
        }
        try collect(store.indexes[index])
        if let recent = store.recent?[index] { try collect(recent) }
        if let slot = TierRuns.slot(index) {
            out += try runKeys(slot).map { key in key.withUnsafeBytes { Array(SHA256.digest($0).prefix(16)) } }
        }
        out.sort { $0.lexicographicallyPrecedes($1) }
        var unique: [[UInt8]] = []
        unique.reserveCapacity(out.count)
        for d in out where d != unique.last { unique.append(d) }
        return unique
    }

    /// Calls `body` with every stored event in seq order from `seq`, until it returns false.
    public func forEachEvent(from seq: UInt64 = 1, _ body: (StoredEvent) throws -> Bool) throws {
        try txn.withCursor(store.events) { cursor in
            var entry = try Layout.bigEndian(seq).withUnsafeBytes { try cursor.seek($0) }
            while let (key, value) = entry {
                let s = Layout.readBigEndian(key)
                if try !body(try storedEvent(seq: s, value: value)) { return }
                entry = try cursor.next()
            }
        }
    }
}
