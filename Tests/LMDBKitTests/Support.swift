import Foundation
import LMDBKit

/// Runs `body` with a fresh private directory (mode 0700) that is removed afterwards.
func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    var template = Array((NSTemporaryDirectory() + "/lmdbkit-tests-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Opens an environment in `path` with one plain database named "kv".
func openEnvironment(
    _ path: String, options: EnvironmentOptions = EnvironmentOptions(), name: String = "kv",
    flags: DatabaseFlags = []
) throws -> (Environment, Database) {
    let env = try Environment(path: path, options: options)
    let db = try env.openDatabases { txn in try env.openDatabase(name, flags: flags, create: true, in: txn) }
    return (env, db)
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ buffer: UnsafeRawBufferPointer) -> String { String(decoding: buffer, as: UTF8.self) }

/// The key of a cursor entry as text, or nil when the cursor found nothing.
func key(_ entry: Entry?) -> String? { entry.map { text($0.key) } }

/// The value of a cursor entry as text, or nil when the cursor found nothing.
func value(_ entry: Entry?) -> String? { entry.map { text($0.value) } }

/// The value stored at `key` as text, copied out of the map.
func stored(_ db: Database, _ key: String, in txn: Transaction) throws -> String? {
    try db.get(bytes(key), in: txn).map(text)
}

/// An 8-byte big-endian number, the fixed-size duplicate values the tests use.
func be64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }

func readBE64(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
    UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
}

struct Boom: Error {}
