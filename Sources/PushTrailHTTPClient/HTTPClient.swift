import CCurl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP request for `HTTPClient.perform`.
public struct HTTPClientRequest: Sendable {
    /// An `http://` or `https://` URL; redirects are not followed.
    public var url: String
    /// GET, HEAD, POST, or any other method token (sent as is).
    public var method: String
    /// Sent in order. An empty value sends the header with no value.
    public var headers: [(String, String)]
    /// Sent with the method (POST, or any method but HEAD), with a Content-Length. No
    /// Content-Type is sent unless `headers` has one.
    public var body: [UInt8]?
    /// Seconds for the whole transfer, connecting included.
    public var timeout: Double
    /// Seconds for resolving and connecting (the TLS handshake included).
    public var connectTimeout: Double
    /// A PEM bundle of extra CA certificates (a self-signed server's own certificate),
    /// used instead of the system's. TLS peers and host names are always verified.
    public var caFile: String?
    /// A longer reply body is an error, not a reply.
    public var maxBodyBytes: Int

    public init(
        url: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: Double = 30, connectTimeout: Double = 10, caFile: String? = nil, maxBodyBytes: Int = 1 << 30
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.caFile = caFile
        self.maxBodyBytes = maxBodyBytes
    }
}

/// A server's answer, whatever its status: a 4xx or 5xx carries the server's
/// `{"error": "…"}` body for the caller to read.
public struct HTTPClientReply: Sendable {
    public var status: Int
    public var body: [UInt8]
    public var contentType: String?

    public init(status: Int, body: [UInt8], contentType: String?) {
        self.status = status
        self.body = body
        self.contentType = contentType
    }
}

/// A request that got no answer. `description` is one line ("connection refused",
/// "timed out after 5 s", "TLS: SSL certificate problem: self-signed certificate"…),
/// and never holds the URL's query or user information, nor any header value.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// Runs requests concurrently over libcurl, each with its own connection.
public enum HTTPClient {
    /// Runs every request at once on one curl multi handle and returns their outcomes in
    /// the requests' order. Blocks until the last one finishes or times out.
    public static func perform(_ requests: [HTTPClientRequest]) -> [Result<HTTPClientReply, HTTPClientError>] {
        if requests.isEmpty { return [] }
        if let failure = globalInitFailure { return requests.map { _ in .failure(failure) } }
        guard let multi = curl_multi_init() else {
            let failure = HTTPClientError(description: "libcurl: could not make a multi handle")
            return requests.map { _ in .failure(failure) }
        }
        var results: [Result<HTTPClientReply, HTTPClientError>?] = Array(repeating: nil, count: requests.count)
        var transfers: [Transfer] = []
        var byHandle: [UnsafeMutableRawPointer: (index: Int, transfer: Transfer)] = [:]
        var added: Set<UnsafeMutableRawPointer> = []
        for (i, request) in requests.enumerated() {
            switch Transfer.make(request) {
            case .failure(let error):
                results[i] = .failure(error)
            case .success(let transfer):
                transfers.append(transfer)
                byHandle[transfer.handle] = (i, transfer)
                let code = curl_multi_add_handle(multi, transfer.handle)
                if code == CURLM_OK {
                    added.insert(transfer.handle)
                } else {
                    results[i] = .failure(HTTPClientError(description: "libcurl: " + multiError(code)))
                }
            }
        }
        var running: Int32 = 0
        var failure: String?
        while !added.isEmpty {
            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK {
                failure = "libcurl: " + multiError(performed)
                break
            }
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                    let (i, transfer) = byHandle[handle]
                else { continue }
                let code = message.pointee.data.result  // read before the handle (and message) go
                results[i] = transfer.finish(code)
                curl_multi_remove_handle(multi, handle)
                added.remove(handle)
            }
            if added.isEmpty || running == 0 { break }
            let polled = curl_multi_poll(multi, nil, 0, 1000, nil)
            if polled != CURLM_OK {
                failure = "libcurl: " + multiError(polled)
                break
            }
        }
        for handle in added { curl_multi_remove_handle(multi, handle) }
        curl_multi_cleanup(multi)
        for transfer in transfers { transfer.close() }
        return results.map {
            $0 ?? .failure(HTTPClientError(description: failure ?? "libcurl: the transfer did not finish"))
        }
    }

    private static func multiError(_ code: CURLMcode) -> String {
        String(cString: curl_multi_strerror(code))
    }
}

