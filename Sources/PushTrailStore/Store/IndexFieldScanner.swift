import PushTrailModel

/// Reads, from a stored event's JSON, only what decides its index entries, for
/// `verify`.
///
/// `verify` checks an event's chain hash before it looks at its JSON, and an event
/// whose hash checks out holds exactly the bytes ingest accepted after validating
/// them in full (`EventDecoder`). So there is nothing left to validate: this makes one
/// pass over the top-level object (and `payload`, `payload.aps` of a notification, or
/// for an FCM message `payload.data`, `payload.android` and `payload.android.data`),
/// skipping other values by matching brackets outside strings, and reads the few
/// fields `Layout.indexEntries` uses: type, id, at, user, device, task id, thread id,
/// the referenced notification id and a delivery's status. Strings it reads are
/// unescaped exactly as `JSONText` does. It is several times faster than the general
/// decoder, which builds a tape of every value and checks every rule.
///
/// Whenever the bytes are not what ingest writes (a member it reads twice or of the
/// wrong kind, a truncated string, anything unexpected) `scan` returns false and the
/// caller decodes the event with `EventDecoder` instead, whose answer (entries, or the
/// reason it no longer decodes) stands. `IndexFieldScannerTests` checks that both give
/// the same entries on generated streams and the test corpora.
struct IndexFieldScanner {
    /// A member's value in the event's bytes: for a string the bytes between its
    /// quotes, for a number its text.
    struct Field {
        enum Kind: UInt8 { case absent, string, number, object, other }
        var kind = Kind.absent
        var escaped = false
        var start: Int32 = 0
        var end: Int32 = 0
        var range: Range<Int> { Int(start)..<Int(end) }
    }

    /// The members `scan` reads, each with its slot in `Slots`; `other` takes every
    /// member it skips.
    enum Member: Int {
        case type, id, at, user, device, rootTaskID, rootNotificationID, rootThreadID, status, reason, platform
        case payload, payloadTaskID, aps, apsThreadID
        /// An FCM message's data maps and the fields read from them.
        case data, dataTaskID, dataThreadID, android, androidData, androidDataTaskID, androidDataThreadID
        case other
        /// How many there are: `other` is the last.
        static let count = other.rawValue + 1
    }

    /// The objects whose members `scan` reads.
    enum Scope {
        case event, payload, aps, data, android, androidData

        /// The scope a member's object value opens, if `scan` reads into it.
        init?(_ member: Member) {
            switch member {
            case .payload: self = .payload
            case .aps: self = .aps
            case .data: self = .data
            case .android: self = .android
            case .androidData: self = .androidData
            default: return nil
            }
        }
    }

    /// The members read by the last `scan`, one `Field` per `Member`. On the heap, so
    /// that the parser writes each member in place (a struct of them passed `inout`
    /// down the recursion was copied with `memcpy` at every member) and copying the
    /// scanner copies a reference.
    final class Slots {
        let fields = UnsafeMutablePointer<Field>.allocate(capacity: Member.count)
        init() { fields.initialize(repeating: Field(), count: Member.count) }
        deinit { fields.deallocate() }
    }

    private let slots = Slots()
    @inline(__always) private func field(_ member: Member) -> Field { slots.fields[member.rawValue] }

    private(set) var type = EventType.notification
    private(set) var at = Timestamp(microseconds: 0)

