import CLMDB

/// An LMDB return code turned into a Swift error; every LMDB call in this module goes
/// through `check(_:_:)`, so no failure is ever silently ignored.
public struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The raw return code: one of LMDB's `MDB_*` codes or an `errno` value.
    public let code: Int32
    /// The LMDB function (or step) that failed, for the message.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    public var description: String {
        "\(operation): \(String(cString: mdb_strerror(code)))"
    }

    /// The map (the store's maximum size) is full; the environment can grow it.
    public var isMapFull: Bool { code == MDB_MAP_FULL }
    /// Another process grew the map beyond ours.
    public var isMapResized: Bool { code == MDB_MAP_RESIZED }
    /// The file is not an LMDB environment, or it is damaged.
    public var isCorruption: Bool {
        code == MDB_INVALID || code == MDB_CORRUPTED || code == MDB_PAGE_NOTFOUND
            || code == MDB_VERSION_MISMATCH || code == MDB_PANIC || code == MDB_INCOMPATIBLE
    }
    /// A `put` with `noOverwrite` found the key already there.
    public var isKeyExists: Bool { code == MDB_KEYEXIST }
}

/// Turns an LMDB return code into a thrown `LMDBError`; the single checker for the module.
@inline(__always)
func check(_ code: Int32, _ operation: @autoclosure () -> String) throws {
    if code != MDB_SUCCESS {
        throw LMDBError(code: code, operation: operation())
    }
}
