/// Which partition of the event stream an event goes to: the CRC-32 (IEEE 802.3, as
/// zlib computes it) of its task id written in decimal, modulo the partition count. A
/// delivery goes with its notification's task, so a task's events stay in one
/// partition, in order, and one shard holds all of them.
public enum Partition {
    /// The partition of task `taskID` among `count` (at least 1).
    public static func of(taskID: Int64, count: Int) -> Int {
        Int(crc32(Array(String(taskID).utf8)) % UInt32(max(count, 1)))
    }

    /// CRC-32 of `bytes`: reflected polynomial 0xEDB88320, initial and final value
    /// 0xFFFFFFFF (so `crc32("123456789")` is 0xCBF43926).
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// Partition numbers from a list such as `0-3,6`: each once, ascending, all below
    /// `count`; nil when the list is not one.
    public static func parseList(_ text: String, count: Int) -> [Int]? {
        var out: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int(bounds[0]), let high = Int(bounds.last!),
                low >= 0, low <= high, high < count
            else { return nil }
            out += Array(low...high)
        }
        let sorted = Array(Set(out)).sorted()
        return sorted.isEmpty ? nil : sorted
    }
}
