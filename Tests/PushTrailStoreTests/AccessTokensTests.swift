import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

/// The token file: what `add` stores (a hash, never the secret), what `load` accepts,
/// and that concurrent changes never lose one another.
@Suite("Access tokens")
struct AccessTokensTests {
    static let created = Timestamp(microseconds: 1_796_117_400_000_000)

    /// The `StoreError.io` message `body` throws, or nil when it throws nothing.
    static func ioMessage(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch StoreError.io(let message) {
            return message
        } catch {
            Issue.record("not StoreError.io: \(error)")
            return nil
        }
    }

    /// The token file of `dir` as text.
    static func file(_ dir: String) throws -> String {
        try String(contentsOfFile: dir + "/" + AccessTokens.fileName, encoding: .utf8)
    }

    @Test("tokens added are listed in order with their role and time, and a revoked one is gone")
    func roundTrip() throws {
        try withTemporaryDirectory { dir in
            #expect(try AccessTokens.load(storePath: dir) == AccessTokens(), "no file is an empty list")
            let ci = try AccessTokens.add(name: "ci", role: .ingest, storePath: dir, now: Self.created)
            let later = Timestamp(microseconds: Self.created.microseconds + 1)
            let desk = try AccessTokens.add(name: "support.desk_1", role: .read, storePath: dir, now: later)
            _ = try AccessTokens.add(name: "ops", role: .admin, storePath: dir, now: later)
            let list = try AccessTokens.load(storePath: dir)
            #expect(list.tokens.map(\.name) == ["ci", "support.desk_1", "ops"])
            #expect(list.tokens.map(\.role) == [.ingest, .read, .admin])
            #expect(list.tokens.map(\.created) == [Self.created, later, later])
            #expect(list.tokens.allSatisfy { $0.hash.count == 32 })
            #expect(list.matching(secret: Array(ci.utf8))?.name == "ci")
            #expect(list.matching(secret: Array(desk.utf8))?.name == "support.desk_1")

            #expect(try AccessTokens.revoke(name: "support.desk_1", storePath: dir))
            let after = try AccessTokens.load(storePath: dir)
            #expect(after.tokens.map(\.name) == ["ci", "ops"])
            #expect(after.matching(secret: Array(desk.utf8)) == nil, "a revoked secret no longer matches")
            #expect(after.matching(secret: Array(ci.utf8))?.name == "ci")
        }
    }

