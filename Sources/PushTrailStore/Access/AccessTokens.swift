import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a token lets its holder do: a backend that records pushes needs no reads, a
/// support desk needs no appends, and only an operator needs both.
public enum Role: String, CaseIterable, Sendable {
    case ingest, read, admin

    /// Whether the holder may ask the reading questions (everyone but an ingester).
    public var mayRead: Bool { self != .ingest }
    /// Whether the holder may append events (everyone but a reader).
    public var mayAppend: Bool { self != .read }
}

/// One access token as the store keeps it: named for revoking, and hashed, so a copy of
/// the file gives nobody a secret.
public struct AccessToken: Sendable, Equatable {
    public var name: String
    public var role: Role
    /// SHA-256 of the secret's UTF-8 bytes (32 bytes); the secret itself is never stored.
    public var hash: [UInt8]
    /// When the token was added.
    public var created: Timestamp

    /// A token with the given fields, as `load` reads them.
    public init(name: String, role: Role, hash: [UInt8], created: Timestamp) {
        self.name = name
        self.role = role
        self.hash = hash
        self.created = created
    }
}

/// The access tokens of a store, kept in the text file `tokens` in the store directory
/// so that they can be added and revoked while a server reads the events, and so an
/// operator can read the list with `cat`.
///
/// One line per token, `NAME ROLE SHA256HEX CREATED_MICROS`, after a `#` comment. Every
/// change takes an exclusive `flock` on the store directory, writes a new file (0600)
/// beside the old one, syncs it and renames it over `tokens`, then syncs the directory:
/// concurrent changes never lose one another, and a reader or a crash sees the old list
/// or the new one, never part of either.
public struct AccessTokens: Sendable, Equatable {
    /// The file's name in the store directory.
    public static let fileName = "tokens"
    public var tokens: [AccessToken]

    /// A list of `tokens`, in the file's order.
    public init(tokens: [AccessToken] = []) { self.tokens = tokens }

    /// The longest name a token may have.
    public static let maximumNameLength = 64

