import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

@Suite("KeyFilter: the refs and ids keys an ingest keeps, to skip look-ups for keys not stored")
struct KeyFilterTests {
    /// Deterministic keys of 0 to 130 bytes (xorshift64*).
    static func keys(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed | 1
        func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        return (0..<count).map { _ in (0..<Int(next() % 131)).map { _ in UInt8(truncatingIfNeeded: next()) } }
    }

    @Test("every inserted key is found, and other keys rarely are")
    func noFalseNegatives() {
        let filter = KeyFilter()
        let inserted = Self.keys(300_000, seed: 11)
        for key in inserted { key.withUnsafeBytes { filter.insert($0) } }
        #expect(inserted.allSatisfy { key in key.withUnsafeBytes { filter.mayContain($0) } })
        #expect(filter.insertions == 300_000)
        // Three bits of one word per key, 2^19 words: about 0.01% false positives at this load.
        let known = Set(inserted)
        let others = Self.keys(100_000, seed: 12).filter { !known.contains($0) }
        let positives = others.filter { key in key.withUnsafeBytes { filter.mayContain($0) } }.count
        #expect(positives < others.count / 200, "\(positives) of \(others.count)")
    }

    @Test("an empty filter holds nothing, and keys that differ in one byte or in length hash apart")
    func distinctKeys() {
        let filter = KeyFilter()
        let uuid = Array("0f8fad5b-d9cb-469f-a165-70867728950e".utf8)
        #expect(!uuid.withUnsafeBytes { filter.mayContain($0) })
        uuid.withUnsafeBytes { filter.insert($0) }
        #expect(uuid.withUnsafeBytes { filter.mayContain($0) })
        var hashes = Set<UInt64>()
        for i in uuid.indices {
            var changed = uuid
            changed[i] ^= 1
            hashes.insert(changed.withUnsafeBytes { KeyFilter.hash($0) })
        }
        for n in 0...uuid.count {
            hashes.insert(uuid.prefix(n).withUnsafeBytes { KeyFilter.hash(UnsafeRawBufferPointer($0)) })
        }
        // Zeros are not the empty key.
        hashes.insert([UInt8](repeating: 0, count: 3).withUnsafeBytes { KeyFilter.hash($0) })
        #expect(hashes.count == uuid.count + uuid.count + 1 + 1)
    }
}
