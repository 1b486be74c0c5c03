import CCrypto
import PushTrailModel

/// SHA-256 from OpenSSL's libcrypto: a well-kept implementation that uses the CPU's
/// SHA extensions where present (over 1.5 GB/s here), which `verify` depends on. It
/// goes through `SHA256_Init/Update/Final` rather than EVP: see `CCrypto/shim.h`.
public enum SHA256 {
    /// The 32-byte digest of `parts` concatenated.
    public static func digest(_ parts: UnsafeRawBufferPointer...) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { digest(parts, into: $0) }
        return out
    }

    /// Writes the digest of `parts` concatenated into `out` (32 bytes).
    public static func digest(_ parts: [UnsafeRawBufferPointer], into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 32)
        var ctx = SHA256_CTX()
        SHA256_Init(&ctx)
        for part in parts where part.count > 0 { SHA256_Update(&ctx, part.baseAddress, part.count) }
        SHA256_Final(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &ctx)
    }

    /// A reusable hashing context for hot paths.
    final class Context {
        // Behind a pointer: `&` on a stored property of a class checks exclusive
        // access at run time, three times per digest.
        private let ctx = UnsafeMutablePointer<SHA256_CTX>.allocate(capacity: 1)

        init() { ctx.initialize(to: SHA256_CTX()) }
        deinit { ctx.deallocate() }

        /// Writes the digest of `parts` concatenated into `out` (32 bytes).
        func digest(_ parts: UnsafeRawBufferPointer..., into out: UnsafeMutableRawPointer) {
            SHA256_Init(ctx)
            for part in parts where part.count > 0 { SHA256_Update(ctx, part.baseAddress, part.count) }
            SHA256_Final(out.assumingMemoryBound(to: UInt8.self), ctx)
        }
    }

    /// The bytes of lowercase or uppercase hex `text`; nil when it is not hex.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Lowercase hex of `bytes`.
    public static func hex<C: Collection<UInt8>>(_ bytes: C) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