    /// Whether `name` can name a token: 1 to 64 of `A-Z a-z 0-9 . _ -`, so that it is one
    /// word in the file and in a log line, and never needs quoting in a shell.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maximumNameLength else { return false }
        return bytes.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }

    /// The store directory's token file; a missing file is an empty list. Throws
    /// `StoreError.io` with a one-line message for an unreadable or malformed file (naming
    /// the line), or one that group or others may read or write.
    public static func load(storePath: String) throws -> AccessTokens {
        let path = filePath(storePath)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return AccessTokens() }
            if code == ELOOP { throw StoreError.io("token file \(path) is a symbolic link: refusing to read it") }
            throw StoreError.io("cannot read token file \(path): \(String(cString: strerror(code)))")
        }
        defer { _ = close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw StoreError.io("cannot read token file \(path): \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError.io("token file \(path) is not a regular file")
        }
        if st.st_mode & 0o066 != 0 {
            throw StoreError.io(
                "token file \(path) is readable or writable by group or others "
                    + "(mode \(String(st.st_mode & 0o7777, radix: 8))): run chmod 600 \(path)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io("cannot read token file \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return try parse(bytes, path: path)
    }

    /// The token whose hash equals SHA-256(secret), compared in constant time over all
    /// tokens: how long the answer takes says nothing about which token, or how much of
    /// a hash, a guess got right.
    public func matching(secret: some Collection<UInt8>) -> AccessToken? {
        guard !secret.isEmpty else { return nil }
        let bytes = Array(secret)
        let digest = bytes.withUnsafeBytes { SHA256.digest($0) }
        var found = -1
        for (i, token) in tokens.enumerated() {
            var difference: UInt8 = token.hash.count == digest.count ? 0 : 1
            for j in 0..<digest.count {
                difference |= digest[j] ^ (j < token.hash.count ? token.hash[j] : 0)
            }
            // All ones when `difference` is 0, else zero: a select with no branch on it.
            let mask = (Int(difference) - 1) >> 8
            found = (found & ~mask) | (i & mask)
        }
        return found >= 0 ? tokens[found] : nil
    }

    /// Adds a token with a new random secret (32 bytes from the system's generator, shown
    /// as "pt_" + base64url without padding) and returns the secret, which is not stored
    /// and cannot be shown again. Refuses a name already present, or one `isValidName`
    /// refuses.
    public static func add(name: String, role: Role, storePath: String, now: Timestamp) throws -> String {
        guard isValidName(name) else {
            throw StoreError.io(
                "cannot add token \(quotedName(name)): a name is 1 to \(maximumNameLength) characters of "
                    + "A-Z, a-z, 0-9, '.', '_' and '-'")
        }
        return try changing(storePath) { list in
            if list.tokens.contains(where: { $0.name == name }) {
                throw StoreError.io("a token named \(name) already exists in \(storePath)")
            }
            let secret = try newSecret()
            let hash = Array(secret.utf8).withUnsafeBytes { SHA256.digest($0) }
            list.tokens.append(AccessToken(name: name, role: role, hash: hash, created: now))
            return (secret, true)
        }
    }

    /// Removes the token named `name`; false when there was none of that name (and the
    /// file is left as it was).
    public static func revoke(name: String, storePath: String) throws -> Bool {
        try changing(storePath) { list in
            guard let i = list.tokens.firstIndex(where: { $0.name == name }) else { return (false, false) }
            list.tokens.remove(at: i)
            return (true, true)
        }
    }

    // MARK: - The file

    static let header = """
        # pushtrail access tokens, one a line: NAME ROLE SHA256HEX CREATED_MICROS
        # The hash is SHA-256 of the secret, which is not stored. Change with pushtrail token add/revoke.

        """

    static func filePath(_ storePath: String) -> String { storePath + "/" + fileName }

    /// The file's text for `tokens`.
    func serialized() -> [UInt8] {
        var out = AccessTokens.header
        for t in tokens { out += "\(t.name) \(t.role.rawValue) \(SHA256.hex(t.hash)) \(t.created.microseconds)\n" }
        return Array(out.utf8)
    }

    /// Reads the file's lines; `#` comments and blank lines are skipped.
    static func parse(_ bytes: [UInt8], path: String) throws -> AccessTokens {
        var list = AccessTokens()
        var number = 0
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var line = raw
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            func bad(_ why: String) -> StoreError {
                StoreError.io("token file \(path) line \(number): \(why)")
            }
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 4 else {
                throw bad("expected NAME ROLE SHA256HEX CREATED_MICROS, found \(fields.count) fields")
            }
            let name = String(decoding: fields[0], as: UTF8.self)
            guard isValidName(name) else { throw bad("\(quotedName(name)) is not a token name") }
            guard !list.tokens.contains(where: { $0.name == name }) else { throw bad("\(name) is listed twice") }
            let roleText = String(decoding: fields[1], as: UTF8.self)
            guard let role = Role(rawValue: roleText) else {
                throw bad("\(quotedName(roleText)) is not a role (ingest, read or admin)")
            }
            guard let hash = hexBytes(fields[2]), hash.count == 32 else {
                throw bad("the hash is not 64 hexadecimal digits")
            }
            guard fields[3].allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }),
                let micros = Int64(String(decoding: fields[3], as: UTF8.self))
            else {
                throw bad("the creation time is not a number of microseconds")
            }
            let created = Timestamp(microseconds: micros)
            list.tokens.append(AccessToken(name: name, role: role, hash: hash, created: created))
        }
        return list
    }

    /// The bytes 64 hex digits spell, or nil.
    private static func hexBytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        func digit(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var i = text.startIndex
        while i < text.endIndex {
            guard let high = digit(text[i]), let low = digit(text[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// A name as shown in a message: printable ASCII as it is, anything else escaped,
    /// cut at 80 characters, so a hostile name cannot forge or wreck the line.
    private static func quotedName(_ name: String) -> String {
        var out = "\""
        for scalar in name.unicodeScalars.prefix(80) {
            if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "\\" {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return out + (name.unicodeScalars.count > 80 ? "…\"" : "\"")
    }

    // MARK: - Changing the file

    /// Runs `change` on the current list holding the directory's `flock`, and writes the
    /// list back when it says so: `change` returns its answer and whether to write.
    private static func changing<R>(
        _ storePath: String, _ change: (inout AccessTokens) throws -> (R, write: Bool)
    ) throws -> R {
        let dir = open(storePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else {
            throw StoreError.io("cannot open store directory \(storePath): \(String(cString: strerror(errno)))")
        }
        defer { _ = close(dir) }
        while flock(dir, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw StoreError.io("cannot lock store directory \(storePath): \(String(cString: strerror(errno)))")
            }
        }
        defer { _ = flock(dir, LOCK_UN) }
        var list = try load(storePath: storePath)
        let (answer, write) = try change(&list)
        if write { try replace(storePath, dir: dir, with: list.serialized()) }
        return answer
    }

    /// Writes `bytes` as the new token file: a 0600 file beside it, synced, renamed over
    /// it, and the directory synced so the new name survives a power cut. Called with the
    /// directory's `flock` held, so the scratch name is this process's alone.
    private static func replace(_ storePath: String, dir: Int32, with bytes: [UInt8]) throws {
        let path = filePath(storePath)
        let scratch = path + ".new"
        // Left by a writer that died between creating and renaming it.
        _ = unlink(scratch)
        let fd = open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw StoreError.io("cannot write \(scratch): \(String(cString: strerror(errno)))")
        }
        var failure: String?
        if fchmod(fd, 0o600) != 0 { failure = String(cString: strerror(errno)) }
        var off = 0
        while failure == nil && off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
            } else {
                off += n
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        if close(fd) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        if let failure {
            _ = unlink(scratch)
            throw StoreError.io("cannot write \(scratch): \(failure)")
        }
        guard rename(scratch, path) == 0 else {
            let why = String(cString: strerror(errno))
            _ = unlink(scratch)
            throw StoreError.io("cannot replace token file \(path): \(why)")
        }
        _ = fsync(dir)
    }

    // MARK: - Secrets

    /// "pt_" and 32 random bytes in base64url without padding (43 characters).
    private static func newSecret() throws -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        try bytes.withUnsafeMutableBytes { try randomBytes($0) }
        return "pt_" + base64URL(bytes)
    }

    /// Fills `buffer` from the system's generator: on Linux getentropy (the getrandom
    /// call), else `/dev/urandom` on a kernel without it; on macOS arc4random_buf, which
    /// the kernel's entropy seeds and which cannot fail.
    private static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
        #if canImport(Darwin)
            arc4random_buf(buffer.baseAddress, buffer.count)
            return
        #else
            if getentropy(buffer.baseAddress, buffer.count) == 0 { return }
            try readURandom(buffer)
        #endif
    }

    /// Fills `buffer` from `/dev/urandom`.
    private static func readURandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError.io("cannot read /dev/urandom: \(String(cString: strerror(errno)))")
        }
        defer { _ = close(fd) }
        var off = 0
        while off < buffer.count {
            let n = read(fd, buffer.baseAddress! + off, buffer.count - off)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw StoreError.io("cannot read /dev/urandom: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    /// RFC 4648 §5 base64url, without `=` padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var group = UInt32(bytes[i]) << 16
            if n > 1 { group |= UInt32(bytes[i + 1]) << 8 }
            if n > 2 { group |= UInt32(bytes[i + 2]) }
            for k in 0...n { out.append(alphabet[Int((group >> UInt32(18 - 6 * k)) & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
