/// How large a pipelined ingest's write transactions grow, and when one commits.
///
/// A pure function of the options and the store's size: no store, clock or I/O, so
/// that the sizes, which decide where an ingest commits (and so what a crash leaves,
/// docs/RELIABILITY.md), can be tested alone. The writer asks it once per transaction
/// and once per handoff, never per event.
///
/// A transaction takes `batchEvents` events or `batchBytes` raw bytes at most, or, with
/// `scaleWithStore`, a quarter of the store's size when that is more (and its events in
/// proportion); `IngestOptions` says why.
struct TransactionPolicy: Equatable, Sendable {
    /// Events a transaction takes at most: it commits once it holds this many.
    let maxEvents: Int
    /// Raw bytes of the events' lines a transaction takes at most (what `makeRoom`
    /// grows the map for).
    let maxBytes: Int
    /// Rejections a transaction holds at most: they are reported only once it has
    /// committed, so they are kept in memory until then.
    let maxRejections: Int
    /// The limits were scaled up with the store's size (see `waitsForNextHandoff`).
    let isScaled: Bool

    /// The limits of a transaction that starts on a store using `storeBytes` bytes.
    init(_ options: IngestOptions, storeBytes: Int) {
        let scale = options.scaleWithStore ? max(1, Double(storeBytes) / Double(4 * options.batchBytes)) : 1
        maxEvents = Int(Double(options.batchEvents) * scale)
        maxBytes = Int(Double(options.batchBytes) * scale)
        maxRejections = options.handoffEvents
        isScaled = scale != 1
    }

    /// Whether a transaction that has taken `events` events of `rawBytes` raw bytes and
    /// `rejections` rejections commits now, before it takes another handoff. One
    /// handoff may take it past a limit: a transaction is whole handoffs.
    @inline(__always) func isFull(events: Int, rawBytes: Int, rejections: Int) -> Bool {
        events >= maxEvents || rawBytes >= maxBytes || rejections >= maxRejections
    }

    /// Whether a transaction that is not full waits for the next handoff when it is not
    /// ready yet, rather than commit what it holds.
    ///
    /// Lines from regular files are only being parsed: wait for them rather than commit
    /// early. An early commit makes the next transaction copy the random-keyed index
    /// pages again and take its pages from the freed ones, scattered, instead of in
    /// order past the end (which `MapPrefaulter` faults in ahead); 1M events: four or
    /// five commits instead of one. Not past the unscaled size: a transaction scaled
    /// with a large store, left uncut, outgrows the kernel's write-back threshold and
    /// has its pages written while it still changes them (docs/PERFORMANCE.md). A
    /// pipe's next lines may not come for a while: commit what is here.
    @inline(__always) func waitsForNextHandoff(readsFiles: Bool) -> Bool {
        readsFiles && !isScaled
    }

    /// Events and raw bytes per handoff at most. Handoffs never span a transaction's
    /// end: a transaction is whole handoffs.
    @inline(__always) static func handoffLimit(_ options: IngestOptions) -> (events: Int, bytes: Int) {
        (min(options.handoffEvents, options.batchEvents), min(options.handoffBytes, options.batchBytes))
    }
}