    /// The event's bytes, valid during `scan` and the calls after it.
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)

    /// The task id and thread id of the event, once scanned.
    private(set) var taskID: Int64?
    private var thread = Field()
    private var ref = Field()
    /// For a delivery, its status, and whether its reason is FCM's `UNREGISTERED`.
    private(set) var deliveryStatus = 0
    private var reasonIsUnregistered = false

    init() {}

    /// The last scanned event's bytes, for reading its fields.
    private var text: Parser { Parser(bytes: bytes, slots: slots.fields) }

    // MARK: - Scanning

    /// Reads the fields of `raw`; false when it is not an event as ingest stores it
    /// (then decode it with `EventDecoder`).
    mutating func scan(_ raw: UnsafeRawBufferPointer) -> Bool {
        bytes = raw
        slots.fields.update(repeating: Field(), count: Member.count)
        guard raw.count > 0, raw.count <= EventDecoder.maxLineBytes else { return false }
        let parser = text
        var i = 0
        parser.skipWhitespace(&i)
        guard parser.object(&i, scope: .event) else { return false }
        parser.skipWhitespace(&i)
        guard i == raw.count else { return false }
        return resolve()
    }

    /// What the members read mean, by the event's type (as `EventDecoder` reads them).
    private mutating func resolve() -> Bool {
        guard field(.type).kind == .string, field(.id).kind == .string, field(.at).kind == .string,
            field(.user).kind == .string
        else { return false }
        guard let t = text.eventType(field(.type)) else { return false }
        type = t
        guard let at = text.timestamp(field(.at)) else { return false }
        self.at = at
        guard EventSchema.idBytes.contains(text.length(field(.id))),
            EventSchema.userBytes.contains(text.length(field(.user)))
        else { return false }
        if field(.device).kind != .absent {
            guard field(.device).kind == .string, EventSchema.deviceBytes.contains(text.length(field(.device))) else {
                return false
            }
        }
        taskID = nil
        thread = Field()
        ref = Field()
        deliveryStatus = 0
        reasonIsUnregistered = false
        switch type {
        case .notification:
            if field(.platform).kind != .absent {
                guard field(.platform).kind == .string else { return false }
                let isIOS = text.withBytes(field(.platform)) { JSONText.bytesEqual($0, "ios") }
                if !isIOS {
                    guard text.withBytes(field(.platform), { JSONText.bytesEqual($0, "android") }) else { return false }
                    return resolveFCMMessage()
                }
            }
            guard field(.payload).kind == .object, field(.aps).kind == .object else { return false }
            if field(.payloadTaskID).kind != .absent {
                guard let v = text.integer(field(.payloadTaskID)) else { return false }
                taskID = v
            }
            if field(.apsThreadID).kind != .absent {
                guard field(.apsThreadID).kind == .string,
                    EventSchema.threadIDBytes.contains(text.length(field(.apsThreadID)))
                else { return false }
                thread = field(.apsThreadID)
            }
        case .action:
            guard let v = text.integer(field(.rootTaskID)) else { return false }
            taskID = v
            if field(.rootNotificationID).kind != .absent {
                guard field(.rootNotificationID).kind == .string,
                    EventSchema.idBytes.contains(text.length(field(.rootNotificationID)))
                else { return false }
                ref = field(.rootNotificationID)
            }
            if field(.rootThreadID).kind != .absent {
                guard field(.rootThreadID).kind == .string,
                    EventSchema.threadIDBytes.contains(text.length(field(.rootThreadID)))
                else { return false }
                thread = field(.rootThreadID)
            }
        case .delivery:
            guard field(.rootNotificationID).kind == .string,
                EventSchema.idBytes.contains(text.length(field(.rootNotificationID)))
            else { return false }
            ref = field(.rootNotificationID)
            guard let s = text.integer(field(.status)), EventSchema.httpStatuses.contains(s) else { return false }
            deliveryStatus = Int(s)
            if field(.reason).kind != .absent {
                guard field(.reason).kind == .string else { return false }
                reasonIsUnregistered = text.withBytes(field(.reason)) {
                    JSONText.bytesEqual($0, "UNREGISTERED")
                }
            }
        }
        return true
    }

    /// An Android notification's task and thread: from `payload.android.data` when the
    /// message has it (it replaces `payload.data`, as FCM delivers it), else
    /// `payload.data`; a task id is a string of decimal digits or an integer.
    private mutating func resolveFCMMessage() -> Bool {
        guard field(.payload).kind == .object else { return false }
        for member in [Member.data, .android, .androidData] {
            guard field(member).kind == .absent || field(member).kind == .object else { return false }
        }
        let nested = field(.androidData).kind == .object
        let task = field(nested ? .androidDataTaskID : .dataTaskID)
        switch task.kind {
        case .absent: break
        case .number:
            guard let v = text.integer(task) else { return false }
            taskID = v
        case .string:
            guard let v = text.withBytes(task, FCMRules.decimal) else { return false }
            taskID = v
        default: return false
        }
        let threadField = field(nested ? .androidDataThreadID : .dataThreadID)
        if threadField.kind != .absent {
            guard threadField.kind == .string, EventSchema.threadIDBytes.contains(text.length(threadField)) else {
                return false
            }
            thread = threadField
        }
        return true
    }

    /// The scanning itself: only the event's bytes, so that calls do not copy the
    /// scanner.
    struct Parser {
        let bytes: UnsafeRawBufferPointer
        /// Where `object` puts the members it reads (`Slots.fields`).
        let slots: UnsafeMutablePointer<Field>

        /// The members of the object at `i` (its `{`), which is `scope`. Leaves `i` past
        /// the `}`.
        func object(_ i: inout Int, scope: Scope) -> Bool {
            let n = bytes.count
            guard i < n, bytes[i] == UInt8(ascii: "{") else { return false }
            i += 1
            skipWhitespace(&i)
            guard i < n else { return false }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return true
            }
            // Whitespace is skipped only where the byte found is not the one expected:
            // ingest stores events as they came, which is mostly without it.
            while true {
                guard i < n, bytes[i] == UInt8(ascii: "\"") else { return false }
                let keyStart = i + 1
                guard let (keyEnd, keyEscaped) = string(&i),
                    let member = classify(scope: scope, keyStart, keyEnd, keyEscaped)
                else { return false }
                guard i < n else { return false }
                if bytes[i] != UInt8(ascii: ":") {
                    skipWhitespace(&i)
                    guard i < n, bytes[i] == UInt8(ascii: ":") else { return false }
                }
                i += 1
                guard i < n else { return false }
                var c = bytes[i]
                if c <= 0x20 {
                    skipWhitespace(&i)
                    guard i < n else { return false }
                    c = bytes[i]
                }
                // Offsets fit in 32 bits: `scan` takes at most `maxLineBytes`.
                var field = Field(start: Int32(truncatingIfNeeded: i))
                if c == UInt8(ascii: "\"") {
                    field.start = Int32(truncatingIfNeeded: i + 1)
                    guard let (end, escaped) = string(&i) else { return false }
                    field.kind = .string
                    field.end = Int32(truncatingIfNeeded: end)
                    field.escaped = escaped
                } else if c == UInt8(ascii: "{") {
                    field.kind = .object
                    if let inner = Scope(member) {
                        guard object(&i, scope: inner) else { return false }
                    } else {
                        guard skipContainer(&i) else { return false }
                    }
                } else if c == UInt8(ascii: "[") {
                    field.kind = .other
                    guard skipContainer(&i) else { return false }
                } else {
                    field.kind = c == UInt8(ascii: "-") || c &- UInt8(ascii: "0") < 10 ? .number : .other
                    // A number or literal ends at a separator or whitespace (any byte up
                    // to 0x20: a control byte here is not JSON, and fails below).
                    while i < n {
                        let d = bytes[i]
                        if d <= 0x20 || d == UInt8(ascii: ",") || d == UInt8(ascii: "}") || d == UInt8(ascii: "]") {
                            break
                        }
                        i += 1
                    }
                    field.end = Int32(truncatingIfNeeded: i)
                    guard field.end > field.start else { return false }
                }
                if member != .other {
                    // A member read twice: not what ingest accepted (it refuses duplicate keys).
                    let slot = slots + member.rawValue
                    guard slot.pointee.kind == .absent else { return false }
                    slot.pointee = field
                }
                guard i < n else { return false }
                var d = bytes[i]
                if d <= 0x20 {
                    skipWhitespace(&i)
                    guard i < n else { return false }
                    d = bytes[i]
                }
                if d == UInt8(ascii: ",") {
                    i += 1
                    if i < n, bytes[i] <= 0x20 { skipWhitespace(&i) }
                    continue
                }
                guard d == UInt8(ascii: "}") else { return false }
                i += 1
                return true
            }
        }

        /// Which member a key names in `scope` (keys compare after unescaping).
        /// nil for a key with a broken escape.
        func classify(scope: Scope, _ start: Int, _ end: Int, _ escaped: Bool) -> Member? {
            if escaped {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                guard IndexFieldScanner.wellFormedEscapes(raw) else { return nil }
                let key = JSONText.unescaped(
                    JSONNode(kind: .string, flag: true, start: Int32(start), end: Int32(end), next: 0), in: bytes)
                return key.withUnsafeBytes { IndexFieldScanner.Parser.member(scope: scope, $0.baseAddress, $0.count) }
            }
            return IndexFieldScanner.Parser.member(scope: scope, bytes.baseAddress! + start, end - start)
        }

        static func member(scope: Scope, _ p: UnsafeRawPointer?, _ n: Int) -> Member {
            guard let p else { return .other }
            @inline(__always) func equals(_ literal: StaticString) -> Bool {
                literal.utf8CodeUnitCount == n && JSONText.memcmpEqual(p, UnsafeRawPointer(literal.utf8Start), n)
            }
            switch scope {
            case .event:
                switch n {
                case 2:
                    if equals("id") { return .id }
                    if equals("at") { return .at }
                case 4:
                    if equals("type") { return .type }
                    if equals("user") { return .user }
                case 6:
                    if equals("device") { return .device }
                    if equals("status") { return .status }
                    if equals("reason") { return .reason }
                case 7:
                    if equals("payload") { return .payload }
                    if equals("task_id") { return .rootTaskID }
                case 8:
                    if equals("platform") { return .platform }
                case 9:
                    if equals("thread_id") { return .rootThreadID }
                case 15:
                    if equals("notification_id") { return .rootNotificationID }
                default: break
                }
            case .payload:
                if n == 3, equals("aps") { return .aps }
                if n == 7, equals("task_id") { return .payloadTaskID }
                if n == 4, equals("data") { return .data }
                if n == 7, equals("android") { return .android }
            case .aps:
                if n == 9, equals("thread-id") { return .apsThreadID }
            case .data:
                if n == 7, equals("task_id") { return .dataTaskID }
                if n == 9, equals("thread_id") { return .dataThreadID }
            case .android:
                if n == 4, equals("data") { return .androidData }
            case .androidData:
                if n == 7, equals("task_id") { return .androidDataTaskID }
                if n == 9, equals("thread_id") { return .androidDataThreadID }
            }
            return .other
        }

        @inline(__always) func skipWhitespace(_ i: inout Int) {
            while i < bytes.count {
                let c = bytes[i]
                // One comparison for the usual case: no whitespace byte is above 0x20.
                guard c <= 0x20, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        /// The string whose opening quote is at `i`: returns where its content ends (the
        /// closing quote) and whether it holds escapes, and leaves `i` past the quote.
        @inline(__always) func string(_ i: inout Int) -> (Int, Bool)? {
            let n = bytes.count
            let base = bytes.baseAddress!
            var k = i + 1
            var escaped = false
            while true {
                // Eight bytes at a time while none is a quote or a backslash. (Sixteen
                // with SSE2 compares was no faster: most strings here are short.)
                while k + 8 <= n {
                    // The first byte lowest.
                    let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: k, as: UInt64.self))
                    let ones: UInt64 = 0x0101_0101_0101_0101
                    let quote = w ^ (ones &* 0x22)
                    let slash = w ^ (ones &* 0x5C)
                    let found = ((quote &- ones) & ~quote) | ((slash &- ones) & ~slash)
                    if found & (ones &* 0x80) != 0 {
                        k += (found & (ones &* 0x80)).trailingZeroBitCount >> 3
                        break
                    }
                    k += 8
                }
                guard k < n else { return nil }
                let c = base.load(fromByteOffset: k, as: UInt8.self)
                if c == UInt8(ascii: "\"") {
                    i = k + 1
                    return (k, escaped)
                }
                if c == UInt8(ascii: "\\") {
                    escaped = true
                    k += 2
                } else {
                    k += 1
                }
            }
        }

        /// Skips the array or object at `i` (its opening bracket), strings and all.
        func skipContainer(_ i: inout Int) -> Bool {
            let n = bytes.count
            var depth = 0
            while i < n {
                let c = bytes[i]
                switch c {
                case UInt8(ascii: "\""):
                    guard string(&i) != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        i += 1
                        return true
                    }
                default: break
                }
                i += 1
            }
            return false
        }
    }

    // MARK: - Values

    /// Whether every backslash escape in `raw` is complete (so `JSONText.unescaped`
    /// stays inside it): `\u` with four hex digits, a high surrogate followed by `\u`
    /// and a low one.
    static func wellFormedEscapes(_ raw: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            var v: UInt32 = 0
            for k in at..<(at + 4) {
                guard let d = JSONText.hexDigit(raw[k]) else { return nil }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        while i < raw.count {
            guard raw[i] == UInt8(ascii: "\\") else {
                i += 1
                continue
            }
            guard i + 1 < raw.count else { return false }
            if raw[i + 1] == UInt8(ascii: "u") {
                guard let unit = hex4(i + 2) else { return false }
                i += 6
                if unit >= 0xDC00 && unit <= 0xDFFF { return false }
                if unit >= 0xD800 && unit <= 0xDBFF {
                    guard i + 1 < raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u"),
                        let low = hex4(i + 2), low >= 0xDC00 && low <= 0xDFFF
                    else { return false }
                    i += 6
                }
            } else {
                i += 2
            }
        }
        return true
    }

}

