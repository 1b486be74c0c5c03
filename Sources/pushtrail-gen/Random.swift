#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SplitMix64 finaliser: a bijection on 64 bits, used to spread seeds and to derive
/// stable values (device tokens, the run tag) from small integers.
@inline(__always)
func mix64(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// xoshiro256**, seeded through SplitMix64: the generator's only source of randomness,
/// so the same arguments always give byte-identical output on every platform.
struct Xoshiro256 {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    init(seed: UInt64) {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return mix64(state)
        }
        s0 = next()
        s1 = next()
        s2 = next()
        s3 = next()
    }

    @inline(__always)
    mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A value in `0..<bound` (Lemire's multiply-high; the bias is below 2^-40 here).
    @inline(__always)
    mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A value in `low...high`.
    @inline(__always)
    mutating func between(_ low: Int, _ high: Int) -> Int {
        low + below(high - low + 1)
    }

    /// A double in `[0, 1)`.
    @inline(__always)
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    @inline(__always)
    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// An exponentially distributed duration with the given mean (same unit as the mean).
    @inline(__always)
    mutating func exponential(mean: Double) -> Int {
        Int(-mean * log(1.0 - unit()))
    }
}

/// A double in `[0, 1)` that depends only on `value`: for choices that must not draw from
/// the PRNG.
@inline(__always)
func unitHash(_ value: UInt64) -> Double {
    Double(mix64(value) >> 11) * 0x1.0p-53
}