/// `curl_global_init` runs once, on first use (a global is initialised once, atomically).
private let globalInitFailure: HTTPClientError? = {
    let code = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    if code == CURLE_OK { return nil }
    return HTTPClientError(description: "libcurl did not start: " + String(cString: curl_easy_strerror(code)))
}()

/// One easy handle and what lives as long as its transfer: the header list, the copy of
/// the body curl sends from, the error buffer, and the reply body as it arrives.
private final class Transfer {
    let request: HTTPClientRequest
    let handle: UnsafeMutableRawPointer
    var headerList: UnsafeMutablePointer<curl_slist>?
    var postCopy: UnsafeMutableRawPointer?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    var body: [UInt8] = []
    var overLimit = false

    private init(request: HTTPClientRequest, handle: UnsafeMutableRawPointer) {
        self.request = request
        self.handle = handle
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Frees the handle and what it used; after it is out of the multi handle.
    func close() {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        free(postCopy)
        errorBuffer.deallocate()
    }

    static func make(_ request: HTTPClientRequest) -> Result<Transfer, HTTPClientError> {
        if let problem = check(request) { return .failure(HTTPClientError(description: problem)) }
        guard let handle = curl_easy_init() else {
            return .failure(HTTPClientError(description: "libcurl: could not make an easy handle"))
        }
        let transfer = Transfer(request: request, handle: handle)
        if let problem = transfer.configure() {
            transfer.close()
            return .failure(HTTPClientError(description: problem))
        }
        return .success(transfer)
    }

    /// What makes a request unsendable, said without its secrets; nil when it is fine.
    private static func check(_ request: HTTPClientRequest) -> String? {
        let url = request.url.lowercased()
        if !url.hasPrefix("http://") && !url.hasPrefix("https://") {
            return "unsupported URL: only http:// and https:// are fetched"
        }
        if request.url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "bad URL: it has a space or a control character"
        }
        if !isToken(request.method) { return "bad method: not an HTTP token" }
        if request.method == "HEAD" && request.body != nil { return "a HEAD request has no body" }
        for (name, value) in request.headers {
            if !isToken(name) { return "bad header name: not an HTTP token" }
            if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
                return "header \(name): its value has a line break or a NUL"
            }
        }
        return nil
    }

    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                    || "!#$%&'*+-.^_`|~".utf8.contains(c)
            }
    }

    /// Sets every option; the text of the first one libcurl refuses, or nil.
    private func configure() -> String? {
        var refused: String?
        func set(_ what: String, _ code: CURLcode) {
            if code != CURLE_OK && refused == nil {
                refused = "libcurl refused \(what): " + String(cString: curl_easy_strerror(code))
            }
        }
        set("the URL", pt_curl_setopt_str(handle, CURLOPT_URL, request.url))
        set("the error buffer", pt_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        // Threads, not signals: libcurl must not use SIGALRM for resolver time-outs.
        set("no signals", pt_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        set("no redirects", pt_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        set("the timeout", pt_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(request.timeout)))
        set(
            "the connect timeout",
            pt_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout)))
        set("peer verification", pt_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        set("host verification", pt_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let caFile = request.caFile { set("the CA file", pt_curl_setopt_str(handle, CURLOPT_CAINFO, caFile)) }
        set("the user agent", pt_curl_setopt_str(handle, CURLOPT_USERAGENT, "pushtrail"))
        // A Content-Length over the limit is refused before the body comes; a body
        // without one is cut by the write callback.
        set(
            "the body limit",
            pt_curl_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, request.maxBodyBytes))))
        set("the write callback", pt_curl_setopt_write_cb(handle, CURLOPT_WRITEFUNCTION, receive))
        set(
            "the write context",
            pt_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()))

        switch (request.method, request.body) {
        case ("GET", nil):
            set("GET", pt_curl_setopt_long(handle, CURLOPT_HTTPGET, 1))
        case ("HEAD", _):
            set("HEAD", pt_curl_setopt_long(handle, CURLOPT_NOBODY, 1))
        case (let method, let body) where method == "POST" || body != nil:
            // curl sends from this copy as the transfer goes (POSTFIELDS does not copy);
            // an empty POST still gets a pointer, or curl would read its body from stdin.
            let bytes = body ?? []
            postCopy = malloc(max(1, bytes.count))
            guard let postCopy else { return "out of memory for the request body" }
            bytes.withUnsafeBytes { if let base = $0.baseAddress { memcpy(postCopy, base, bytes.count) } }
            set("the body size", pt_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)))
            set("the body", pt_curl_setopt_ptr(handle, CURLOPT_POSTFIELDS, postCopy))
            if method != "POST" { set("the method", pt_curl_setopt_str(handle, CURLOPT_CUSTOMREQUEST, method)) }
        case (let method, _):
            set("the method", pt_curl_setopt_str(handle, CURLOPT_CUSTOMREQUEST, method))
        }

        var lines = request.headers.map { $0.1.isEmpty ? "\($0.0);" : "\($0.0): \($0.1)" }
        let names = Set(request.headers.map { $0.0.lowercased() })
        // The body is in memory: no waiting for a 100 Continue before sending it.
        if !names.contains("expect") { lines.append("Expect:") }
        // Not curl's application/x-www-form-urlencoded: the caller says what it sends.
        if postCopy != nil && !names.contains("content-type") { lines.append("Content-Type:") }
        for line in lines {
            guard let list = curl_slist_append(headerList, line) else { return "out of memory for the headers" }
            headerList = list
        }
        set("the headers", pt_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
        return refused
    }

    /// The reply once curl is done with the transfer, or why there is none.
    func finish(_ code: CURLcode) -> Result<HTTPClientReply, HTTPClientError> {
        if code == CURLE_OK {
            var status = 0
            _ = pt_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            var type: UnsafeMutablePointer<CChar>?
            _ = pt_curl_getinfo_str(handle, CURLINFO_CONTENT_TYPE, &type)
            return .success(HTTPClientReply(status: status, body: body, contentType: type.map { String(cString: $0) }))
        }
        return .failure(HTTPClientError(description: redacted(explain(code))))
    }

    /// A one-line account of a failed transfer: curl's error buffer, shortened for the
    /// common failures.
    private func explain(_ code: CURLcode) -> String {
        var text = oneLine(String(cString: errorBuffer))
        if text.isEmpty { text = String(cString: curl_easy_strerror(code)) }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            if text.hasPrefix("Connection timed out") || text.hasPrefix("Resolving timed out") {
                return "connect timed out after \(seconds(min(request.connectTimeout, request.timeout))) s"
            }
            return "timed out after \(seconds(request.timeout)) s"
        case CURLE_COULDNT_CONNECT:
            var error = 0
            _ = pt_curl_getinfo_long(handle, CURLINFO_OS_ERRNO, &error)
            if error == Int(ECONNREFUSED) { return "connection refused" }
            return text
        case CURLE_FILESIZE_EXCEEDED:
            return "reply body over \(request.maxBodyBytes) bytes"
        case CURLE_WRITE_ERROR where overLimit:
            return "reply body over \(request.maxBodyBytes) bytes"
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return "TLS: " + text
        default:
            return text
        }
    }

    /// `text` with the URL's query, fragment and user information and every header value
    /// (and each word of one, such as a bearer token) put out of sight. curl's messages
    /// name none of them today; this keeps it so.
    private func redacted(_ text: String) -> String {
        var secrets: [String] = []
        let url = request.url
        if let query = url.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            secrets.append(String(url[url.index(after: query)...]))
        }
        let afterScheme = url.drop { $0 != ":" }.dropFirst(3)  // the URL starts http:// or https://
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { secrets.append(String(authority[..<at])) }
        for (_, value) in request.headers {
            secrets.append(value)
            secrets += value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
        }
        var bytes = Array(text.utf8)
        for secret in secrets.sorted(by: { $0.utf8.count > $1.utf8.count }) where secret.utf8.count >= 4 {
            let needle = Array(secret.utf8)
            var out: [UInt8] = []
            var i = 0
            while i < bytes.count {
                if bytes[i...].starts(with: needle) {
                    out += "…".utf8
                    i += needle.count
                } else {
                    out.append(bytes[i])
                    i += 1
                }
            }
            bytes = out
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// curl's write callback: appends to the transfer's body, or stops it (by taking less
/// than it was given) when the body would pass the limit.
private func receive(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    if length > transfer.request.maxBodyBytes - transfer.body.count {
        transfer.overLimit = true
        return 0
    }
    if let data, length > 0 {
        transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    }
    return length
}

/// Seconds as curl's milliseconds: at least 1 (0 would mean no limit), at most ~24 days.
private func milliseconds(_ seconds: Double) -> Int {
    seconds > 0 ? Int(min(seconds * 1000, 2_147_483_647).rounded(.up)) : 1
}

/// "5" for 5.0, "0.25" for 0.25.
private func seconds(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int(rounded)) }
    return String(rounded)
}

/// Control characters as spaces, no trailing space.
private func oneLine(_ text: String) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        scalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
    }
    var line = String(scalars)
    while line.last == " " { line.removeLast() }
    return line
}