extension IndexFieldScanner.Parser {
    typealias Field = IndexFieldScanner.Field

    func eventType(_ field: Field) -> EventType? {
        withBytes(field) { EventType(utf8: $0) }
    }

    /// `at`, parsed where it lies.
    func timestamp(_ field: Field) -> Timestamp? {
        withBytes(field) { Timestamp.parseRFC3339($0) }
    }

    /// The byte length of a string field after unescaping.
    func length(_ field: Field) -> Int {
        field.escaped ? withBytes(field) { $0.count } : Int(field.end - field.start)
    }

    /// Lends the unescaped bytes of a string field.
    func withBytes<R>(_ field: Field, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if !field.escaped { return try body(UnsafeRawBufferPointer(rebasing: bytes[field.range])) }
        guard IndexFieldScanner.wellFormedEscapes(UnsafeRawBufferPointer(rebasing: bytes[field.range])) else {
            // Only a store rewritten around its chain gets here; `scan` callers decode
            // with `EventDecoder` when the fields disagree, so any bytes will do.
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        let unescaped = JSONText.unescaped(
            JSONNode(kind: .string, flag: true, start: field.start, end: field.end, next: 0), in: bytes)
        return try unescaped.withUnsafeBytes(body)
    }

    /// A number field that is an integer fitting in 64 bits (as `JSONView.int64`).
    func integer(_ field: Field) -> Int64? {
        guard field.kind == .number else { return nil }
        return JSONText.int64(bytes, Int(field.start)..<Int(field.end))
    }

    /// Lends `field`'s bytes ASCII-lowercased (`EventID.normalizedNotificationID`).
    func withLowered<R>(_ field: Field, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withBytes(field) { b in
            if !IndexFieldScanner.hasUppercase(b) { return body(b) }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: b.count) { out in
                for (k, c) in b.enumerated() { out[k] = c >= 0x41 && c <= 0x5A ? c | 0x20 : c }
                return body(UnsafeRawBufferPointer(out))
            }
        }
    }
}

