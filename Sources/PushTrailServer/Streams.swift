import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells event streams that the store changed: this server's appends wake them at once;
/// other processes' (a CLI ingest) are seen within `pollSeconds` by each stream's own
/// look at the store's last transaction.
final class EventFeed: @unchecked Sendable {
    static let pollSeconds = 0.1
    /// A stream with nothing to send says it is alive this often (proxies drop silent
    /// connections).
    static let keepaliveSeconds = 15.0

    let store: Store
    private let monitor = Monitor()
    private var stopped = false

    init(store: Store) { self.store = store }

    func appended() { monitor.broadcast() }

    func stop() {
        monitor.locked { stopped = true }
        monitor.broadcast()
    }

    var isStopped: Bool { monitor.locked { stopped } }

    /// Waits until an append here, a stop, or `pollSeconds`.
    func pause() {
        monitor.locked {
            if !stopped { monitor.wait(seconds: EventFeed.pollSeconds) }
        }
    }
}

extension Routes {
    /// Events sent per read transaction of a listing or a stream.
    static let chunkEvents = 256

    /// `GET /v1/events`: `log --json` as NDJSON, `limit` = `-n`, `order=desc` = `-r`. The
    /// matching seqs are found first; the events are then read and sent a chunk at a
    /// time, each chunk in its own short read transaction, so a slow client holds no
    /// snapshot of the store.
    func listing(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try filters(request)
        var limit: Int?
        if let text = request.query["limit"] {
            guard let n = Int(text), n >= 0 else {
                throw Failure(400, "limit takes a count, not \(MessageText.shown(text))")
            }
            limit = n
        }
        let reverse: Bool
        switch request.query["order"] {
        case nil, "asc": reverse = false
        case "desc": reverse = true
        case let other?: throw Failure(400, "order is asc or desc, not \(MessageText.shown(other))")
        }
        let seqs: [UInt64] = try store.read { reader in
            var found: [UInt64] = []
            try reader.log(query, limit: limit, reverse: reverse) {
                found.append($0.seq)
                return true
            }
            return found
        }
        var next = 0
        let store = self.store
        let stream = HTTPStream(next: {
            guard next < seqs.count else { return nil }
            let chunk = seqs[next..<min(seqs.count, next + Routes.chunkEvents)]
            next = chunk.endIndex
            var out: [UInt8] = []
            do {
                try store.read { reader in
                    for seq in chunk {
                        guard let stored = try reader.event(seq: seq) else { continue }
                        Presentation.logLine(stored).write(into: &out)
                        out.append(0x0A)
                    }
                }
            } catch {
                // The answer has begun: it can only end short. The client sees no final chunk.
                return nil
            }
            return out
        })
        return HTTPResponse(status: 200, contentType: "application/x-ndjson", stream: stream, route: "/v1/events")
    }

    /// `GET /v1/stream`: `log -f` as Server-Sent Events, from the events appended after
    /// `Last-Event-ID` (a seq), else after the head when the stream opens.
    func stream(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try filters(request)
        var last: UInt64
        if let resume = request.header("last-event-id") {
            guard let seq = UInt64(resume.trimmingSpaces) else {
                throw Failure(400, "Last-Event-ID is an event's seq, not \(MessageText.shown(resume))")
            }
            last = seq
        } else if let after = request.query["after"] {
            // A page that drew the events through `after` follows on from there.
            guard let seq = UInt64(after) else {
                throw Failure(400, "after is an event's seq, not \(MessageText.shown(after))")
            }
            last = seq
        } else {
            last = try store.read { try $0.head().seq }
        }
        let store = self.store
        let feed = self.feed
        var opened = false
        var seenTransaction = -1
        var lastSent = monotonicNanoseconds()
        let stream = HTTPStream(next: {
            if !opened {
                opened = true
                return Array("retry: 2000\n: pushtrail events after seq \(last)\n\n".utf8)
            }
            while !feed.isStopped {
                let transaction = store.lastTransactionID
                if transaction != seenTransaction {
                    var out: [UInt8] = []
                    var caughtUp = true
                    do {
                        try store.read { reader in
                            let head = try reader.head().seq
                            guard head > last else { return }
                            let through = min(head, last + UInt64(Routes.chunkEvents))
                            caughtUp = through == head
                            try reader.appended(after: last, through: through, matching: query) { loaded in
                                out.append(contentsOf: "id: \(loaded.seq)\ndata: ".utf8)
                                Presentation.logLine(loaded.stored).write(into: &out)
                                out.append(contentsOf: [0x0A, 0x0A])
                            }
                            last = through
                        }
                    } catch {
                        return nil
                    }
                    if caughtUp { seenTransaction = transaction }
                    if !out.isEmpty {
                        lastSent = monotonicNanoseconds()
                        return out
                    }
                    if !caughtUp { continue }
                }
                if monotonicNanoseconds() - lastSent > UInt64(EventFeed.keepaliveSeconds * 1e9) {
                    lastSent = monotonicNanoseconds()
                    return Array(": keepalive\n\n".utf8)
                }
                feed.pause()
            }
            return nil
        })
        return HTTPResponse(
            status: 200, contentType: "text/event-stream", stream: stream, route: "/v1/stream",
            headers: [("X-Accel-Buffering", "no")])
    }