    @Test("the file is one line per token after a comment, NAME ROLE SHA256HEX CREATED_MICROS")
    func fileFormat() throws {
        try withTemporaryDirectory { dir in
            let secret = try AccessTokens.add(name: "ci", role: .ingest, storePath: dir, now: Self.created)
            let lines = try Self.file(dir).split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 4 && lines.last == "", "\(lines)")
            #expect(lines[0] == "# pushtrail access tokens, one a line: NAME ROLE SHA256HEX CREATED_MICROS")
            #expect(lines[1].hasPrefix("# "))
            let hex = SHA256.hex(Array(secret.utf8).withUnsafeBytes { SHA256.digest($0) })
            #expect(lines[2] == "ci ingest \(hex) 1796117400000000")
        }
    }

    @Test("the token file is 0600, and a change leaves no scratch file behind")
    func fileMode() throws {
        try withTemporaryDirectory { dir in
            _ = try AccessTokens.add(name: "a", role: .read, storePath: dir, now: Self.created)
            #expect(TestSupport.fileMode(dir + "/tokens") == 0o600)
            _ = try AccessTokens.add(name: "b", role: .read, storePath: dir, now: Self.created)
            _ = try AccessTokens.revoke(name: "a", storePath: dir)
            #expect(TestSupport.fileMode(dir + "/tokens") == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["tokens"])
        }
    }

    @Test("a token file readable or writable by group or others is refused, with the chmod that fixes it")
    func groupReadableRefused() throws {
        try withTemporaryDirectory { dir in
            _ = try AccessTokens.add(name: "a", role: .read, storePath: dir, now: Self.created)
            for mode: mode_t in [0o640, 0o620, 0o604, 0o602] {
                chmod(dir + "/tokens", mode)
                let message = Self.ioMessage { _ = try AccessTokens.load(storePath: dir) }
                #expect(
                    message
                        == "token file \(dir)/tokens is readable or writable by group or others "
                        + "(mode \(String(mode, radix: 8))): run chmod 600 \(dir)/tokens")
                #expect(
                    Self.ioMessage {
                        _ = try AccessTokens.add(name: "b", role: .read, storePath: dir, now: Self.created)
                    }
                        == message, "a change is refused too")
            }
            chmod(dir + "/tokens", 0o600)
            #expect(try AccessTokens.load(storePath: dir).tokens.count == 1)
        }
    }

    @Test("a name already present is refused and the file is unchanged")
    func duplicateName() throws {
        try withTemporaryDirectory { dir in
            let first = try AccessTokens.add(name: "ci", role: .ingest, storePath: dir, now: Self.created)
            let before = try Self.file(dir)
            let message = Self.ioMessage {
                _ = try AccessTokens.add(name: "ci", role: .admin, storePath: dir, now: Self.created)
            }
            #expect(message == "a token named ci already exists in \(dir)")
            #expect(try Self.file(dir) == before)
            #expect(try AccessTokens.load(storePath: dir).matching(secret: Array(first.utf8))?.role == .ingest)
        }
    }

    @Test("a name that is empty, too long, or has characters outside A-Z a-z 0-9 . _ - is refused")
    func badNames() throws {
        try withTemporaryDirectory { dir in
            let bad = [
                "", "a b", "tab\there", "new\nline", "x/y", "#x", "é", "a:b", "a=b", String(repeating: "n", count: 65),
            ]
            for name in bad {
                #expect(!AccessTokens.isValidName(name), "\(name)")
                let message = Self.ioMessage {
                    _ = try AccessTokens.add(name: name, role: .read, storePath: dir, now: Self.created)
                }
                #expect(message?.contains("a name is 1 to 64 characters of A-Z, a-z, 0-9") == true, "\(name)")
                #expect(message?.contains("\n") == false, "one line for \(name.debugDescription)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir + "/tokens"), "nothing was written")
            for name in ["a", "A.b_c-9", String(repeating: "n", count: 64)] {
                #expect(AccessTokens.isValidName(name), "\(name)")
                _ = try AccessTokens.add(name: name, role: .read, storePath: dir, now: Self.created)
            }
            #expect(try AccessTokens.load(storePath: dir).tokens.count == 3)
        }
    }

    @Test("matching finds the token of the right secret only: not a wrong, altered, truncated or empty one")
    func matching() throws {
        try withTemporaryDirectory { dir in
            var secrets: [String] = []
            for (i, role) in Role.allCases.enumerated() {
                secrets.append(try AccessTokens.add(name: "t\(i)", role: role, storePath: dir, now: Self.created))
            }
            let list = try AccessTokens.load(storePath: dir)
            for (i, secret) in secrets.enumerated() {
                #expect(list.matching(secret: Array(secret.utf8)) == list.tokens[i])
                #expect(list.matching(secret: secret.utf8) == list.tokens[i], "any collection of bytes")
                var altered = Array(secret.utf8)
                altered[altered.count - 1] ^= 1
                #expect(list.matching(secret: altered) == nil)
                #expect(list.matching(secret: Array(secret.utf8.dropLast())) == nil)
                #expect(list.matching(secret: Array((secret + "x").utf8)) == nil)
            }
            #expect(list.matching(secret: [UInt8]()) == nil)
            #expect(list.matching(secret: Array("pt_".utf8)) == nil)
            #expect(AccessTokens().matching(secret: Array(secrets[0].utf8)) == nil, "no tokens, no match")
            // A token whose hash is the empty string's still does not let an empty secret in.
            let empty = [UInt8]().withUnsafeBytes { SHA256.digest($0) }
            let planted = AccessTokens(tokens: [
                AccessToken(name: "e", role: .admin, hash: empty, created: Self.created)
            ])
            #expect(planted.matching(secret: [UInt8]()) == nil)
        }
    }

    @Test("a secret is pt_ and 43 base64url characters (32 random bytes), new each time")
    func secretShape() throws {
        try withTemporaryDirectory { dir in
            var seen: Set<String> = []
            for i in 0..<20 {
                let secret = try AccessTokens.add(name: "t\(i)", role: .read, storePath: dir, now: Self.created)
                #expect(secret.hasPrefix("pt_"))
                let body = secret.utf8.dropFirst(3)
                #expect(body.count == 43, "\(secret)")
                #expect(
                    body.allSatisfy {
                        (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                            || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                    }, "\(secret)")
                seen.insert(secret)
            }
            #expect(seen.count == 20)
        }
    }

    @Test("base64url follows RFC 4648's test vectors, with - and _ and no padding")
    func base64URL() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors { #expect(AccessTokens.base64URL(Array(plain.utf8)) == encoded) }
        #expect(AccessTokens.base64URL([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(AccessTokens.base64URL([0xFF]) == "_w")
    }

    @Test("the secret is nowhere in the file: neither whole nor its random part")
    func secretNotStored() throws {
        try withTemporaryDirectory { dir in
            var secrets: [String] = []
            for i in 0..<5 {
                secrets.append(try AccessTokens.add(name: "t\(i)", role: .admin, storePath: dir, now: Self.created))
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/tokens"))
            for secret in secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil)
                #expect(bytes.range(of: Data(secret.utf8.dropFirst(3).prefix(16))) == nil)
            }
        }
    }

    @Test("a malformed line is refused with one line naming the file, the line number and what is wrong")
    func malformedLines() throws {
        let hash = String(repeating: "ab", count: 32)
        let cases: [(String, String)] = [
            ("ci ingest \(hash)", "expected NAME ROLE SHA256HEX CREATED_MICROS, found 3 fields"),
            ("ci ingest \(hash) 1 extra", "expected NAME ROLE SHA256HEX CREATED_MICROS, found 5 fields"),
            ("ci  ingest \(hash) 1", "expected NAME ROLE SHA256HEX CREATED_MICROS, found 5 fields"),
            ("ci writer \(hash) 1", "\"writer\" is not a role (ingest, read or admin)"),
            ("ci ingest \(hash.dropLast(2)) 1", "the hash is not 64 hexadecimal digits"),
            ("ci ingest \(hash.dropLast())g 1", "the hash is not 64 hexadecimal digits"),
            ("ci ingest \(hash) soon", "the creation time is not a number of microseconds"),
            ("ci ingest \(hash) 99999999999999999999", "the creation time is not a number of microseconds"),
            ("c/i ingest \(hash) 1", "\"c/i\" is not a token name"),
            ("ok read \(hash) 1\nok read \(hash) 2", "ok is listed twice"),
        ]
        try withTemporaryDirectory { dir in
            for (line, why) in cases {
                try writeFile(dir + "/tokens", Array("# comment\n\nfine admin \(hash) 5\n\(line)\n".utf8))
                let message = Self.ioMessage { _ = try AccessTokens.load(storePath: dir) }
                let number = line.contains("\n") ? 5 : 4
                #expect(message == "token file \(dir)/tokens line \(number): \(why)", "\(line)")
            }
            try writeFile(dir + "/tokens", Array("fine admin \(hash.uppercased()) -5\r\n# end\n".utf8))
            let list = try AccessTokens.load(storePath: dir)
            #expect(list.tokens.first?.hash == [UInt8](repeating: 0xAB, count: 32), "upper-case hex and CR LF read")
            #expect(list.tokens.first?.created == Timestamp(microseconds: -5))
        }
    }

    @Test("a token file that is a symbolic link or not a file is refused")
    func notAFile() throws {
        try withTemporaryDirectory { dir in
            try writeFile(dir + "/elsewhere", Array("# nothing\n".utf8))
            symlink(dir + "/elsewhere", dir + "/tokens")
            #expect(
                Self.ioMessage { _ = try AccessTokens.load(storePath: dir) }
                    == "token file \(dir)/tokens is a symbolic link: refusing to read it")
            unlink(dir + "/tokens")
            mkdir(dir + "/tokens", 0o700)
            #expect(
                Self.ioMessage { _ = try AccessTokens.load(storePath: dir) }
                    == "token file \(dir)/tokens is not a regular file")
        }
    }

    @Test("revoking a name that is not there answers false and leaves the file as it was")
    func revokeMissing() throws {
        try withTemporaryDirectory { dir in
            #expect(try !AccessTokens.revoke(name: "ghost", storePath: dir))
            #expect(!FileManager.default.fileExists(atPath: dir + "/tokens"), "no file is made for nothing")
            _ = try AccessTokens.add(name: "ci", role: .read, storePath: dir, now: Self.created)
            let before = try Self.file(dir)
            #expect(try !AccessTokens.revoke(name: "ghost", storePath: dir))
            #expect(try Self.file(dir) == before)
        }
    }

    @Test("a scratch file left by a writer that died does not block the next change")
    func staleScratch() throws {
        try withTemporaryDirectory { dir in
            try writeFile(dir + "/tokens.new", Array("half a file".utf8))
            _ = try AccessTokens.add(name: "ci", role: .read, storePath: dir, now: Self.created)
            #expect(try AccessTokens.load(storePath: dir).tokens.map(\.name) == ["ci"])
            #expect(!FileManager.default.fileExists(atPath: dir + "/tokens.new"))
        }
    }

    @Test("a store directory that does not exist is an error, not a new directory")
    func missingDirectory() throws {
        try withTemporaryDirectory { dir in
            let message = Self.ioMessage {
                _ = try AccessTokens.add(name: "ci", role: .read, storePath: dir + "/none", now: Self.created)
            }
            #expect(message?.hasPrefix("cannot open store directory \(dir)/none: ") == true, "\(message ?? "")")
            #expect(!FileManager.default.fileExists(atPath: dir + "/none"))
        }
    }

    /// What the adding threads report, behind a lock.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var secrets: [String: String] = [:]
        private(set) var failures: [String] = []

        func added(_ name: String, _ secret: String) { lock.withLock { secrets[name] = secret } }
        func failed(_ name: String, _ error: any Error) { lock.withLock { failures.append("\(name): \(error)") } }
    }

    @Test("adds from eight threads at once lose no token: each change holds the directory's flock")
    func concurrentAdds() throws {
        try withTemporaryDirectory { dir in
            let threads = 8
            let each = 12
            let results = Results()
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for i in 0..<each {
                    let name = "t\(t)-\(i)"
                    do {
                        let secret = try AccessTokens.add(name: name, role: .ingest, storePath: dir, now: Self.created)
                        results.added(name, secret)
                    } catch {
                        results.failed(name, error)
                    }
                }
            }
            #expect(results.failures.isEmpty, "\(results.failures)")
            let list = try AccessTokens.load(storePath: dir)
            #expect(list.tokens.count == threads * each)
            #expect(Set(list.tokens.map(\.name)) == Set(results.secrets.keys))
            for (name, secret) in results.secrets { #expect(list.matching(secret: Array(secret.utf8))?.name == name) }
        }
    }

    @Test("ingest tokens may append but not read, read tokens the reverse, admin tokens both")
    func roles() {
        #expect(Role.allCases.map(\.rawValue) == ["ingest", "read", "admin"])
        #expect(Role.allCases.map(\.mayAppend) == [true, false, true])
        #expect(Role.allCases.map(\.mayRead) == [false, true, true])
    }
}
