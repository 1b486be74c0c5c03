import CZstd
import LMDBKit
import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A zstd dictionary trained on a store's own events. Records are compressed one by
/// one with it (a 500-byte event shrinks about 4×: its keys, categories and wording
/// are in the dictionary), so a record stays one LMDB value that a query reads alone.
/// It is stored in `meta` as `dictionary.N` and never changes once written; its
/// SHA-256 is part of the chain hash of every record compressed with it, so changing
/// it breaks the chain like changing a record (docs/STORE.md).
public final class RecordDictionary: @unchecked Sendable {
    public let bytes: [UInt8]
    /// SHA-256 of `bytes`, which the chain hashes with every record compressed with it.
    /// Made on first use, which a query never makes: hashing the 32 KiB was a quarter
    /// of a `thread` query's instructions. Hot loops read it once per dictionary.
    public var digest: [UInt8] {
        digestLock.locked {
            if let digestStorage { return digestStorage }
            let digest = bytes.withUnsafeBytes { SHA256.digest($0) }
            digestStorage = digest
            return digest
        }
    }
    private let digestLock = Monitor()
    private var digestStorage: [UInt8]?
    /// Its number in the store it was read from; nil for one trained by this process
    /// and not stored yet (the writer stores it with the first record that uses it).
    let storedID: UInt8?

    /// nil for no bytes. Whether zstd can read them shows when a record is decompressed
    /// with it (`RecordDecompressor`); `verify` finds a changed dictionary by its digest.
    init?(bytes: [UInt8], storedID: UInt8?) {
        guard !bytes.isEmpty else { return nil }
        self.bytes = bytes
        self.storedID = storedID
    }

    /// Trains a dictionary of up to `capacity` bytes on `samples` (whole event lines),
    /// or nil when zstd finds too little to learn from. Deterministic for the same
    /// samples.
    static func train(_ samples: [[UInt8]], capacity: Int = 32 << 10) -> RecordDictionary? {
        var joined: [UInt8] = []
        joined.reserveCapacity(samples.reduce(0) { $0 + $1.count })
        for s in samples { joined += s }
        let sizes = samples.map { Int($0.count) }
        var dict = [UInt8](repeating: 0, count: capacity)
        var params = ZDICT_fastCover_params_t()
        params.k = 1024
        params.d = 8
        params.f = 20
        params.accel = 1
        params.zParams.compressionLevel = RecordCompressor.level
        let n = dict.withUnsafeMutableBytes { d in
            joined.withUnsafeBytes { j in
                sizes.withUnsafeBufferPointer { s in
                    ZDICT_trainFromBuffer_fastCover(
                        d.baseAddress, d.count, j.baseAddress, s.baseAddress, UInt32(s.count), params)
                }
            }
        }
        guard ZDICT_isError(n) == 0, n > 0 else { return nil }
        return RecordDictionary(bytes: Array(dict[0..<n]), storedID: nil)
    }
}

/// Compresses records with one dictionary; one per thread.
final class RecordCompressor {
    /// zstd's "fast" level -5: its frames store literals without Huffman coding and
    /// decode with about a fifth fewer instructions than level 1's (`verify` and every
    /// query decompress what they read), and compress with about a third fewer. The
    /// price is room: 208 bytes for a 500-byte event instead of 144. Against level -3
    /// (earlier stores): 9% fewer instructions to compress, 3% fewer to decode, and
    /// records no larger, with a dictionary trained at the same level (docs/PERFORMANCE.md).
    static let level: Int32 = -5

    let dictionary: RecordDictionary
    private let context: OpaquePointer
    private let cdict: OpaquePointer
    private var buffer: [UInt8]