    // MARK: - Downloads

    /// `GET /v1/events/{id}/export`: the bytes `export ID -o -` writes, as a download
    /// named as `export` would name the file.
    func export(_ target: String, _ request: HTTPRequest, role: Role) throws -> HTTPResponse {
        let stored = try self.stored(target)
        let event = try stored.decode()
        guard let notification = event.notification else {
            throw Failure(
                404,
                "event \(MessageText.shown(target)) is a\(event.type == .action ? "n" : "") \(event.type), "
                    + "not a notification: only notifications export")
        }
        let platform = notification.platform
        var format = ExportFormat.standard(for: platform)
        if let text = request.query["format"] {
            guard let asked = ExportFormat(rawValue: text) else {
                throw Failure(400, "format is apns, fcm or adb, not \(MessageText.shown(text))")
            }
            guard asked.platform == platform else {
                throw Failure(
                    400,
                    "notification \(MessageText.shown(event.id)) is an \(platform == .ios ? "iOS" : "Android") "
                        + "notification: format \(asked) does not write it; use "
                        + (platform == .ios ? "format=apns" : "format=fcm or adb"))
            }
            format = asked
        }
        func given(_ name: String) -> String? { request.query[name].flatMap { $0.isEmpty ? nil : $0 } }
        let bytes: [UInt8]
        switch format {
        case .apns:
            guard let bundle = given("bundle") ?? notification.topic else {
                throw Failure(
                    400,
                    "no bundle id for notification \(MessageText.shown(event.id)) (it has no topic): pass bundle=ID")
            }
            bytes = try APNSFile.export(event: stored.raw, bundle: bundle)
        case .fcm:
            let recipient: FCMFile.Recipient =
                given("token").map { .device($0) } ?? (Routes.showsTokens(request) ? .asSent : .placeholder)
            bytes = try FCMFile.sendBody(event: stored.raw, recipient: recipient, device: event.device).bytes
        case .adb:
            let message = try FCMFile.dataMessage(event: stored.raw)
            guard let package = given("package") ?? message.restrictedPackageName.flatMap({ $0.isEmpty ? nil : $0 })
            else {
                throw Failure(
                    400,
                    "no package for notification \(MessageText.shown(event.id)) (its message has no "
                        + "android.restricted_package_name): pass package=P")
            }
            let broadcast = AndroidBroadcast(
                package: package, sender: message.project ?? AndroidBroadcast.defaultSender, data: message.data)
            guard broadcast.unpassable == nil else {
                throw Failure(
                    422,
                    "notification #\(stored.seq) has a NUL character in its data map or package, which no "
                        + "command line can pass")
            }
            bytes = broadcast.scriptFile(LoadedEvent(stored: stored, event: event), serial: given("serial"))
        }
        let name = format.fileName(stem: ExportFormat.stem(of: event), seq: stored.seq)
        return HTTPResponse(
            status: 200, contentType: format == .adb ? "text/x-shellscript; charset=utf-8" : "application/json",
            body: bytes, route: "/v1/events/{id}/export",
            headers: [("Content-Disposition", "attachment; filename=\"\(name)\"")])
    }
}

extension String {
    var trimmingSpaces: Substring { Substring(self).trimmed }
}
