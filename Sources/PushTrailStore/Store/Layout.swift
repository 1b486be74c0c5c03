import PushTrailModel

/// The on-disk layout of a store: named databases and their key/value encodings.
/// `docs/STORE.md` describes the same thing for someone holding only `mdb_dump`.
public enum Layout {
    /// The newest format this build reads and writes; a store with a higher number is
    /// refused. Format 2 adds compressed records; a store is format 1 until its first
    /// compression dictionary is stored, so older builds read it until then. Format 3
    /// adds the recent tier (`RecentDatabases`), which older builds would not read;
    /// format 4 its runs (`TierRuns`).
    public static let formatVersion: UInt32 = 4
    /// A new store's format (whole records only).
    static let initialFormatVersion: UInt32 = 1
    /// The format a store is marked when its first dictionary is stored.
    static let compressedFormatVersion: UInt32 = 2
    /// The format a store is marked when a write first files entries in the recent tier.
    static let tieredFormatVersion: UInt32 = 3
    /// The format a store is marked when a write first files entries in the tier's runs.
    static let runsFormatVersion: UInt32 = 4

    /// The size of an event value's header, before the body (the JSON, or a compressed
    /// record's dictionary number and zstd frame).
    public static let eventHeaderSize = 49
    /// Where the 32-byte chain hash sits in an event value.
    static let hashRange = 17..<49
    /// Set in the type byte of a compressed record.
    static let compressedFlag: UInt8 = 0x80

    /// Databases that map a key to the (at, seq) of every event filed under it.
    public enum Index: String, CaseIterable, Sendable {
        /// Every event under one key: the global timeline.
        case time
        case users
        case tasks
        case threads
        /// Notification id → the actions and deliveries that refer to it.
        case refs
        /// SHA-256(device)[0..<16] → 410 deliveries (Unregistered, ExpiredToken) for a
        /// notification to that device (the delivery's own `device` until its
        /// notification is stored).
        case unregistered
    }

    static let metaFormatKey = Array("format".utf8)
    static let metaHeadKey = Array("head".utf8)
    static let metaCountsKey = Array("counts".utf8)
    static let dictionaryKeyPrefix = Array("dictionary.".utf8)
    /// `dictionary.N`: the zstd dictionary numbered N (1–255).
    static func dictionaryKey(_ id: UInt8) -> [UInt8] { dictionaryKeyPrefix + Array(String(id).utf8) }
    /// The single key of the `time` index.
    static let timeKey: [UInt8] = [0]

    // MARK: - Encodings (big-endian so that byte order is numeric order)

    static func bigEndian(_ v: UInt64) -> [UInt8] {
        withUnsafeBytes(of: v.bigEndian) { Array($0) }
    }

    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// A signed value with its sign bit flipped, so negative values sort first.
    static func orderedSigned(_ v: Int64) -> UInt64 { UInt64(bitPattern: v) ^ (1 << 63) }
    static func signedFromOrdered(_ v: UInt64) -> Int64 { Int64(bitPattern: v ^ (1 << 63)) }

    static func taskKey(_ task: Int64) -> [UInt8] { bigEndian(orderedSigned(task)) }

    static func deviceKey(_ device: String) -> [UInt8] {
        Array(device.utf8).withUnsafeBytes { Array(SHA256.digest($0).prefix(16)) }
    }

    /// The value an index files an event under: the 16-byte position (at, seq) in
    /// `time`, the 8-byte seq everywhere else. Seqs only grow, so every new value
    /// sorts after its key's others and is appended (full pages, no search).
    static func indexValue(_ index: Index, _ at: Timestamp, _ seq: UInt64) -> [UInt8] {
        index == .time ? position(at, seq) : bigEndian(seq)
    }

    /// The 16-byte position (at, seq), the value of the `time` index.
    static func position(_ at: Timestamp, _ seq: UInt64) -> [UInt8] {
        bigEndian(orderedSigned(at.microseconds)) + bigEndian(seq)
    }