extension IndexFieldScanner {
    /// Whether `b` holds an ASCII capital letter, eight bytes at a time (ids are
    /// mostly lowercase already).
    static func hasUppercase(_ b: UnsafeRawBufferPointer) -> Bool {
        let n = b.count
        guard n > 0, let base = b.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        while i + 8 <= n {
            let w = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            // Per byte (as 7-bit values, then ruling out bytes ≥ 0x80): ≥ 0x41 and ≤ 0x5A.
            let low7 = w & ~high
            let aboveA = (low7 &+ ones &* (0x80 - 0x41)) & high
            let aboveZ = (low7 &+ ones &* (0x80 - 0x5B)) & high
            if aboveA & ~aboveZ & ~w != 0 { return true }
            i += 8
        }
        while i < n {
            let c = base.load(fromByteOffset: i, as: UInt8.self)
            if c >= 0x41 && c <= 0x5A { return true }
            i += 1
        }
        return false
    }

    // MARK: - Entries

    /// Whether the event is a delivery that declares its token dead (as
    /// `Delivery.declaresTokenDead` says): its `unregistered` entry needs the stored
    /// notification's device, which `deferredUnregistration` hands over.
    var isUnregistration: Bool {
        type == .delivery
            && Delivery.declaresTokenDead(
                status: deliveryStatus, reason: reasonIsUnregistered ? Delivery.fcmUnregistered : nil)
    }

