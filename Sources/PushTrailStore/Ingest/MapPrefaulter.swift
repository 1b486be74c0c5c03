import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Faults in, from the parsing thread, the pages of the writable map that the writing
/// thread is about to take.
///
/// Within one write transaction LMDB takes new pages in order from the end of the
/// pages in use, and the first write to each of them faults: the kernel finds or
/// zero-fills a page of the sparse file and reserves its block. A 1M-event ingest takes
/// about 115,000 such faults, 1–1.5 s of the writer's time, and the writer bounds the
/// ingest. The parser has time to spare, so after each handoff it asks the kernel to
/// fault in the pages just past the writer's newest record (`MADV_POPULATE_WRITE`,
/// Linux 5.14), which moves that work to its own core. It changes no byte: a populated
/// page stays zero until LMDB writes it.
///
/// What keeps it safe:
/// - It touches only pages past those the last commit used (`floor`): those hold
///   nothing, so faulting them in cannot make LMDB write any committed page again.
/// - It touches only the store's own mapping, found in `/proc/self/maps`, and only
///   while the writer has said where its records are: the writer calls `pause` before
///   the map can move (every transaction's end), under the same lock.
/// - Any failure (an older kernel, a full disk: the call fails instead of raising
///   SIGBUS) turns it off for the rest of the ingest. It is only ever an optimisation.
final class MapPrefaulter: @unchecked Sendable {
    private let monitor = Monitor()
    /// The address of the writer's newest record; 0 while the map may move.
    private var frontier = 0
    /// Bytes of the file the last commit used: nothing below them is touched.
    private var floor = 0
    /// The store's mapping (start, end), read from `/proc/self/maps`.
    private var mapping: (start: Int, end: Int)?
    /// Populated up to here.
    private var done = 0
    private var disabled = false
    /// What `populate` has faulted in so far, and the last range (for tests).
    private(set) var populatedBytes = 0
    private(set) var lastPopulated: Range<Int>?
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// How far past the newest record pages are faulted in: a few handoffs' worth (a
    /// 1M-event ingest takes ~4 MB of pages per handoff of 8,192 events), and at most
    /// this much of unused but written-back zero pages per commit.
    static let ahead = 16 << 20

    /// A prefaulter, where the kernel has `MADV_POPULATE_WRITE`; nil elsewhere.
    static func make() -> MapPrefaulter? {
        #if os(Linux)
            return MapPrefaulter()
        #else
            return nil
        #endif
    }

    private init() {}

    /// Writer: the records now reach `address` (in the writable map); the last commit
    /// used `usedBytes` of the file.
    func advance(to address: Int, usedBytes: Int) {
        monitor.locked {
            frontier = address
            floor = usedBytes
        }
    }

    /// Writer: the transaction ends, and the map may move or the file shrink before the
    /// next `advance`.
    func pause() {
        monitor.locked { frontier = 0 }
    }

    /// Parser: faults in the pages up to `ahead` past the newest record.
    func populate() {
        #if os(Linux)
            monitor.locked {
                guard !disabled, frontier != 0 else { return }
                if mapping.map({ !($0.start..<$0.end).contains(frontier) }) ?? true {
                    mapping = MapPrefaulter.storeMapping(containing: frontier)
                    done = 0
                }
                guard let (start, end) = mapping else {
                    disabled = true
                    return
                }
                let mask = ~(pageSize - 1)
                let from = max(done, start + floor, frontier & mask)
                let to = min(frontier + MapPrefaulter.ahead, end) & mask
                guard to > from else { return }
                if madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MapPrefaulter.populateWrite) != 0 {
                    disabled = true
                    return
                }
                done = to
                populatedBytes += to - from
                lastPopulated = from..<to
            }
        #endif
    }

    #if os(Linux)
        /// `MADV_POPULATE_WRITE` (linux/mman.h; Glibc's headers may predate it).
        static let populateWrite: Int32 = 23

        /// The shared, writable mapping of a `data.mdb` from its start that holds
        /// `address`, as (start, end); nil when there is none.
        static func storeMapping(containing address: Int) -> (start: Int, end: Int)? {
            let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            let lines = LineReader(fd: fd, chunkSize: 1 << 16)
            while let line = try? lines.next() {
                if let range = mappingRange(line.bytes[...], containing: address) { return range }
            }
            return nil
        }

        /// The range of one `/proc/self/maps` line (`start-end perms offset dev inode
        /// path`) when it holds `address` and is a `data.mdb` mapped shared and
        /// writable from offset 0.
        static func mappingRange(_ line: ArraySlice<UInt8>, containing address: Int) -> (start: Int, end: Int)? {
            // The path, last, may hold spaces: only the first fields are split out.
            let fields = line.split(separator: 0x20, maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, line.reversed().starts(with: "/data.mdb".utf8.reversed()) else { return nil }
            let bounds = fields[0].split(separator: UInt8(ascii: "-"))
            guard bounds.count == 2, let start = hex(bounds[0]), let end = hex(bounds[1]), start <= address,
                address < end,
                fields[1].starts(with: "rw".utf8), fields[1].last == UInt8(ascii: "s"), hex(fields[2]) == 0
            else { return nil }
            return (start, end)
        }

        private static func hex(_ digits: ArraySlice<UInt8>) -> Int? {
            guard !digits.isEmpty, digits.count <= 16 else { return nil }
            var value: UInt = 0
            for d in digits {
                guard let v = JSONText.hexDigit(d) else { return nil }
                value = value << 4 | UInt(v)
            }
            return Int(bitPattern: value)
        }
    #endif
}