    static func decodePosition(_ bytes: UnsafeRawBufferPointer) -> Position {
        Position(
            at: Timestamp(microseconds: signedFromOrdered(readBigEndian(bytes))),
            seq: readBigEndian(bytes, at: 8))
    }

    /// Every index entry an event is filed under but `ids`: its `IndexFields` entries,
    /// and for a 410 delivery its `unregistered` entry. `notificationDevice` answers the
    /// device of a stored notification: a 410 delivery is filed under its
    /// notification's device (the dead-token rule), or its own while the notification
    /// is not stored.
    static func indexEntries(
        of event: FilingEvent, seq: UInt64, notificationDevice: (String) throws -> String?
    ) rethrows -> [(Index, [UInt8])] {
        var entries: [(Index, [UInt8])] = []
        IndexFields(event).forEachEntry(seq: seq) { slot, key, _ in
            if slot != IndexDigest.ids { entries.append((IndexDigest.index(of: slot), Array(key))) }
        }
        if event.declaresTokenDead, let ref = event.referencedNotificationID,
            let device = try notificationDevice(ref) ?? event.device
        {
            entries.append((.unregistered, deviceKey(device)))
        }
        return entries
    }

    /// Writes the event value's header (type, recorded_at, at; the hash is written once
    /// computed) into the first `eventHeaderSize` bytes of `value`.
    static func writeEventHeader(
        type: EventType, compressed: Bool = false, recordedAt: Timestamp, at: Timestamp,
        into value: UnsafeMutableRawBufferPointer
    ) {
        value[0] = compressed ? type.rawValue | compressedFlag : type.rawValue
        value.storeBytes(of: orderedSigned(recordedAt.microseconds).bigEndian, toByteOffset: 1, as: UInt64.self)
        value.storeBytes(of: orderedSigned(at.microseconds).bigEndian, toByteOffset: 9, as: UInt64.self)
    }

    /// hash(n) = SHA-256(hash(n−1) ‖ record(n)), record(n) = seq (8 bytes BE) ‖ the
    /// event value without its hash field ‖ for a compressed record, the SHA-256 of its
    /// dictionary (`dictionaryDigest`, empty otherwise).
    static func chainHash(
        previous: UnsafeRawBufferPointer, seq: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
        dictionaryDigest: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        context: SHA256.Context, into out: UnsafeMutableRawPointer
    ) {
        context.digest(
            previous, seq, UnsafeRawBufferPointer(rebasing: value[0..<17]),
            UnsafeRawBufferPointer(rebasing: value[eventHeaderSize...]), dictionaryDigest, into: out)
    }

    /// The bytes `chainHash(prefix:…)` lays out in front: hash(n−1), the seq, the
    /// header up to the hash.
    static let chainPrefixSize = 32 + 8 + hashRange.lowerBound

    /// `chainHash` for a walk over stored records: `prefix` (`chainPrefixSize` bytes)
    /// holds hash(n−1) in its first 32 bytes, which this replaces with hash(n). The seq
    /// and the header are copied in behind it, so SHA-256 takes the start of the record
    /// in one piece (three updates instead of five, for `verify`'s hot loop).
    static func chainHash(
        prefix: UnsafeMutableRawPointer, seq: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
        dictionaryDigest: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        context: SHA256.Context
    ) {
        (prefix + 32).copyMemory(from: seq.baseAddress!, byteCount: 8)
        (prefix + 40).copyMemory(from: value.baseAddress!, byteCount: hashRange.lowerBound)
        context.digest(
            UnsafeRawBufferPointer(start: prefix, count: chainPrefixSize),
            UnsafeRawBufferPointer(rebasing: value[eventHeaderSize...]), dictionaryDigest, into: prefix)
    }

    /// The event type of a record's first byte, and whether the record is compressed.
    static func recordKind(_ byte: UInt8) -> (type: EventType, compressed: Bool)? {
        guard let type = EventType(rawValue: byte & ~compressedFlag) else { return nil }
        return (type, byte & compressedFlag != 0)
    }
}
