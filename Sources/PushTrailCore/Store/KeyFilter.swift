/// A Bloom filter of byte-string keys: `mayContain` is true for every key inserted,
/// and false for most others.
///
/// An ingest keeps one of the `refs` index's keys (the notification ids that actions
/// and deliveries name), so that a new notification looks in `refs` for the 410
/// deliveries that came before it only when one may be there: in order, a notification
/// comes before anything that names it, and the look-up was a random descent of the
/// tree for every notification (docs/PERFORMANCE.md).
final class KeyFilter {
    /// 2^25 bits (4 MiB): three bits per key keep false positives under 1% for 2M keys,
    /// about 10% for 6M.
    static let bitCount = 1 << 25
    private let words: UnsafeMutablePointer<UInt64>
    private let mask = UInt64(KeyFilter.bitCount - 1)
    /// Keys inserted (counted with repeats).
    private(set) var insertions = 0

    init() {
        words = .allocate(capacity: KeyFilter.bitCount / 64)
        words.initialize(repeating: 0, count: KeyFilter.bitCount / 64)
    }

    deinit { words.deallocate() }

    func insert(_ key: UnsafeRawBufferPointer) {
        var h = KeyFilter.hash(key)
        for _ in 0..<3 {
            let bit = h & mask
            words[Int(bit >> 6)] |= 1 << (bit & 63)
            h = KeyFilter.next(h)
        }
        insertions += 1
    }

    func mayContain(_ key: UnsafeRawBufferPointer) -> Bool {
        var h = KeyFilter.hash(key)
        for _ in 0..<3 {
            let bit = h & mask
            if words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            h = KeyFilter.next(h)
        }
        return true
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

    /// The next bit position's hash: another mix of the same value.
    @inline(__always) static func next(_ h: UInt64) -> UInt64 { mix(h &+ 0x9E37_79B9_7F4A_7C15) }
}