    init?(dictionary: RecordDictionary) {
        guard let context = ZSTD_createCCtx() else { return nil }
        guard
            let cdict = dictionary.bytes.withUnsafeBytes({
                ZSTD_createCDict($0.baseAddress, $0.count, RecordCompressor.level)
            })
        else {
            ZSTD_freeCCtx(context)
            return nil
        }
        self.dictionary = dictionary
        self.context = context
        self.cdict = cdict
        // Plain frames (`zstd -d -D DICT` reads them) without the dictionary's id or a
        // checksum: the store says which dictionary, and the chain hash covers the bytes.
        ZSTD_CCtx_setParameter(context, ZSTD_c_dictIDFlag, 0)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0)
        ZSTD_CCtx_refCDict(context, cdict)
        buffer = [UInt8](repeating: 0, count: ZSTD_compressBound(EventDecoder.maxLineBytes + 1))
    }

    deinit {
        ZSTD_freeCCtx(context)
        ZSTD_freeCDict(cdict)
    }

    /// The frame for `raw`, or nil when it would not save at least one byte beyond the
    /// dictionary number it costs.
    func compress(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count > 16, ZSTD_compressBound(raw.count) <= buffer.count else { return nil }
        let n = buffer.withUnsafeMutableBytes { out in
            raw.withUnsafeBytes { ZSTD_compress2(context, out.baseAddress, out.count, $0.baseAddress, $0.count) }
        }
        guard ZSTD_isError(n) == 0, n + 1 < raw.count else { return nil }
        return Array(buffer[0..<n])
    }

    /// Gives each event its compressed form, where that is smaller.
    func compress(_ events: inout [PendingEvent]) {
        for i in events.indices { events[i].compressed = compress(events[i].raw) }
    }
}

/// Decompresses records; one per thread, or shared under `Store`'s lock.
final class RecordDecompressor {
    private let held: OpaquePointer?
    /// The dictionary of the last record, laid out for decoding; its parts are copied
    /// out below so that a call retains nothing.
    private var window: Window?
    private var windowDictionary: ObjectIdentifier?
    private var windowTables: OpaquePointer?
    private var windowRoom = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// A dictionary's bytes with room for the largest event right behind them, and
    /// zstd's tables for it, referring to those bytes. Decoding into that room, zstd
    /// sees the dictionary as the output's own past: a match into it is a plain copy
    /// within one buffer, where a dictionary elsewhere in memory makes each such match
    /// a separate `memmove` (most matches of a small record are into the dictionary).
    private final class Window {
        let dictionary: RecordDictionary
        let buffer: UnsafeMutableRawBufferPointer
        let ddict: OpaquePointer
        var room: UnsafeMutableRawBufferPointer {
            UnsafeMutableRawBufferPointer(rebasing: buffer[dictionary.bytes.count...])
        }

        init?(_ dictionary: RecordDictionary) {
            let size = dictionary.bytes.count
            let buffer = UnsafeMutableRawBufferPointer.allocate(
                byteCount: size + EventDecoder.maxLineBytes + 1, alignment: 16)
            dictionary.bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: size) }
            guard let ddict = ZSTD_createDDict_byReference(buffer.baseAddress, size) else {
                buffer.deallocate()
                return nil
            }
            self.dictionary = dictionary
            self.buffer = buffer
            self.ddict = ddict
        }

        deinit {
            ZSTD_freeDDict(ddict)
            buffer.deallocate()
        }
    }

    /// `holdingContext`: keep one of zstd's contexts for the decompressor's life (one
    /// thread reading many records); else borrow one for each record.
    init(holdingContext: Bool) {
        held = holdingContext ? DecompressionContexts.take() : nil
    }

    deinit { if let held { DecompressionContexts.give(held) } }

    /// The JSON of a compressed record's body (`frame`), valid until the next call; nil
    /// when it is damaged, too large or not made with `dictionary` (or zstd cannot
    /// read `dictionary`).
    func decompress(_ frame: UnsafeRawBufferPointer, with dictionary: RecordDictionary) -> UnsafeRawBufferPointer? {
        // The window keeps its dictionary alive, so no other object has its identifier.
        if windowDictionary != ObjectIdentifier(dictionary) {
            window = nil
            window = Window(dictionary)
            windowDictionary = window.map { ObjectIdentifier($0.dictionary) }
            windowTables = window?.ddict
            windowRoom = window?.room ?? UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
        guard let tables = windowTables else { return nil }
        let context = held ?? DecompressionContexts.take()
        defer { if held == nil { DecompressionContexts.give(context) } }
        let n = ZSTD_decompress_usingDDict(
            context, windowRoom.baseAddress, windowRoom.count, frame.baseAddress, frame.count, tables)
        return ZSTD_isError(n) != 0 ? nil : UnsafeRawBufferPointer(rebasing: windowRoom[0..<n])
    }
}

