import PushTrailModel
import TestSupport
import Testing

/// The fixture's Android notification with its data map replaced.
private func withData(_ data: String) -> EventLine {
    Fixture.androidNotification.with("payload", #"{"token":""# + Fixture.fcmToken + #"","data":"# + data + "}")
}

private func android(_ line: EventLine) throws -> PushNotification {
    try #require(try decodeEvent(line).notification)
}

@Suite("Android notifications: the FCM message's data map, read as strings")
struct AndroidDecoderTests {
    @Test("every field of the fixture is read from the data map, the device from payload.token")
    func fields() throws {
        let event = try decodeEvent(Fixture.androidNotification)
        let n = try #require(event.notification)
        #expect(n.platform == .android)
        #expect(event.device == Fixture.fcmToken)
        #expect(n.taskID == 7 && n.threadID == "task-7" && n.category == "TASK_ACTIONABLE")
        #expect(n.title == "Clean gutters" && n.subtitle == "Home" && n.body == "Due tomorrow")
        #expect(n.taskName == "Clean gutters" && n.residenceName == "Home")
        #expect(n.residenceID == .string("12") && n.dueDate == .string("2026-12-01"))
        #expect(n.notificationType == "task_reminder" && n.isPremium == true)
        #expect(n.buttons == ["complete", "cancel", "mark_in_progress"])
        #expect(n.shownButtons == ["complete", "cancel", "mark_in_progress"])
        #expect(n.notificationBlocks.isEmpty && n.dataProblems.isEmpty)
        // The filing decode agrees on what the store files.
        var decoder = EventDecoder()
        #expect(try decoder.decodeForFiling(Fixture.androidNotification.bytes) == event.filing)
    }

    @Test("button_types: a JSON array in a string, a comma list (spaces ignored), empty, or an array")
    func buttonForms() throws {
        let forms: [(String, [String])] = [
            (#""[\"complete\",\"cancel\"]""#, ["complete", "cancel"]),
            (#"" [ \"complete\" , \"cancel\" ] ""#, ["complete", "cancel"]),
            (#""complete,cancel""#, ["complete", "cancel"]),
            (#""complete , cancel""#, ["complete", "cancel"]),
            (#""[]""#, []),
            (#""""#, []),
            (#"["complete","cancel"]"#, ["complete", "cancel"]),
            // Names with escapes or beyond ASCII go through the JSON parser.
            (#""[\"r\\u00e9gler\",\"a\\\"b\"]""#, ["régler", "a\"b"]),
            (#""[\"été\"]""#, ["été"]),
            (#""[\t\"a\"\n]""#, ["a"]),
        ]
        for (value, expected) in forms {
            #expect(try android(withData(#"{"button_types":"# + value + "}")).buttons == expected, "\(value)")
        }
    }

    @Test("a bad field is a bad line whose reason names the field's path and the forms allowed")
    func badFields() {
        let cases: [(String, String)] = [
            (#"{"task_id":"7a"}"#, #""payload.data.task_id" must be a string of decimal digits, not "7a""#),
            (#"{"task_id":""}"#, #""payload.data.task_id" must be a string of decimal digits, not """#),
            (#"{"task_id":"-7"}"#, #""payload.data.task_id" must be a string of decimal digits, not "-7""#),
            (
                #"{"task_id":"99999999999999999999"}"#,
                #""payload.data.task_id" must be a string of decimal digits, not "99999999999999999999""#
            ),
            (#"{"task_id":true}"#, #""payload.data.task_id" must be a string of decimal digits, not true"#),
            (#"{"is_premium":"yes"}"#, #""payload.data.is_premium" must be "true" or "false", not "yes""#),
            (#"{"is_premium":1}"#, #""payload.data.is_premium" must be "true" or "false", not 1"#),
            (#"{"thread_id":""}"#, #""payload.data.thread_id" must be 1–255 bytes, not 0"#),
            (#"{"thread_id":7}"#, #""payload.data.thread_id" must be a string, not 7"#),
            (#"{"category":["A"]}"#, #""payload.data.category" must be a string, not ["A"]"#),
        ]
        for (data, reason) in cases {
            #expect(rejection(withData(data)) == reason, "\(data)")
        }
        for bad in [
            #""[\"a\",]""#, #""[\"a\"] x""#, #""[\"a\" \"b\"]""#, #""[\"a\u0001\"]""#, #""complete,,cancel""#,
            #""[\"complete\"""#, #""[1,2]""#, #""{}""#, "5", #"[1]"#,
        ] {
            #expect(
                rejection(withData(#"{"button_types":"# + bad + "}"))?.hasPrefix(
                    #""payload.data.button_types" must be a JSON array of names in a string"#) == true, "\(bad)")
        }
    }

    @Test("data, notification, android and its data and notification must be objects")
    func objects() {
        let token = #""token":""# + Fixture.fcmToken + #"""#
        let cases: [(String, String)] = [
            (#"{"data":"x"}"#, #""payload.data" must be an object, not a string"#),
            (#"{"notification":[]}"#, #""payload.notification" must be an object, not an array"#),
            (#"{"android":null}"#, #""payload.android" must be an object, not null"#),
            (#"{"android":{"data":1}}"#, #""payload.android.data" must be an object, not a number"#),
            (
                #"{"android":{"notification":true}}"#,
                #""payload.android.notification" must be an object, not a boolean"#
            ),
            (#"{"notification":{"title":5}}"#, #""payload.notification.title" must be a string, not 5"#),
            (
                "{" + token + #","token2":1,"data":{"task_id":"x"}}"#,
                #""payload.data.task_id" must be a string of decimal digits, not "x""#
            ),
        ]
        for (payload, reason) in cases {
            #expect(rejection(Fixture.androidNotification.with("payload", payload)) == reason, "\(payload)")
        }
    }

    @Test("the token: payload.token or device; both must be the same token")
    func token() throws {
        let both = Fixture.androidNotification.with("device", jsonString(Fixture.fcmToken))
        #expect(try decodeEvent(both).device == Fixture.fcmToken)
        let differ = Fixture.androidNotification.with("device", #""another-token""#)
        #expect(
            rejection(differ) == #""device" and "payload.token" are different tokens; a message goes to one device"#)
        // A topic message names no token: the envelope's device stands (or none).
        let topic = Fixture.androidNotification.with("payload", #"{"topic":"news","data":{"task_id":"7"}}"#)
        #expect(try decodeEvent(topic).device == nil)
        #expect(try decodeEvent(topic.with("device", #""dev-1""#)).device == "dev-1")
        #expect(
            rejection(Fixture.androidNotification.with("payload", #"{"token":7}"#))
                == #""payload.token" must be a string, not 7"#)
        #expect(rejection(Fixture.androidNotification.with("project", "1")) == #""project" must be a string, not 1"#)
    }

    @Test("a task id of decimal digits: leading zeros allowed, up to Int64.max")
    func decimal() {
        func value(_ s: String) -> Int64? { Array(s.utf8).withUnsafeBytes(FCMRules.decimal) }
        #expect(value("007") == 7)
        #expect(value("0") == 0)
        #expect(value("9223372036854775807") == Int64.max)
        #expect(value("9223372036854775808") == nil)
        for bad in ["", "-1", "+1", "1.0", "1e3", " 1", "1 ", "١"] { #expect(value(bad) == nil, "\(bad)") }
    }

    @Test("android.data replaces data, as FCM delivers it")
    func androidDataWins() throws {
        let payload = #"{"data":{"task_id":"1","thread_id":"task-1"},"android":{"data":{"task_id":"2"}}}"#
        let n = try android(Fixture.androidNotification.with("payload", payload))
        #expect(n.taskID == 2 && n.threadID == nil)
        // Both maps are still checked, and counted.
        let bad = #"{"data":{"task_id":"x"},"android":{"data":{"task_id":"2"}}}"#
        #expect(try android(Fixture.androidNotification.with("payload", bad)).taskID == 2)
    }

    @Test("title and body: the data map's, else android.notification's, else notification's")
    func titleFallback() throws {
        let payload =
            #"{"notification":{"title":"N title","body":"N body"},"#
            + #""android":{"notification":{"title":"A title"}},"data":{"task_id":"7"}}"#
        let n = try android(Fixture.androidNotification.with("payload", payload))
        #expect(n.title == "A title" && n.body == "N body")
        #expect(n.notificationBlocks == ["payload.notification", "payload.android.notification"])
        let own = try android(withData(#"{"title":"D","body":"E"}"#))
        #expect(own.title == "D" && own.body == "E")
    }

    @Test("values of the iOS type are read as they are and noted as data FCM refuses; reserved keys too")
    func iosTypedValues() throws {
        let n = try android(
            withData(
                #"{"task_id":7,"is_premium":false,"button_types":["complete"],"residence_id":12,"#
                    + #""google.sent_time":"1","from":"x","ok":"y"}"#))
        #expect(n.taskID == 7 && n.isPremium == false && n.buttons == ["complete"] && n.residenceID == .json("12"))
        #expect(
            n.dataProblems == [
                DataProblem(map: "payload.data", key: "task_id", kind: .notString("number")),
                DataProblem(map: "payload.data", key: "is_premium", kind: .notString("boolean")),
                DataProblem(map: "payload.data", key: "button_types", kind: .notString("array")),
                DataProblem(map: "payload.data", key: "residence_id", kind: .notString("number")),
                DataProblem(map: "payload.data", key: "google.sent_time", kind: .reservedKey),
                DataProblem(map: "payload.data", key: "from", kind: .reservedKey),
            ])
        #expect(try android(Fixture.androidNotification).dataProblems.isEmpty)
        for key in ["from", "message_type", "collapse_key", "google.x", "gcm.n.e"] {
            #expect(FCMRules.isReservedKey(key), "\(key)")
        }
        for key in ["fromage", "google", "gcm", "Google.x", "task_id"] {
            #expect(!FCMRules.isReservedKey(key), "\(key)")
        }
    }

    @Test("the size FCM counts: data keys and values of both maps, notification titles and bodies")
    func size() throws {
        let payload =
            #"{"token":"tok","data":{"ab":"cd\u00e9"},"android":{"data":{"k":"v"},"#
            + #""notification":{"title":"T","body":"BB","icon":"ignored"}},"notification":{"title":"x"}}"#
        let n = try android(Fixture.androidNotification.with("payload", payload))
        // ab + cdé (4 bytes) + k + v + T + BB + x
        #expect(n.payloadSize == 2 + 4 + 1 + 1 + 1 + 2 + 1)
    }

    @Test("shown buttons: button_types in order, else the Android set of the category, at most three")
    func shownButtons() throws {
        let four = try android(
            withData(#"{"category":"TASK_ACTIONABLE","button_types":"edit,complete,cancel,mark_in_progress"}"#))
        #expect(four.shownButtons == ["edit", "complete", "cancel"])
        let none = try android(withData(#"{"category":"TASK_ACTIONABLE"}"#))
        #expect(none.shownButtons == ["complete", "cancel", "mark_in_progress"])
        let progress = try android(withData(#"{"category":"TASK_IN_PROGRESS"}"#))
        #expect(progress.shownButtons == ["edit", "complete", "cancel"])
        let completed = try android(withData(#"{"category":"TASK_COMPLETED"}"#))
        #expect(completed.shownButtons.isEmpty)
        // iOS: the category's registered set, whatever button_types says.
        let ios = try #require(try decodeEvent(Fixture.notification).notification)
        #expect(ios.shownButtons == ["edit", "complete", "cancel", "mark_in_progress"])
    }

    @Test("FCM deliveries: message_id is read; it must be a string")
    func delivery() throws {
        let d = try #require(
            try decodeEvent(Fixture.delivery.with("message_id", #""projects/p/messages/0:1%ab""#)).delivery)
        #expect(d.messageID == "projects/p/messages/0:1%ab")
        #expect(rejection(Fixture.delivery.with("message_id", "5")) == #""message_id" must be a string, not 5"#)
    }

    @Test("a token is dead after APNs' 410 or FCM's 404 UNREGISTERED, not after other 404s or 400s")
    func deadTokens() {
        #expect(Delivery.declaresTokenDead(status: 410, reason: "Unregistered"))
        #expect(Delivery.declaresTokenDead(status: 410, reason: nil))
        #expect(Delivery.declaresTokenDead(status: 404, reason: "UNREGISTERED"))
        #expect(!Delivery.declaresTokenDead(status: 404, reason: nil))
        #expect(!Delivery.declaresTokenDead(status: 404, reason: "NOT_FOUND"))
        #expect(!Delivery.declaresTokenDead(status: 400, reason: "INVALID_ARGUMENT"))
        #expect(!Delivery.declaresTokenDead(status: 200, reason: "UNREGISTERED"))
    }
}