    /// For a 410 delivery: the (normalised) notification id and the delivery's own
    /// device, for `Layout.indexEntries`' lookup.
    func deferredUnregistration() -> (notificationID: String, device: String?) {
        let id = text.withLowered(ref) { String(decoding: $0, as: UTF8.self) }
        let device =
            field(.device).kind == .string
            ? text.withBytes(field(.device)) { String(decoding: $0, as: UTF8.self) } : nil
        return (id, device)
    }

    /// Hands `body` every entry of the last scanned event but `unregistered`, as
    /// (digest slot, key, value), the `ids` entry first: the fields read from the JSON,
    /// filed by the same rule as an appended event's (`IndexFields.forEachEntry`).
    func forEachEntry(seq: UInt64, _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        // Locals only: a closure that captured the scanner would copy it (and retain its
        // slots) per event.
        let text = self.text
        let (id, user, thread, ref) = (field(.id), field(.user), self.thread, ref)
        let (at, taskID) = (self.at, self.taskID)
        IndexFieldScanner.with(text, id, lowered: type == .notification) { identity in
            text.withBytes(user) { user in
                IndexFieldScanner.with(text, thread, lowered: false) { thread in
                    IndexFieldScanner.with(text, ref, lowered: true) { reference in
                        IndexFields.forEachEntry(
                            seq: seq, at: at, taskID: taskID, identity: identity!, user: user, thread: thread,
                            reference: reference, body)
                    }
                }
            }
        }
    }

    /// Lends a string field's bytes (lowercased with `lowered`), or nil when absent.
    @inline(__always)
    private static func with(
        _ text: Parser, _ field: Field, lowered: Bool, _ body: (UnsafeRawBufferPointer?) -> Void
    ) {
        guard field.kind == .string else { return body(nil) }
        if lowered { text.withLowered(field) { body($0) } } else { text.withBytes(field) { body($0) } }
    }
}
