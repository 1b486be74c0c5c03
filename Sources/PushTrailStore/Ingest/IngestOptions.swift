#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an ingest runs: the knobs the CLI and tests set. What the transaction sizes
/// come to for a given store is `TransactionPolicy`'s to say.
public struct IngestOptions: Sendable {
    /// All or nothing: the first bad line (or conflict) stores nothing of this run.
    public var strict = false
    /// Events per write transaction at most (one commit, two syncs each): one per 512
    /// bytes of `batchBytes`. Large transactions rewrite the randomly placed index pages
    /// less often, and each commit waits for the disk to take the pages it changed;
    /// their pages are the map's, so their size costs no memory (docs/PERFORMANCE.md).
    public var batchEvents = IngestOptions.defaultBatchBytes / 512
    /// Raw bytes per write transaction at most: a sixteenth of the machine's memory,
    /// from 128 MiB to 1 GiB. A transaction dirties map pages in proportion to what it
    /// brings, and the kernel starts writing dirty pages back at a tenth of memory (its
    /// default): past that it would write pages the transaction still changes, then
    /// write them again at the commit.
    public var batchBytes = IngestOptions.defaultBatchBytes
    /// Let a transaction grow to a quarter of the store's size when that is more than
    /// `batchBytes` (and its events in proportion): every transaction rewrites about
    /// half of the random-keyed index leaves, and a large store has more of them.
    public var scaleWithStore = true
    /// Events and raw bytes per batch handed from the parsing thread to the writing
    /// one: what bounds the memory an ingest holds, whatever its transactions.
    public var handoffEvents = 8192
    public var handoffBytes = 8 << 20
    /// Compress records with the store's dictionary (docs/STORE.md). A store without
    /// one gets one trained on the first `dictionarySamples` events of an ingest that
    /// brings that many; the events before it are stored whole.
    public var compress = true
    public var dictionarySamples = 1000
    /// Threads that read and decode beside the writing one (at least one).
    public var parsingThreads = Ingest.parsingThreads
    /// Index entries a transaction gathers before filing them in key order (`IndexRun`).
    public var indexRunEntries = IndexRun.defaultLimit

    static let defaultBatchBytes: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        let memory = pages > 0 && pageSize > 0 ? Int(pages) * Int(pageSize) : 0
        return min(max(memory / 16, 128 << 20), 1 << 30)
    }()

    public init() {}
}
