import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who may do what: the store's access tokens (`pushtrail token`), re-read whenever
/// the token file changes (so `add` and `revoke` take effect without a restart), and
/// the browser sessions `/login` opens. Secrets are compared by their SHA-256 only and
/// never kept, logged or repeated.
final class Access: @unchecked Sendable {
    /// A request's credentials, judged.
    enum Verdict: Equatable {
        /// Allowed, with this role.
        case allowed(Role)
        /// No credentials, or wrong ones: 401.
        case unauthenticated
        /// With no token defined, a client on another host: refused.
        case remoteWithoutTokens
        /// The token file cannot be read: nobody is let in until it can.
        case unreadable(String)
    }

    static let cookieName = "pushtrail_session"
    /// How long a browser session lasts.
    static let sessionSeconds: Int64 = 12 * 3600

    let storePath: String
    private let monitor = Monitor()
    private var tokens: Result<AccessTokens, StoreError> = .success(AccessTokens(tokens: []))
    /// The token file as last read: its inode, size and change time.
    private var stamp: [Int64] = []
    private struct Session {
        var token: String
        var hash: [UInt8]
        var expires: Int64
    }
    /// Set once any token has been defined: from then on every request needs one, even
    /// after the last is revoked (which must not open the server).
    private var required = false
    /// Sessions by the SHA-256 of their cookie value.
    private var sessions: [[UInt8]: Session] = [:]

    init(storePath: String) {
        self.storePath = storePath
        refresh()
    }

    /// Whether any token is defined (re-reading the file if it changed).
    var hasTokens: Bool {
        refresh()
        return monitor.locked { (try? tokens.get())?.tokens.isEmpty == false }
    }

    /// The verdict on a request's credentials: a bearer token, else the session cookie.
    func verdict(for request: HTTPRequest, now: Timestamp) -> Verdict {
        refresh()
        return monitor.locked {
            let defined: AccessTokens
            switch tokens {
            case .failure(let error): return .unreadable(error.description)
            case .success(let t): defined = t
            }
            if !defined.tokens.isEmpty { required = true }
            if !required {
                // Open to this host only; a request a proxy forwarded comes from elsewhere.
                let forwarded = request.header("x-forwarded-for") != nil || request.header("forwarded") != nil
                return request.clientIsLoopback && !forwarded ? .allowed(.admin) : .remoteWithoutTokens
            }
            if let authorization = request.header("authorization") {
                let parts = authorization.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "bearer",
                    let token = defined.matching(secret: Array(parts[1].utf8))
                else { return .unauthenticated }
                return .allowed(token.role)
            }
            guard let cookie = Access.cookie(Access.cookieName, in: request.header("cookie")),
                let session = sessions[Access.digest(cookie)]
            else { return .unauthenticated }
            guard session.expires > now.microseconds,
                let token = defined.tokens.first(where: { $0.name == session.token && $0.hash == session.hash })
            else {
                sessions[Access.digest(cookie)] = nil
                return .unauthenticated
            }
            return .allowed(token.role)
        }
    }

    /// Opens a session for `secret` when it is a token's: the cookie value, else nil.
    func openSession(secret: String, now: Timestamp) -> String? {
        refresh()
        return monitor.locked {
            guard let defined = try? tokens.get(), let token = defined.matching(secret: Array(secret.utf8)) else {
                return nil
            }
            let value = Access.randomHex(32)
            sessions = sessions.filter { $0.value.expires > now.microseconds }
            sessions[Access.digest(value)] = Session(
                token: token.name, hash: token.hash, expires: now.microseconds + Access.sessionSeconds * 1_000_000)
            return value
        }
    }

    /// Ends the session of a request's cookie, if any.
    func closeSession(of request: HTTPRequest) {
        guard let cookie = Access.cookie(Access.cookieName, in: request.header("cookie")) else { return }
        _ = monitor.locked { sessions.removeValue(forKey: Access.digest(cookie)) }
    }

    /// Re-reads the token file when it changed since it was last read.
    private func refresh() {
        var st = stat()
        let path = storePath + "/" + AccessTokens.fileName
        let found = stat(path, &st) == 0
        #if canImport(Glibc)
            let changed = st.st_ctim
        #else
            let changed = st.st_ctimespec
        #endif
        let now: [Int64] =
            found
            ? [Int64(st.st_ino), Int64(st.st_size), Int64(changed.tv_sec), Int64(changed.tv_nsec)] : []
        monitor.locked {
            guard now != stamp else { return }
            stamp = now
            do {
                tokens = .success(try AccessTokens.load(storePath: storePath))
            } catch let error as StoreError {
                tokens = .failure(error)
            } catch {
                tokens = .failure(.io("cannot read \(path): \(error)"))
            }
        }
    }

    /// The value of cookie `name` in a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            if trimmed.hasPrefix(name + "=") { return String(trimmed.dropFirst(name.count + 1)) }
        }
        return nil
    }

    /// The SHA-256 of a secret's text.
    static func digest(_ text: String) -> [UInt8] {
        Array(text.utf8).withUnsafeBytes { SHA256.digest($0) }
    }

    /// `bytes` random bytes in hex, from the system's secure generator (`getrandom`).
    static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return SHA256.hex((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
