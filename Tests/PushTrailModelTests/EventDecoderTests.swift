import TestSupport
import Testing

@testable import PushTrailModel

@Suite("Event rules: the envelope")
struct EnvelopeRuleTests {
    @Test("a valid notification, action and delivery decode")
    func validEvents() throws {
        #expect(try decodeEvent(Fixture.notification).type == .notification)
        #expect(try decodeEvent(Fixture.action).type == .action)
        #expect(try decodeEvent(Fixture.delivery).type == .delivery)
    }

    @Test("a line that is not valid JSON is rejected with the parser's position and reason")
    func invalidJSON() {
        #expect(
            rejection(Array(#"{"type":"notification",}"#.utf8))
                == "invalid JSON at byte 24: unexpected '}' in object, expected a key string")
        #expect(rejection([]) == "invalid JSON at byte 1: unexpected end of input, expected a value")
    }

    @Test("an event with a key given twice is rejected")
    func duplicateKey() {
        let line = Fixture.action.text.dropLast() + #","outcome":"ok"}"#
        #expect(rejection(Array(line.utf8))?.contains(#"duplicate key "outcome""#) == true)
    }

    @Test("a JSON value that is not an object is rejected")
    func notAnObject() {
        #expect(rejection(Array("[1,2]".utf8)) == "event is a JSON array, not an object")
        #expect(rejection(Array(#""notification""#.utf8)) == "event is a JSON string, not an object")
        #expect(rejection(Array("42".utf8)) == "event is a JSON number, not an object")
        #expect(rejection(Array("null".utf8)) == "event is a JSON null, not an object")
        #expect(rejection(Array("true".utf8)) == "event is a JSON boolean, not an object")
    }

    @Test("an event without a type is rejected")
    func missingType() {
        #expect(rejection(Fixture.notification.without("type")) == #"missing "type""#)
    }

    @Test("an event with an unknown type is rejected")
    func unknownType() {
        #expect(
            rejection(Fixture.notification.with("type", #""click""#))
                == #""type" is "click"; expected notification, action or delivery"#)
        #expect(rejection(Fixture.notification.with("type", #""Notification""#)) != nil)
    }

    @Test("a type that is not a string is rejected")
    func typeNotString() {
        #expect(rejection(Fixture.notification.with("type", "1")) == #""type" must be a string, not 1"#)
    }

    @Test("an event without an id is rejected")
    func missingID() {
        #expect(rejection(Fixture.action.without("id")) == #"missing "id""#)
    }

    @Test("an empty id is rejected")
    func emptyID() {
        #expect(rejection(Fixture.action.with("id", #""""#)) == #""id" must be 1–128 bytes, not 0"#)
    }

    @Test("an id of 1 and of 128 bytes is accepted, of 129 bytes rejected")
    func idLength() throws {
        #expect(try decodeEvent(Fixture.action.with("id", jsonString("x"))).id == "x")
        let max = String(repeating: "a", count: 128)
        #expect(try decodeEvent(Fixture.action.with("id", jsonString(max))).id == max)
        #expect(
            rejection(Fixture.action.with("id", jsonString(String(repeating: "a", count: 129))))
                == #""id" must be 1–128 bytes, not 129"#)
    }

    @Test("an id's length is counted in UTF-8 bytes, not characters")
    func idLengthInBytes() throws {
        let twoByte = String(repeating: "é", count: 64)  // 128 bytes
        #expect(try decodeEvent(Fixture.action.with("id", jsonString(twoByte))).id == twoByte)
        #expect(
            rejection(Fixture.action.with("id", jsonString(String(repeating: "é", count: 65))))
                == #""id" must be 1–128 bytes, not 130"#)
        // 100 characters, 400 bytes.
        #expect(
            rejection(Fixture.action.with("id", jsonString(String(repeating: "😀", count: 100))))
                == #""id" must be 1–128 bytes, not 400"#)
    }

    @Test("an id's length is counted after unescaping")
    func idLengthUnescaped() throws {
        let escaped = String(repeating: #"\u0061"#, count: 128)  // 768 bytes written, 128 bytes of id
        #expect(
            try decodeEvent(Fixture.action.with("id", jsonString(escaped))).id == String(repeating: "a", count: 128))
    }

    @Test("an id that is not a string is rejected")
    func idNotString() {
        #expect(rejection(Fixture.action.with("id", "5")) == #""id" must be a string, not 5"#)
    }

    @Test("an event without at is rejected")
    func missingAt() {
        #expect(rejection(Fixture.action.without("at")) == #"missing "at""#)
    }

    @Test(
        "an at that is not an RFC 3339 time is rejected with an example of one",
        arguments: [
            "2026-02-30T10:00:00Z", "2025-02-29T10:00:00Z", "2026-04-31T10:00:00Z", "2026-13-01T10:00:00Z",
            "2026-00-10T10:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T10:60:00Z", "2026-11-29T10:00:00",
            "2026-11-29", "2026-11-29T10:00Z", "2026-11-29T10:00:00.Z", "2026-11-29T10:00:00+0200",
            "2026-11-29T10:00:00+24:00",
            "2026-11-29T10:00:00Z ", "yesterday", "",
        ])
    func invalidAt(_ at: String) {
        #expect(
            rejection(Fixture.action.with("at", jsonString(at)))
                == #""at" is "\#(at)"; expected an RFC 3339 time like 2026-11-29T10:00:00Z"#)
    }

    @Test("an at that is not a string is rejected")
    func atNotString() {
        #expect(rejection(Fixture.action.with("at", "1795946400")) == #""at" must be a string, not 1795946400"#)
    }

    @Test("at is converted from its offset to UTC")
    func atOffset() throws {
        let utc = try instant("2026-11-29T10:00:00Z")
        #expect(try decodeEvent(Fixture.action.with("at", #""2026-11-29T12:30:00+02:30""#)).at == utc)
        #expect(try decodeEvent(Fixture.action.with("at", #""2026-11-29T05:00:00-05:00""#)).at == utc)
        #expect(try decodeEvent(Fixture.action.with("at", #""2026-11-29T10:00:00+00:00""#)).at == utc)
        // A negative offset can move the date forward.
        #expect(
            try decodeEvent(Fixture.action.with("at", #""2026-12-31T23:30:00-01:00""#)).at
                == instant("2027-01-01T00:30:00Z"))
    }

    @Test("at keeps fractional seconds to the microsecond and truncates finer digits")
    func atFraction() throws {
        let whole = try instant("2026-11-29T10:00:00Z")
        func at(_ text: String) throws -> Timestamp { try decodeEvent(Fixture.action.with("at", jsonString(text))).at }
        #expect(try at("2026-11-29T10:00:00.5Z") == Timestamp(microseconds: whole.microseconds + 500_000))
        #expect(try at("2026-11-29T10:00:00.000001Z") == Timestamp(microseconds: whole.microseconds + 1))
        #expect(try at("2026-11-29T10:00:00.1234569Z") == Timestamp(microseconds: whole.microseconds + 123_456))
        #expect(try at("2026-11-29T10:00:00.999999999+00:00") == Timestamp(microseconds: whole.microseconds + 999_999))
    }

    @Test("at accepts a lowercase t and z, as RFC 3339 allows")
    func atLowercase() throws {
        #expect(
            try decodeEvent(Fixture.action.with("at", #""2026-11-29t10:00:00z""#)).at == instant("2026-11-29T10:00:00Z")
        )
    }

    @Test("an event without a user is rejected")
    func missingUser() {
        #expect(rejection(Fixture.delivery.without("user")) == #"missing "user""#)
    }

    @Test("a user of 1 to 256 bytes is accepted and other lengths rejected")
    func userLength() throws {
        #expect(rejection(Fixture.delivery.with("user", #""""#)) == #""user" must be 1–256 bytes, not 0"#)
        #expect(try decodeEvent(Fixture.delivery.with("user", #""u""#)).user == "u")
        let max = String(repeating: "u", count: 256)
        #expect(try decodeEvent(Fixture.delivery.with("user", jsonString(max))).user == max)
        #expect(
            rejection(Fixture.delivery.with("user", jsonString(max + "u"))) == #""user" must be 1–256 bytes, not 257"#)
        #expect(
            rejection(Fixture.delivery.with("user", jsonString(String(repeating: "ü", count: 129))))
                == #""user" must be 1–256 bytes, not 258"#)
    }

    @Test("a user that is not a string is rejected")
    func userNotString() {
        #expect(rejection(Fixture.delivery.with("user", "17")) == #""user" must be a string, not 17"#)
    }

    @Test("a device must be a string when present")
    func device() throws {
        #expect(try decodeEvent(Fixture.notification).device == nil)
        #expect(try decodeEvent(Fixture.notification.with("device", #""a1b2c3""#)).device == "a1b2c3")
        #expect(rejection(Fixture.notification.with("device", "42")) == #""device" must be a string, not 42"#)
        #expect(rejection(Fixture.notification.with("device", "null")) == #""device" must be a string, not null"#)
    }

    @Test("unknown fields are accepted")
    func unknownFields() throws {
        let line = Fixture.notification
            .with("platform", #""ios""#).with("push_type", #""alert""#).with("priority", "10")
            .with("collapse_id", #""c""#).with("expiration", "0")
            .with("x_custom", #"{"nested":[1,{"deep":null}],"n":1.5e3}"#).with("zzz", "null")
        #expect(try decodeEvent(line).type == .notification)
        #expect(try decodeEvent(Fixture.action.with("trace", #"["a","b"]"#)).type == .action)
        #expect(try decodeEvent(Fixture.delivery.with("apns_unique_id", #""x""#)).type == .delivery)
    }

    /// `Fixture.notification` padded with an unknown field to exactly `size` bytes.
    func notificationLine(ofSize size: Int) -> [UInt8] {
        let base = Fixture.notification.with("pad", #""""#).bytes.count
        return Fixture.notification.with("pad", jsonString(String(repeating: "p", count: size - base))).bytes
    }

    @Test("a line of exactly 64 KiB is accepted")
    func lineAtLimit() throws {
        let line = notificationLine(ofSize: 65_536)
        #expect(line.count == 65_536)
        #expect(try decodeEvent(line).type == .notification)
    }

    @Test("a line over 64 KiB is rejected")
    func lineOverLimit() {
        let line = notificationLine(ofSize: 65_537)
        #expect(line.count == 65_537)
        #expect(rejection(line) == "line is 65537 bytes, over the limit of 65536 (64 KiB)")
    }

    @Test("a line that starts with a UTF-8 byte-order mark is rejected")
    func byteOrderMark() {
        #expect(
            rejection([0xEF, 0xBB, 0xBF] + Fixture.notification.bytes)
                == "line starts with a byte-order mark (U+FEFF); save the file as UTF-8 without BOM")
    }

    @Test("a line decodes from a slice of a larger buffer")
    func decodeSlice() throws {
        let buffer = Array("garbage\n".utf8) + Fixture.notification.bytes + Array("\nmore".utf8)
        let slice = buffer[8..<(8 + Fixture.notification.bytes.count)]
        var decoder = EventDecoder()
        let event = try decoder.decode(slice)
        #expect(event == (try decodeEvent(Fixture.notification)))
        #expect(event.notification?.payloadSize == Fixture.payload.utf8.count)
    }

    @Test("a long value is cut in the reason so that it stays one short line")
    func longValueShown() throws {
        let reason = try #require(
            rejection(Fixture.action.with("type", jsonString(String(repeating: "x", count: 500)))))
        #expect(reason.count < 120)
        #expect(reason.contains(String(repeating: "x", count: 40) + "…"))
    }

    @Test("control characters of a value are not copied into the reason")
    func controlCharactersNotShown() throws {
        let reason = try #require(rejection(Fixture.action.with("type", #""a\nb""#)))
        #expect(!reason.contains("\n"))
    }
}

@Suite("Event rules: notifications")
struct NotificationRuleTests {
    func payload(_ text: String) -> EventLine { Fixture.notification.with("payload", text) }

    @Test("a notification without a payload is rejected")
    func missingPayload() {
        #expect(rejection(Fixture.notification.without("payload")) == #"notification has no "payload""#)
    }

    @Test("a payload that is not an object is rejected")
    func payloadNotObject() {
        #expect(rejection(payload("5")) == #""payload" must be an object, not a number"#)
        #expect(rejection(payload(#""{}""#)) == #""payload" must be an object, not a string"#)
    }

    @Test("a payload that is an array or null is rejected with a grammatical reason")
    func payloadArray() {
        #expect(rejection(payload(#"[{"aps":{}}]"#)) == #""payload" must be an object, not an array"#)
        #expect(rejection(payload("null")) == #""payload" must be an object, not null"#)
    }

    @Test("a payload without aps is rejected")
    func missingAPS() {
        #expect(rejection(payload(#"{"task_id":7}"#)) == #""payload" has no "aps" object"#)
        // aps elsewhere does not count.
        #expect(
            rejection(Fixture.notification.with("aps", "{}").with("payload", "{}")) == #""payload" has no "aps" object"#
        )
    }

    @Test("an aps that is not an object is rejected")
    func apsNotObject() {
        #expect(rejection(payload(#"{"aps":"alert"}"#)) == #""payload.aps" must be an object, not a string"#)
        #expect(rejection(payload(#"{"aps":true}"#)) == #""payload.aps" must be an object, not a boolean"#)
    }

    @Test("the smallest payload, an empty aps, is accepted")
    func emptyAPS() throws {
        let n = try #require(try decodeEvent(payload(#"{"aps":{}}"#)).notification)
        #expect(n.threadID == nil && n.category == nil && n.title == nil && n.body == nil && n.taskID == nil)
        #expect(n.buttons == nil && n.isPremium == nil)
        #expect(n.payloadSize == 10)
    }

    @Test("a thread-id of 1 to 255 bytes is accepted and other lengths rejected")
    func threadIDLength() throws {
        func line(_ thread: String) -> EventLine { payload(#"{"aps":{"thread-id":"\#(thread)"}}"#) }
        #expect(rejection(line("")) == #""payload.aps.thread-id" must be 1–255 bytes, not 0"#)
        #expect(try decodeEvent(line("t")).threadID == "t")
        let max = String(repeating: "t", count: 255)
        #expect(try decodeEvent(line(max)).threadID == max)
        #expect(rejection(line(max + "t")) == #""payload.aps.thread-id" must be 1–255 bytes, not 256"#)
    }

    @Test("a thread-id that is not a string is rejected")
    func threadIDNotString() {
        #expect(rejection(payload(#"{"aps":{"thread-id":7}}"#)) == #""payload.aps.thread-id" must be a string, not 7"#)
    }

    @Test("a category that is not a string is rejected")
    func categoryNotString() {
        #expect(
            rejection(payload(#"{"aps":{"category":["A"]}}"#)) == #""payload.aps.category" must be a string, not ["A"]"#
        )
    }

    @Test("an alert string is the body")
    func alertString() throws {
        let n = try #require(try decodeEvent(payload(#"{"aps":{"alert":"Take out the bins"}}"#)).notification)
        #expect(n.body == "Take out the bins")
        #expect(n.title == nil)
        #expect(n.subtitle == nil)
    }

    @Test("an alert object gives title, subtitle and body")
    func alertObject() throws {
        let n = try #require(
            try decodeEvent(payload(#"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B\u00e9","loc-key":"K"}}}"#))
                .notification)
        #expect(n.title == "T")
        #expect(n.subtitle == "S")
        #expect(n.body == "Bé")
        let partial = try #require(try decodeEvent(payload(#"{"aps":{"alert":{"title":"Only"}}}"#)).notification)
        #expect(partial.title == "Only")
        #expect(partial.body == nil)
    }

    @Test("an alert that is neither a string nor an object is rejected")
    func alertNumber() {
        #expect(
            rejection(payload(#"{"aps":{"alert":5}}"#))
                == #""payload.aps.alert" must be a string or an object, not a number"#)
        #expect(
            rejection(payload(#"{"aps":{"alert":null}}"#))?.hasPrefix(
                #""payload.aps.alert" must be a string or an object"#) == true)
    }

    @Test("alert fields that are not strings are rejected")
    func alertFieldNotString() {
        #expect(
            rejection(payload(#"{"aps":{"alert":{"title":1}}}"#))
                == #""payload.aps.alert.title" must be a string, not 1"#)
        #expect(
            rejection(payload(#"{"aps":{"alert":{"body":{"x":1}}}}"#))
                == #""payload.aps.alert.body" must be a string, not {"x":1}"#)
    }

    @Test("a payload task_id must be an integer")
    func taskIDInteger() throws {
        func line(_ task: String) -> EventLine { payload(#"{"aps":{},"task_id":\#(task)}"#) }
        #expect(try decodeEvent(line("12")).taskID == 12)
        #expect(try decodeEvent(line("-3")).taskID == -3)
        #expect(try decodeEvent(line("9223372036854775807")).taskID == Int64.max)
        #expect(rejection(line("1.5")) == #""payload.task_id" must be an integer, not 1.5"#)
        #expect(rejection(line(#""12""#)) == #""payload.task_id" must be an integer, not "12""#)
        #expect(
            rejection(line("9223372036854775808")) == #""payload.task_id" must be an integer, not 9223372036854775808"#)
        #expect(rejection(line("null")) == #""payload.task_id" must be an integer, not null"#)
    }

    @Test("button_types must be an array of strings")
    func buttonTypes() throws {
        func line(_ buttons: String) -> EventLine { payload(#"{"aps":{},"button_types":\#(buttons)}"#) }
        #expect(try decodeEvent(line(#"["edit","complete"]"#)).notification?.buttons == ["edit", "complete"])
        #expect(try decodeEvent(line("[]")).notification?.buttons == [])
        #expect(rejection(line(#""edit""#)) == #""payload.button_types" must be an array of strings"#)
        #expect(rejection(line(#"["edit",1]"#)) == #""payload.button_types" must be an array of strings"#)
        #expect(rejection(line(#"[["edit"]]"#)) == #""payload.button_types" must be an array of strings"#)
    }

    @Test("is_premium must be a boolean")
    func isPremium() throws {
        func line(_ value: String) -> EventLine { payload(#"{"aps":{},"is_premium":\#(value)}"#) }
        #expect(try decodeEvent(line("true")).notification?.isPremium == true)
        #expect(try decodeEvent(line("false")).notification?.isPremium == false)
        #expect(rejection(line(#""yes""#)) == #""payload.is_premium" must be true or false, not "yes""#)
        #expect(rejection(line("1")) == #""payload.is_premium" must be true or false, not 1"#)
    }

    @Test("custom text keys must be strings when present")
    func customTextKeys() {
        #expect(rejection(payload(#"{"aps":{},"task_name":1}"#)) == #""payload.task_name" must be a string, not 1"#)
        #expect(
            rejection(payload(#"{"aps":{},"residence_name":false}"#))
                == #""payload.residence_name" must be a string, not false"#)
        #expect(
            rejection(payload(#"{"aps":{},"notification_type":{}}"#))
                == #""payload.notification_type" must be a string, not {}"#)
    }

    @Test("a topic must be a string")
    func topic() throws {
        #expect(
            try decodeEvent(Fixture.notification.with("topic", #""com.example.app""#)).notification?.topic
                == "com.example.app")
        #expect(rejection(Fixture.notification.with("topic", "5")) == #""topic" must be a string, not 5"#)
    }

    @Test("a payload over 4096 bytes is accepted")
    func largePayload() throws {
        let name = String(repeating: "n", count: 5000)
        let n = try #require(try decodeEvent(payload(#"{"aps":{},"task_name":"\#(name)"}"#)).notification)
        #expect(n.taskName == name)
        #expect(n.payloadSize > 4096)
    }
}

@Suite("Event rules: actions")
struct ActionRuleTests {
    @Test("an action without task_id is rejected")
    func missingTaskID() {
        #expect(rejection(Fixture.action.without("task_id")) == #"action has no "task_id""#)
    }

    @Test("an action task_id must be an integer")
    func taskIDInteger() {
        #expect(rejection(Fixture.action.with("task_id", #""7""#)) == #""task_id" must be an integer, not "7""#)
        #expect(rejection(Fixture.action.with("task_id", "7.5")) == #""task_id" must be an integer, not 7.5"#)
    }

    @Test(
        "every documented action is accepted",
        arguments: ["complete", "cancel", "uncancel", "delete", "mark_in_progress", "edit", "open", "dismiss"])
    func knownActions(_ name: String) throws {
        let action = try #require(try decodeEvent(Fixture.action.with("action", jsonString(name))).actionResponse)
        #expect(action.action.rawValue == name)
    }

    @Test("an action not in the documented list is rejected, naming the list")
    func unknownAction() throws {
        let reason = try #require(rejection(Fixture.action.with("action", #""snooze""#)))
        let prefix = #""action" is "snooze"; expected one of "#
        #expect(reason.hasPrefix(prefix))
        let listed = Set(reason.dropFirst(prefix.count).components(separatedBy: ", "))
        #expect(listed == ["complete", "cancel", "uncancel", "delete", "mark_in_progress", "edit", "open", "dismiss"])
        #expect(rejection(Fixture.action.with("action", #""Complete""#)) != nil)
        #expect(rejection(Fixture.action.with("action", #""markInProgress""#)) != nil)
    }

    @Test("an action without action is rejected")
    func missingAction() {
        #expect(rejection(Fixture.action.without("action")) == #"missing "action""#)
    }

    @Test("an outcome must be ok, rejected or failed")
    func outcome() throws {
        for name in ["ok", "rejected", "failed"] {
            #expect(
                try decodeEvent(Fixture.action.with("outcome", jsonString(name))).actionResponse?.outcome.rawValue
                    == name)
        }
        #expect(
            rejection(Fixture.action.with("outcome", #""maybe""#))
                == #""outcome" is "maybe"; expected ok, rejected or failed"#)
        #expect(rejection(Fixture.action.without("outcome")) == #"missing "outcome""#)
    }

    @Test("http_status must be an integer from 100 to 599")
    func httpStatus() throws {
        #expect(try decodeEvent(Fixture.action.with("http_status", "100")).actionResponse?.httpStatus == 100)
        #expect(try decodeEvent(Fixture.action.with("http_status", "599")).actionResponse?.httpStatus == 599)
        #expect(try decodeEvent(Fixture.action).actionResponse?.httpStatus == nil)
        #expect(
            rejection(Fixture.action.with("http_status", "99"))
                == #""http_status" must be an integer from 100 to 599, not 99"#)
        #expect(
            rejection(Fixture.action.with("http_status", "600"))
                == #""http_status" must be an integer from 100 to 599, not 600"#)
        #expect(
            rejection(Fixture.action.with("http_status", #""409""#))
                == #""http_status" must be an integer from 100 to 599, not "409""#)
        #expect(rejection(Fixture.action.with("http_status", "200.0")) != nil)
    }

    @Test("an error must be a string")
    func errorField() throws {
        #expect(try decodeEvent(Fixture.action.with("error", #""conflict""#)).actionResponse?.error == "conflict")
        #expect(rejection(Fixture.action.with("error", "409")) == #""error" must be a string, not 409"#)
    }

    @Test("changes must be an object")
    func changesNotObject() {
        #expect(rejection(Fixture.action.with("changes", #""x""#)) == #""changes" must be an object, not a string"#)
        #expect(rejection(Fixture.action.with("changes", "7")) == #""changes" must be an object, not a number"#)
    }

    @Test("changes that are an array are rejected with a grammatical reason")
    func changesArray() {
        #expect(
            rejection(Fixture.action.with("changes", #"[{"a":1}]"#)) == #""changes" must be an object, not an array"#)
    }

    @Test("changes are kept in order, strings as text and other values as JSON")
    func changes() throws {
        let line = Fixture.action.with("action", #""edit""#)
            .with(
                "changes",
                #"{"task_name":"Paint \"fence\"","due_date":"2026-12-01","count":3,"flag":null,"list":[1, 2]}"#)
        let action = try #require(try decodeEvent(line).actionResponse)
        #expect(action.changes.map(\.key) == ["task_name", "due_date", "count", "flag", "list"])
        #expect(
            action.changes.map(\.value) == [
                .string("Paint \"fence\""), .string("2026-12-01"), .json("3"), .json("null"), .json("[1, 2]"),
            ])
    }

    @Test("an action's notification_id is lowercased and thread_id kept")
    func references() throws {
        let line = Fixture.action.with("notification_id", jsonString(Fixture.notificationID)).with(
            "thread_id", #""Task-7""#)
        let event = try decodeEvent(line)
        #expect(event.actionResponse?.notificationID == Fixture.notificationID.lowercased())
        #expect(event.referencedNotificationID == Fixture.notificationID.lowercased())
        #expect(event.threadID == "Task-7")
        #expect(event.taskID == 7)
    }

    @Test("an action's notification_id and thread_id must not be empty")
    func emptyReferences() {
        #expect(
            rejection(Fixture.action.with("notification_id", #""""#))
                == #""notification_id" must be 1–128 bytes, not 0"#)
        #expect(rejection(Fixture.action.with("thread_id", #""""#)) == #""thread_id" must be 1–255 bytes, not 0"#)
    }

    @Test("an action's id keeps its case in its identity key")
    func actionIdentityKey() throws {
        let event = try decodeEvent(Fixture.action.with("id", #""Act-ABC""#))
        #expect(event.identityKey == Array("Act-ABC".utf8))
    }
}

@Suite("Event rules: deliveries")
struct DeliveryRuleTests {
    @Test("a delivery without notification_id is rejected")
    func missingNotificationID() {
        #expect(rejection(Fixture.delivery.without("notification_id")) == #"delivery has no "notification_id""#)
        #expect(
            rejection(Fixture.delivery.with("notification_id", #""""#))
                == #""notification_id" must be 1–128 bytes, not 0"#)
        #expect(
            rejection(Fixture.delivery.with("notification_id", "1")) == #""notification_id" must be a string, not 1"#)
    }

    @Test("a delivery without status is rejected")
    func missingStatus() {
        #expect(rejection(Fixture.delivery.without("status")) == #"delivery has no "status""#)
    }

    @Test("a delivery status must be an integer from 100 to 599")
    func status() throws {
        #expect(try decodeEvent(Fixture.delivery.with("status", "100")).delivery?.status == 100)
        #expect(try decodeEvent(Fixture.delivery.with("status", "599")).delivery?.status == 599)
        for bad in ["99", "600", "-200", #""200""#, "200.5", "null"] {
            #expect(
                rejection(Fixture.delivery.with("status", bad))
                    == #""status" must be an integer HTTP status from 100 to 599, not \#(bad)"#)
        }
    }

    @Test("a delivery's notification_id is lowercased and its reason kept")
    func decoded() throws {
        let event = try decodeEvent(Fixture.delivery.with("status", "410").with("reason", #""Unregistered""#))
        let delivery = try #require(event.delivery)
        #expect(delivery.notificationID == Fixture.notificationID.lowercased())
        #expect(delivery.status == 410)
        #expect(delivery.reason == "Unregistered")
        #expect(event.referencedNotificationID == Fixture.notificationID.lowercased())
        #expect(event.taskID == nil)
        #expect(event.threadID == nil)
    }

    @Test("a delivery reason must be a string")
    func reasonNotString() {
        #expect(rejection(Fixture.delivery.with("reason", "5")) == #""reason" must be a string, not 5"#)
    }
}

@Suite("Decoded notifications")
struct DecodedNotificationTests {
    @Test("a notification decodes every field pushtrail reads")
    func allFields() throws {
        let event = try decodeEvent(Fixture.notification.with("device", #""tok""#))
        #expect(event.id == Fixture.notificationID)
        #expect(try event.at == instant("2026-11-29T10:00:00Z"))
        #expect(event.user == "user-1")
        #expect(event.device == "tok")
        let n = try #require(event.notification)
        #expect(n.threadID == "task-7")
        #expect(n.category == "TASK_ACTIONABLE")
        #expect(n.title == "Clean gutters")
        #expect(n.subtitle == "Home")
        #expect(n.body == "Due tomorrow")
        #expect(n.taskID == 7)
        #expect(n.taskName == "Clean gutters")
        #expect(n.residenceID == .json("12"))
        #expect(n.residenceName == "Home")
        #expect(n.dueDate == .string("2026-12-01"))
        #expect(n.notificationType == "task_reminder")
        #expect(n.buttons == ["edit", "complete", "cancel", "mark_in_progress"])
        #expect(n.isPremium == true)
        #expect(n.topic == nil)
        #expect(event.taskID == 7)
        #expect(event.threadID == "task-7")
        #expect(event.referencedNotificationID == nil)
        #expect(event.actionResponse == nil && event.delivery == nil)
    }

    @Test("a notification's identity key is its id lowercased")
    func identityKey() throws {
        let event = try decodeEvent(Fixture.notification)
        #expect(event.id == Fixture.notificationID)
        #expect(event.identityKey == Array(Fixture.notificationID.lowercased().utf8))
        #expect(EventID.normalizedNotificationIDString("AbC-é-Z") == "abc-é-z")
    }

    @Test("residence_id is kept as text or as JSON, whichever it was")
    func residenceID() throws {
        func residence(_ value: String) throws -> FieldValue? {
            try decodeEvent(Fixture.notification.with("payload", #"{"aps":{},"residence_id":\#(value)}"#)).notification?
                .residenceID
        }
        #expect(try residence("12") == .json("12"))
        #expect(try residence(#""r-12""#) == .string("r-12"))
        #expect(try residence(#""12""#) == .string("12"))
        #expect(try residence("null") == .json("null"))
        #expect(FieldValue.string("r").description == "r")
        #expect(FieldValue.json("12").description == "12")
    }

    @Test("the payload size is the payload's bytes less the whitespace outside strings")
    func payloadSize() throws {
        let spaced =
            #"{ "aps" : { "alert" : "Hi  there" , "badge" : 1 } ,"#
            + "\n\t" + #" "task_name" : "Mow  the lawn" }"#
        let compact = #"{"aps":{"alert":"Hi  there","badge":1},"task_name":"Mow  the lawn"}"#
        let n = try #require(try decodeEvent(Fixture.notification.with("payload", spaced)).notification)
        #expect(n.payloadSize == compact.utf8.count)
        let fixture = try #require(try decodeEvent(Fixture.notification).notification)
        #expect(fixture.payloadSize == Fixture.payload.utf8.count)
    }
}

@Suite("platform: iOS and Android are read, anything else is refused with its reason")
struct PlatformTests {
    @Test("no platform, or ios, is an APNs notification")
    func ios() throws {
        #expect(rejection(Fixture.notification) == nil)
        #expect(rejection(Fixture.notification.with("platform", #""ios""#)) == nil)
    }

    @Test("android is an FCM message: no aps needed, its fields come from the data map")
    func android() throws {
        #expect(rejection(Fixture.androidNotification) == nil)
        let n = try #require(try decodeEvent(Fixture.androidNotification).notification)
        #expect(n.platform == .android)
        // An APNs body under platform android is read as an FCM message: no data, no fields.
        let apns = try #require(try decodeEvent(Fixture.notification.with("platform", #""android""#)).notification)
        #expect(apns.platform == .android && apns.taskID == nil && apns.threadID == nil)
    }

    @Test("any other platform, in any case, is a bad line naming the two it could be")
    func others() {
        for name in ["windows", "IOS", "Android", ""] {
            #expect(
                rejection(Fixture.notification.with("platform", jsonString(name)))
                    == "\"platform\" is \"\(name)\"; expected ios or android", "\(name)")
        }
        #expect(rejection(Fixture.notification.with("platform", "5")) == #""platform" must be a string, not 5"#)
    }
}
