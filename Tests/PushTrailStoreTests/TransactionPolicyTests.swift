import Testing

@testable import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The transaction-size policy on its own: where a pipelined ingest commits decides
/// what a crash can leave (Scripts/crash-test.sh counts on `PUSHTRAIL_BATCH_EVENTS`
/// transactions), so every limit is pinned to values worked out by hand from the
/// formula: scale = max(1, storeBytes / (4 × batchBytes)) in Double, each limit the
/// unscaled one times scale, truncated.
@Suite("TransactionPolicy: how large a write transaction grows, and when it commits")
struct TransactionPolicyTests {
    private static let mib = 1 << 20
    private static let gib = 1 << 30

    /// Options with the given caps and the default handoffs.
    private static func options(events: Int, bytes: Int, scale: Bool = true) -> IngestOptions {
        var o = IngestOptions()
        o.batchEvents = events
        o.batchBytes = bytes
        o.scaleWithStore = scale
        return o
    }

    @Test("the defaults: a sixteenth of memory from 128 MiB to 1 GiB, one event per 512 bytes")
    func defaults() {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        let memory = pages > 0 && pageSize > 0 ? Int(pages) * Int(pageSize) : 0
        var bytes = memory / 16
        if bytes < 128 * Self.mib { bytes = 128 * Self.mib }
        if bytes > Self.gib { bytes = Self.gib }

        let o = IngestOptions()
        #expect(o.batchBytes == bytes)
        #expect(o.batchEvents == bytes / 512)
        #expect(o.scaleWithStore)
        #expect(o.handoffEvents == 8192 && o.handoffBytes == 8 * Self.mib)

        let p = TransactionPolicy(o, storeBytes: 0)
        #expect(p.maxEvents == bytes / 512 && p.maxBytes == bytes)
        #expect(p.maxRejections == 8192)
        #expect(!p.isScaled)
        // Both caps are far above a handoff's: the handoffs keep their own size.
        let h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 8192 && h.bytes == 8 * Self.mib)
    }

    struct Scaled: Sendable, CustomTestStringConvertible {
        var storeBytes: Int
        var events: Int
        var bytes: Int
        var scaled: Bool
        var testDescription: String { "store of \(storeBytes) bytes" }
    }

    /// 524,288 events and 256 MiB unscaled: a transaction grows once the store is past
    /// 4 × 256 MiB = 1 GiB, to a quarter of it.
    @Test(
        "a transaction grows to a quarter of the store once that is more than batchBytes",
        arguments: [
            // Empty or tiny stores, and up to 1 GiB: scale 1.
            Scaled(storeBytes: 0, events: 524_288, bytes: 268_435_456, scaled: false),
            Scaled(storeBytes: 4096, events: 524_288, bytes: 268_435_456, scaled: false),
            Scaled(storeBytes: (1 << 30) - 1, events: 524_288, bytes: 268_435_456, scaled: false),
            Scaled(storeBytes: 1 << 30, events: 524_288, bytes: 268_435_456, scaled: false),
            // 1 GiB + 1: scale 1 + 2^-30, limits 524,288 + 2^-11 and 268,435,456 + 1/4,
            // truncated to the unscaled ones; but scaled, so it does not wait for files.
            Scaled(storeBytes: (1 << 30) + 1, events: 524_288, bytes: 268_435_456, scaled: true),
            // 1.5 GiB: scale 1.5.
            Scaled(storeBytes: 1_610_612_736, events: 786_432, bytes: 402_653_184, scaled: true),
            // 2 GiB: scale 2.
            Scaled(storeBytes: 1 << 31, events: 1_048_576, bytes: 536_870_912, scaled: true),
            // 3e9 bytes: scale 3e9 / 2^30; events 3e9 / 2^11 = 1,464,843.75, truncated;
            // bytes 3e9 / 4.
            Scaled(storeBytes: 3_000_000_000, events: 1_464_843, bytes: 750_000_000, scaled: true),
            // 1 TiB: scale 1024.
            Scaled(storeBytes: 1 << 40, events: 536_870_912, bytes: 274_877_906_944, scaled: true),
            // 1 PiB: scale 2^20.
            Scaled(storeBytes: 1 << 50, events: 1 << 39, bytes: 1 << 48, scaled: true),
            // Int.max, 2^63 as a Double: scale 2^33, and still no overflow.
            Scaled(storeBytes: Int.max, events: 1 << 52, bytes: 1 << 61, scaled: true),
        ])
    func scalesWithTheStore(_ c: Scaled) {
        let p = TransactionPolicy(Self.options(events: 524_288, bytes: 256 * Self.mib), storeBytes: c.storeBytes)
        #expect(p.maxEvents == c.events)
        #expect(p.maxBytes == c.bytes)
        #expect(p.isScaled == c.scaled)
        #expect(p.maxRejections == 8192)
    }

    @Test("caps that are not powers of two: the scale is a Double, and the limits truncate")
    func scalesInDouble() {
        let o = Self.options(events: 1000, bytes: 100_000_000)
        // 1e9 / 4e8 = 2.5 exactly.
        let a = TransactionPolicy(o, storeBytes: 1_000_000_000)
        #expect(a.maxEvents == 2500 && a.maxBytes == 250_000_000 && a.isScaled)
        // 123,456,789,012 / 4e8 = 308.64197253, just under it as a Double: the events
        // truncate to 308,641, and the bytes to 30,864,197,252 (not the exact quarter,
        // 30,864,197,253, that integer arithmetic would give).
        let b = TransactionPolicy(o, storeBytes: 123_456_789_012)
        #expect(b.maxEvents == 308_641 && b.maxBytes == 30_864_197_252 && b.isScaled)
        // Just under 4 × batchBytes: unscaled.
        let c = TransactionPolicy(o, storeBytes: 399_999_999)
        #expect(c.maxEvents == 1000 && c.maxBytes == 100_000_000 && !c.isScaled)
    }

    @Test("without scaleWithStore, a huge store keeps the caps and the wait for files")
    func notScaled() {
        let o = Self.options(events: 524_288, bytes: 256 * Self.mib, scale: false)
        let small = TransactionPolicy(o, storeBytes: 0)
        for storeBytes in [1 << 31, 1 << 40, Int.max] {
            let p = TransactionPolicy(o, storeBytes: storeBytes)
            #expect(p == small)
            #expect(p.maxEvents == 524_288 && p.maxBytes == 268_435_456 && !p.isScaled)
            #expect(p.waitsForNextHandoff(readsFiles: true))
        }
    }

    /// What `pushtrail ingest` sets for `PUSHTRAIL_BATCH_EVENTS=N` (the crash test and
    /// the disk-fault tests use it to get many commits).
    private static func batchEventsOverride(_ n: Int) -> IngestOptions {
        var o = IngestOptions()
        o.batchEvents = n
        o.batchBytes = max(o.batchBytes, n * 1024)
        o.scaleWithStore = false
        return o
    }

    @Test("PUSHTRAIL_BATCH_EVENTS=8192: one full handoff is one transaction, whatever the store")
    func crashTestTransactions() {
        let o = Self.batchEventsOverride(8192)
        let h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 8192 && h.bytes == 8 * Self.mib)
        for storeBytes in [0, 1 << 30, 1 << 40] {
            let p = TransactionPolicy(o, storeBytes: storeBytes)
            #expect(p.maxEvents == 8192 && !p.isScaled)
            #expect(!p.isFull(events: 8191, rawBytes: 8191 * 300, rejections: 0))
            #expect(p.isFull(events: 8192, rawBytes: 8192 * 300, rejections: 0))
        }
    }

    @Test("PUSHTRAIL_BATCH_EVENTS=2000: transactions of 2000 events, handoffs cut to them")
    func smallBatchEvents() {
        let o = Self.batchEventsOverride(2000)
        let p = TransactionPolicy(o, storeBytes: 1 << 40)
        #expect(p.maxEvents == 2000 && p.maxBytes == o.batchBytes && !p.isScaled)
        #expect(p.maxBytes >= 2000 * 1024)
        let h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 2000 && h.bytes == 8 * Self.mib)
        #expect(!p.isFull(events: 1999, rawBytes: 0, rejections: 0))
        #expect(p.isFull(events: 2000, rawBytes: 0, rejections: 0))
        // A handoff may take it past the cap: it commits then, all the same.
        #expect(p.isFull(events: 2500, rawBytes: 0, rejections: 0))
    }

    @Test("an explicit batchBytes caps the raw bytes, and the handoffs' bytes with it")
    func byteCap() {
        let o = Self.options(events: 1_000_000, bytes: Self.mib)
        let p = TransactionPolicy(o, storeBytes: 0)
        #expect(p.maxEvents == 1_000_000 && p.maxBytes == Self.mib)
        #expect(!p.isFull(events: 10, rawBytes: Self.mib - 1, rejections: 0))
        #expect(p.isFull(events: 10, rawBytes: Self.mib, rejections: 0))
        let h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 8192 && h.bytes == Self.mib)
        // It scales from 4 MiB of store.
        let q = TransactionPolicy(o, storeBytes: 8 * Self.mib)
        #expect(q.maxEvents == 2_000_000 && q.maxBytes == 2 * Self.mib && q.isScaled)
    }

    @Test("handoffs are the smaller of their own limits and the transaction's caps")
    func handoffLimits() {
        var o = Self.options(events: 50, bytes: 4096)
        o.handoffEvents = 100
        o.handoffBytes = 1 << 16
        var h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 50 && h.bytes == 4096)
        o.handoffEvents = 7
        o.handoffBytes = 1000
        h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 7 && h.bytes == 1000)
        // The handoff limits do not depend on the store's size: a scaled transaction
        // takes more handoffs, not larger ones.
        o = Self.options(events: 524_288, bytes: 256 * Self.mib)
        h = TransactionPolicy.handoffLimit(o)
        #expect(h.events == 8192 && h.bytes == 8 * Self.mib)
    }

    @Test("a transaction commits once it holds a handoff's worth of rejections")
    func rejectionLimit() {
        // `handoffEvents`, not the handoff limit cut to `batchEvents`: with 50-event
        // transactions, rejections still wait for 100.
        var o = Self.options(events: 50, bytes: 1 << 30)
        o.handoffEvents = 100
        let p = TransactionPolicy(o, storeBytes: 0)
        #expect(p.maxRejections == 100)
        #expect(!p.isFull(events: 0, rawBytes: 0, rejections: 99))
        #expect(p.isFull(events: 0, rawBytes: 0, rejections: 100))
        #expect(!p.isFull(events: 49, rawBytes: 0, rejections: 50))
    }

    @Test("a single event larger than the byte cap fills a transaction alone")
    func eventLargerThanTheCap() {
        let o = Self.options(events: 100, bytes: 1000)
        let p = TransactionPolicy(o, storeBytes: 0)
        #expect(!p.isFull(events: 0, rawBytes: 0, rejections: 0))
        #expect(!p.isFull(events: 1, rawBytes: 999, rejections: 0))
        #expect(p.isFull(events: 1, rawBytes: 5000, rejections: 0))
        // The handoff's byte limit is the cap too; the parsing thread still takes the
        // line (it checks the limit before each line), so one handoff holds it.
        #expect(TransactionPolicy.handoffLimit(o).bytes == 1000)
    }

    @Test("a one-event cap commits after every event; an empty transaction is not full")
    func tinyCaps() {
        let p = TransactionPolicy(Self.options(events: 1, bytes: 1), storeBytes: 0)
        #expect(p.maxEvents == 1 && p.maxBytes == 1 && !p.isScaled)
        #expect(!p.isFull(events: 0, rawBytes: 0, rejections: 0))
        #expect(p.isFull(events: 1, rawBytes: 1, rejections: 0))
        // A tiny cap scales from a tiny store: 8 bytes are twice 4 × 1.
        let q = TransactionPolicy(Self.options(events: 1, bytes: 1), storeBytes: 8)
        #expect(q.maxEvents == 2 && q.maxBytes == 2 && q.isScaled)
    }

    @Test("only unscaled transactions of regular files wait for a handoff that is not ready")
    func waitsForFiles() {
        let o = Self.options(events: 524_288, bytes: 256 * Self.mib)
        let unscaled = TransactionPolicy(o, storeBytes: 1 << 30)
        #expect(unscaled.waitsForNextHandoff(readsFiles: true))
        #expect(!unscaled.waitsForNextHandoff(readsFiles: false))
        let barely = TransactionPolicy(o, storeBytes: (1 << 30) + 1)
        #expect(!barely.waitsForNextHandoff(readsFiles: true))
        let scaled = TransactionPolicy(o, storeBytes: 1 << 40)
        #expect(!scaled.waitsForNextHandoff(readsFiles: true))
        #expect(!scaled.waitsForNextHandoff(readsFiles: false))
    }
}
