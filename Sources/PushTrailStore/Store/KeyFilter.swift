import LMDBKit
import PushTrailModel

/// A Bloom filter of byte-string keys: `mayContain` is true for every key inserted,
/// and false for most others.
///
/// An ingest keeps one of the `refs` index's keys (the notification ids that actions
/// and deliveries name), so that a new notification looks in `refs` for the 410
/// deliveries that came before it only when one may be there: in order, a notification
/// comes before anything that names it, and the look-up was a random descent of the
/// tree for every notification (docs/PERFORMANCE.md). It keeps one of the `ids` keys
/// too, so that an id it has never seen is known to be new without a look-up and can
/// be filed later, in key order with the others (`IndexRun`).
final class KeyFilter {
    /// 2^25 bits (4 MiB), in 64-bit words; a key sets three bits of one word, chosen by
    /// its hash, so an insert or a look-up touches one cache line instead of three (the
    /// filter is larger than the CPU's caches). False positives: about 0.01% at 300k
    /// keys, 3% at 4M.
    static let bitCount = 1 << 25
    private let words: UnsafeMutablePointer<UInt64>
    private let wordMask = UInt64(KeyFilter.bitCount / 64 - 1)
    /// Keys inserted (counted with repeats).
    private(set) var insertions = 0

    init() {
        words = .allocate(capacity: KeyFilter.bitCount / 64)
        words.initialize(repeating: 0, count: KeyFilter.bitCount / 64)
    }

    deinit { words.deallocate() }

    /// The word and the three bits of it that stand for `key`.
    @inline(__always) private func slot(_ h: UInt64) -> (Int, UInt64) {
        let bits: UInt64 = 1 << (h >> 32 & 63) | 1 << (h >> 38 & 63) | 1 << (h >> 44 & 63)
        return (Int(h & wordMask), bits)
    }

    func insert(_ key: UnsafeRawBufferPointer) { insert(hash: KeyFilter.hash(key)) }

    /// Inserts the key whose `KeyFilter.hash` is `hash`.
    func insert(hash: UInt64) {
        let (word, bits) = slot(hash)
        words[word] |= bits
        insertions += 1
    }

    func mayContain(_ key: UnsafeRawBufferPointer) -> Bool { mayContain(hash: KeyFilter.hash(key)) }

    /// Brings the word of `hash` into the cache, for a look-up or insert soon after.
    @inline(__always) func prefetch(hash: UInt64) {
        LMDBKit.prefetch(words + slot(hash).0)
    }

    func mayContain(hash: UInt64) -> Bool {
        let (word, bits) = slot(hash)
        return words[word] & bits == bits
    }

    /// A 64-bit hash of the bytes: eight at a time, each word mixed in by a multiply and
    /// a shift (the keys are short: UUIDs and ids of up to 128 bytes).
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(key.count)
        var i = 0
        while i + 8 <= key.count {
            h = mix(h ^ UInt64(littleEndian: key.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        if i < key.count {
            var tail: UInt64 = 0
            for k in i..<key.count { tail |= UInt64(key[k]) << (UInt64(k - i) * 8) }
            h = mix(h ^ tail)
        }
        return mix(h)
    }

    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        var z = x &* 0xBF58_476D_1CE4_E5B9
        z ^= z >> 31
        z = z &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 29)
    }
}
