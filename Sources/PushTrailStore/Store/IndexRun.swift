import LMDBKit
import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Entries of one database that a write transaction has yet to file (`ids`, `users`,
/// `tasks`, `threads` or `refs`), so that it files many of them at once, in key order.
///
/// Filed one by one as events come, each entry is a descent of its tree to a random
/// leaf, most of them not in the CPU's caches: these five databases were two thirds of
/// the writing thread's time (docs/PERFORMANCE.md). Filed in key order, a run walks each
/// tree from left to right along pages the entries before it have just brought in, and
/// the entries of one key of a duplicate-sort index go in with one call.
///
/// A key's seqs are filed in the order they were added, which is increasing: in a
/// duplicate-sort index they are appended to the key's values as before, and the
/// database ends up holding exactly the same entries.
final class IndexRun {
    /// An entry: its key (in `keys`) and the seq it files.
    struct Entry {
        /// The key's first sixteen bytes, big-endian and zero-padded: the sort compares
        /// keys of up to 16 bytes (users, tasks, threads) by them and their length alone.
        var prefix: (UInt64, UInt64)
        var offset: UInt32
        var length: UInt32
        var seq: UInt64

        /// LMDB's order of the keys (memcmp, then the shorter first), then the seqs'.
        @inline(__always) func precedes(_ other: Entry, keys: UnsafeRawPointer) -> Bool {
            if prefix.0 != other.prefix.0 { return prefix.0 < other.prefix.0 }
            if prefix.1 != other.prefix.1 { return prefix.1 < other.prefix.1 }
            // Equal in their first 16 bytes (zeros past the end): if both end by then,
            // the shorter is a prefix of the other.
            if length > 16 && other.length > 16 {
                let order = IndexRun.compare(
                    keys + Int(offset) + 16, Int(length) - 16, keys + Int(other.offset) + 16, Int(other.length) - 16)
                if order != 0 { return order < 0 }
            } else if length != other.length {
                return length < other.length
            }
            return seq < other.seq
        }

        /// Whether the two keys are equal.
        @inline(__always) func sameKey(_ other: Entry, keys: UnsafeRawPointer) -> Bool {
            prefix == other.prefix && length == other.length
                && (length <= 16
                    || memcmp(keys + Int(offset) + 16, keys + Int(other.offset) + 16, Int(length) - 16) == 0)
        }
    }

    /// How many entries a write transaction gathers, over all its runs, before it files
    /// them (`StoreWriter.runLimit`): about 8 MB of entries and keys, runs long enough
    /// that most leaves they reach take several of their entries. Twice as many took
    /// 2.5% less CPU and 8–10 MB more memory, and at 10M events the anonymous peak
    /// came within 9 MB of the 150 MB target (docs/PERFORMANCE.md).
    static let defaultLimit = 1 << 17

    // Not checked for exclusive access at run time: one writing thread owns a run, and
    // no method of it calls out while it changes them. The checks were a sixth of the
    // instructions of `add`, which runs four times per event (docs/PERFORMANCE.md).

    /// The keys, one after another.
    @exclusivity(unchecked) private var keys: [UInt8] = []
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// Big-endian seqs of one key, handed to LMDB in one call.
    @exclusivity(unchecked) private var values: [UInt64] = []
    /// With `lookup`: an open-addressing table of entry numbers + 1 (0: empty) by the
    /// key's hash, so that a key not filed yet can be found.
    @exclusivity(unchecked) private var table: [UInt32] = []
    private var tableMask = 0

    /// With `lookup`, `seq(of:hash:)` finds the entries added since the last `file`.
    init(lookup: Bool = false) {
        if lookup {
            table = [UInt32](repeating: 0, count: 1024)
            tableMask = table.count - 1
        }
    }

    var count: Int { entries.count }

    /// Adds an entry; `hash` (`KeyFilter.hash` of the key) is used by a run with lookup.
    func add(_ key: UnsafeRawBufferPointer, seq: UInt64, hash: UInt64 = 0) {
        var prefix: (UInt64, UInt64) = (0, 0)
        if key.count >= 16 {
            prefix = (
                UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        } else {
            withUnsafeMutableBytes(of: &prefix) { $0.copyMemory(from: key) }
            prefix = (UInt64(bigEndian: prefix.0), UInt64(bigEndian: prefix.1))
        }
        if tableMask != 0 {
            if 2 * entries.count >= table.count { growTable() }
            var slot = Int(truncatingIfNeeded: hash) & tableMask
            while table[slot] != 0 { slot = (slot + 1) & tableMask }
            table[slot] = UInt32(entries.count + 1)
        }
        entries.append(Entry(prefix: prefix, offset: UInt32(keys.count), length: UInt32(key.count), seq: seq))
        keys.append(contentsOf: key)
    }

    /// The seq added under `key` since the last `file`, if any (a run with lookup).
    func seq(of key: UnsafeRawBufferPointer, hash: UInt64) -> UInt64? {
        guard tableMask != 0, !entries.isEmpty else { return nil }
        var slot = Int(truncatingIfNeeded: hash) & tableMask
        return keys.withUnsafeBytes { keys in
            while table[slot] != 0 {
                let entry = entries[Int(table[slot]) - 1]
                if Int(entry.length) == key.count,
                    key.isEmpty || memcmp(keys.baseAddress! + Int(entry.offset), key.baseAddress!, key.count) == 0
                {
                    return entry.seq
                }
                slot = (slot + 1) & tableMask
            }
            return nil
        }
    }

    /// Brings the table's slot for `hash` into the cache (a run with lookup), for an
    /// `add` or `seq(of:hash:)` soon after.
    @inline(__always) func prefetch(hash: UInt64) {
        guard tableMask != 0 else { return }
        table.withUnsafeBufferPointer {
            LMDBKit.prefetch($0.baseAddress! + (Int(truncatingIfNeeded: hash) & tableMask))
        }
    }

    /// A table twice the size, rebuilt: it is kept at most half full.
    private func growTable() {
        table = [UInt32](repeating: 0, count: 2 * table.count)
        tableMask = table.count - 1
        for (n, entry) in entries.enumerated() {
            let key = keys.withUnsafeBytes {
                UnsafeRawBufferPointer(rebasing: $0[Int(entry.offset)..<Int(entry.offset + entry.length)])
            }
            var slot = Int(truncatingIfNeeded: KeyFilter.hash(key)) & tableMask
            while table[slot] != 0 { slot = (slot + 1) & tableMask }
            table[slot] = UInt32(n + 1)
        }
    }

    /// Files every entry through `cursor` in key order and empties the run: appended
    /// to the key's values in a duplicate-sort index, or as a new key (which must not be
    /// there) in a plain one.
    func file(through cursor: Cursor, duplicates: Bool) throws {
        try file(through: cursor, duplicates: duplicates, prefix: nil)
    }

    /// `file(through:duplicates:)`, with `prefix` (big-endian) before every key when
    /// given (a run of the recent tier's); the entries filed.
    @discardableResult
    func file(through cursor: Cursor, duplicates: Bool, prefix: UInt64?) throws -> Int {
        guard !entries.isEmpty else { return 0 }
        let filed = entries.count
        // The key with its prefix, when there is one, is built here.
        var scratch = [UInt8](repeating: 0, count: prefix == nil ? 0 : 8 + 512)
        if let prefix { withUnsafeBytes(of: prefix.bigEndian) { scratch.replaceSubrange(0..<8, with: $0) } }
        try keys.withUnsafeBytes { keys in
            let base = keys.baseAddress!
            entries.sort { $0.precedes($1, keys: base) }
            try entries.withUnsafeBufferPointer { sorted in
                var i = 0
                while i < sorted.count {
                    let first = sorted[i]
                    var key = UnsafeRawBufferPointer(start: base + Int(first.offset), count: Int(first.length))
                    if prefix != nil {
                        key = scratch.withUnsafeMutableBytes { s in
                            (s.baseAddress! + 8).copyMemory(from: key.baseAddress!, byteCount: key.count)
                            return UnsafeRawBufferPointer(start: s.baseAddress!, count: 8 + key.count)
                        }
                    }
                    i += 1
                    if !duplicates {
                        var seq = first.seq.bigEndian
                        guard try withUnsafeBytes(of: &seq, { try cursor.put(key, $0, flags: .noOverwrite) }) else {
                            throw StoreError.io(
                                "internal error: a new id was already in the store when filed; nothing was written")
                        }
                        continue
                    }
                    values.removeAll(keepingCapacity: true)
                    values.append(first.seq.bigEndian)
                    while i < sorted.count, sorted[i].sameKey(first, keys: base) {
                        values.append(sorted[i].seq.bigEndian)
                        i += 1
                    }
                    try values.withUnsafeBytes { try cursor.appendDuplicates(key, $0, size: 8) }
                }
            }
        }
        entries.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        if tableMask != 0 {
            table.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
        return filed
    }

    /// memcmp order, then the shorter first: LMDB's order of keys.
    static func compare(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
        let n = min(aCount, bCount)
        let order = n == 0 ? 0 : Int(memcmp(a, b, n))
        return order != 0 ? order : aCount - bCount
    }
}
