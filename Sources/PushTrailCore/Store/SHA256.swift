import CCrypto

/// SHA-256 from OpenSSL's libcrypto: a well-kept implementation that uses the CPU's
/// SHA extensions where present (over 1.5 GB/s here), which `verify` depends on.
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
        let ctx = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1 else { fatalError("EVP_DigestInit_ex failed") }
        for part in parts where part.count > 0 {
            EVP_DigestUpdate(ctx, part.baseAddress, part.count)
        }
        var length: UInt32 = 32
        EVP_DigestFinal_ex(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
    }

    /// A reusable hashing context: saves allocating one per digest on hot paths.
    final class Context {
        private let ctx = EVP_MD_CTX_new()
        /// Fetched once: `EVP_sha256()` makes OpenSSL 3 look the algorithm up again on
        /// every init, which cost more than hashing a small event.
        private let md = EVP_MD_fetch(nil, "SHA256", nil)

        deinit {
            EVP_MD_free(md)
            EVP_MD_CTX_free(ctx)
        }

        /// Writes the digest of `parts` concatenated into `out` (32 bytes).
        func digest(_ parts: UnsafeRawBufferPointer..., into out: UnsafeMutableRawPointer) {
            EVP_DigestInit_ex(ctx, md, nil)
            for part in parts where part.count > 0 { EVP_DigestUpdate(ctx, part.baseAddress, part.count) }
            var length: UInt32 = 32
            EVP_DigestFinal_ex(ctx, out.assumingMemoryBound(to: UInt8.self), &length)
        }
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