/// zstd's decompression contexts, kept for the process's life and lent out. Making one
/// costs more than reading a few records (zstd probes the processor, which traps in
/// some virtual machines), and a reader over a cluster opens a store for each shard.
enum DecompressionContexts {
    private static let monitor = Monitor()
    nonisolated(unsafe) private static var idle: [OpaquePointer] = []
    /// The most kept idle: as many as threads decompress at once, in practice.
    static let kept = 8

    static func take() -> OpaquePointer {
        // Only allocation failure makes zstd's nil; nothing sensible is left to do then.
        monitor.locked { idle.popLast() } ?? ZSTD_createDCtx()!
    }

    static func give(_ context: OpaquePointer) {
        let surplus: OpaquePointer? = monitor.locked {
            guard idle.count < kept else { return context }
            idle.append(context)
            return nil
        }
        if let surplus { ZSTD_freeDCtx(surplus) }
    }
}

/// The dictionaries a store's records were compressed with, read from `meta` as they
/// are first needed and kept (they never change once written), and a decompressor
/// shared by the store's readers.
final class DictionaryCache: @unchecked Sendable {
    private let monitor = Monitor()
    private var loaded: [RecordDictionary?] = Array(repeating: nil, count: 256)
    /// The read-only snapshot (transaction id) in which each kept dictionary was last
    /// found equal to the stored one; -1 for none.
    private var checkedIn: [Int] = Array(repeating: -1, count: 256)
    /// Made when a record is first decompressed (under `monitor`); it borrows zstd's
    /// context for each record, so the stores of a cluster's shards share a few.
    private var decompressor: RecordDecompressor?

    /// Dictionary `id` as stored in this snapshot's `meta`, or nil when it is missing.
    /// The one kept is used only while its bytes are the snapshot's: a write
    /// transaction may store a dictionary and then abort, and another take its number.
    /// A committed snapshot never changes, so a read-only transaction compares once,
    /// not for every record it reads (a look-up in `meta` and 32 KiB compared each).
    func dictionary(_ id: UInt8, meta: Database, txn: Transaction) throws -> RecordDictionary? {
        let snapshot = txn.isWritable ? -1 : txn.id
        let slot = Int(id)
        if snapshot >= 0, let d = monitor.locked({ checkedIn[slot] == snapshot ? loaded[slot] : nil }) {
            return d
        }
        guard let value = try meta.get(Layout.dictionaryKey(id), in: txn) else { return nil }
        if let d = monitor.locked({ loaded[slot] }), d.bytes.count == value.count,
            d.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0 })
        {
            monitor.locked { if loaded[slot] === d { checkedIn[slot] = snapshot } }
            return d
        }
        guard let d = RecordDictionary(bytes: Array(value), storedID: id) else { return nil }
        monitor.locked {
            loaded[slot] = d
            checkedIn[slot] = snapshot
        }
        return d
    }

    /// The JSON of a compressed record's body, or nil when it does not decompress.
    func decompress(_ frame: UnsafeRawBufferPointer, with dictionary: RecordDictionary) -> [UInt8]? {
        monitor.locked {
            if decompressor == nil { decompressor = RecordDecompressor(holdingContext: false) }
            return decompressor!.decompress(frame, with: dictionary).map { Array($0) }
        }
    }
}
