import CMicroHTTPD
import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Routes {
    /// `POST /v1/events`: an NDJSON body, appended with `ingest`'s rules once it has all
    /// arrived, in one transaction committed before the answer.
    func append(_ request: HTTPRequest) throws -> HTTPExchange {
        let type = Routes.mediaType(request)
        guard type == "application/x-ndjson" else {
            throw Failure(
                415,
                "send the events as Content-Type: application/x-ndjson (one JSON object a line), not "
                    + (type.map { MessageText.shown($0) } ?? "no content type"))
        }
        let strict: Bool
        switch request.query["strict"] {
        case nil, "0", "false": strict = false
        case "1", "true": strict = true
        case let other?: throw Failure(400, "strict is 1 or 0, not \(MessageText.shown(other))")
        }
        if let declared = request.header("content-length").flatMap(Int.init), declared > maxBody {
            throw Failure(413, "the body is \(declared) bytes, over this server's limit of \(maxBody) (--max-body)")
        }
        return .receive(EventsUpload(routes: self, strict: strict), route: "/v1/events")
    }
}

extension Routes {
    /// The request's media type (`Content-Type` without its parameters), lower-cased.
    static func mediaType(_ request: HTTPRequest) -> String? {
        request.header("content-type").map { ($0.split(separator: ";").first ?? "").trimmed.lowercased() }
    }
}

extension Substring {
    var trimmed: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}

/// An append's body, decoded line by line as it arrives. It holds one of the routes'
/// append slots from before its first byte is read until it is let go, however the
/// request ends.
final class EventsUpload: HTTPUpload {
    let routes: Routes
    let ingest: StreamedIngest
    var received = 0

    init(routes: Routes, strict: Bool) {
        self.routes = routes
        routes.appendSlots.acquire()
        ingest = StreamedIngest(store: routes.store, strict: strict, group: routes.group)
    }

    deinit { routes.appendSlots.release() }

    func receive(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse? {
        received += bytes.count
        if received > routes.maxBody {
            return Routes.error(
                413, "the body is over this server's limit of \(routes.maxBody) bytes (--max-body): nothing was stored",
                route: "/v1/events")
        }
        if let stop = ingest.feed(bytes) { return refused(stop) }
        return nil
    }

    func finish() -> HTTPResponse {
        do {
            let outcome = try ingest.finish(recordedAt: routes.clock)
            routes.metrics.appended(outcome.summary.appended)
            if outcome.summary.appended > 0 { routes.feed.appended() }
            return Routes.json(
                Presentation.ingest(outcome.summary, rejects: outcome.rejects, omitted: outcome.omittedRejects),
                route: "/v1/events")
        } catch let stop as StreamedIngest.StrictStop {
            return refused(stop.rejection)
        } catch StoreError.writeRefused(_, let code) {
            let reason = String(cString: strerror(code))
            return Routes.error(
                503, "the store cannot take writes: \(reason); nothing of this body was stored", route: "/v1/events")
        } catch {
            // The store's path is the server's business, not the client's.
            let reason = EventsUpload.hiding(routes.store.path, in: "\(error)")
            return Routes.error(
                503, "the store cannot take writes: \(reason); nothing of this body was stored", route: "/v1/events")
        }
    }

    /// A strict body's refusal: 422 with the summary of what was read (nothing stored).
    func refused(_ rejection: Rejection) -> HTTPResponse {
        var summary = IngestSummary()
        summary.read = ingest.linesRead
        if rejection.isConflict { summary.conflicts = 1 } else { summary.rejected = 1 }
        guard case .object(var fields) = Presentation.ingest(summary, rejects: [rejection]) else {
            preconditionFailure("an ingest summary is an object")
        }
        fields.insert(
            ("error", .string("line \(rejection.line): \(rejection.reason); strict: nothing was stored")), at: 0)
        return HTTPResponse(
            status: 422, contentType: "application/json",
            body: Array((JSONValue.object(fields).serialized() + "\n").utf8), route: "/v1/events")
    }

    /// `text` with each occurrence of `path` replaced by "the store".
    static func hiding(_ path: String, in text: String) -> String {
        let whole = Array(text.utf8)
        let part = Array(path.utf8)
        guard !part.isEmpty else { return text }
        var out: [UInt8] = []
        var i = 0
        while i < whole.count {
            if whole.count - i >= part.count && whole[i..<i + part.count].elementsEqual(part) {
                out += "the store".utf8
                i += part.count
            } else {
                out.append(whole[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// `POST /login`: a form with the token; a session cookie when it is one.
final class LoginUpload: HTTPUpload {
    let routes: Routes
    let request: HTTPRequest
    var body: [UInt8] = []
    static let limit = 4096

    init(routes: Routes, request: HTTPRequest) {
        self.routes = routes
        self.request = request
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse? {
        body.append(contentsOf: bytes)
        return body.count > LoginUpload.limit ? Routes.error(413, "the form is too large", route: "/login") : nil
    }

    func finish() -> HTTPResponse {
        let type = Routes.mediaType(request)
        guard type == "application/x-www-form-urlencoded" else {
            return Routes.error(415, "send the form as application/x-www-form-urlencoded", route: "/login")
        }
        guard let secret = LoginUpload.field("token", in: body),
            let session = routes.access.openSession(secret: secret, now: routes.clock())
        else { return Pages.login(failed: true, next: LoginUpload.field("next", in: body) ?? "/") }
        var cookie =
            "\(Access.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Access.sessionSeconds)"
        if request.isTLS { cookie += "; Secure" }
        return HTTPResponse(
            status: 303, contentType: "text/plain; charset=utf-8", body: Array("signed in\n".utf8), route: "/login",
            headers: [
                ("Set-Cookie", cookie),
                ("Location", LoginUpload.field("next", in: body).flatMap(LoginUpload.localPath) ?? "/"),
            ])
    }

    /// `path` if it is a path of this server (`/…`, not `//host` or `/\host`, which
    /// browsers take for another site), else nil: the form cannot send anyone away.
    static func localPath(_ path: String) -> String? {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/"), bytes.count < 2048,
            bytes.count == 1 || (bytes[1] != UInt8(ascii: "/") && bytes[1] != UInt8(ascii: "\\")),
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else { return nil }
        return path
    }

    /// A field of a URL-encoded form, decoded by libmicrohttpd.
    static func field(_ name: String, in body: [UInt8]) -> String? {
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, Array(parts[0]) == Array(name.utf8) else { continue }
            var value = parts[1].map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 } + [0]
            let length = value.withUnsafeMutableBytes {
                MHD_http_unescape($0.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            return String(decoding: value.prefix(length), as: UTF8.self)
        }
        return nil
    }
}
