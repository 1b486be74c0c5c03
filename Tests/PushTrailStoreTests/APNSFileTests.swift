import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

@Suite("APNS file import")
struct APNSFileTests {
    static let file = """
        {
            "aps" : { "alert" : { "title" : "Clean  gutters", "body" : "Due tomorrow" }, \
        "category" : "TASK_ACTIONABLE" },
            "Simulator Target Bundle" : "com.example.homeapp",
            "task_id" : 7,
            "button_types" : [ "edit", "complete" ],
            "residence_id" : 1.50e1
        }
        """

    let at = utcSeconds(referenceSeconds, micros: 123_000)

    func line(
        _ contents: String = APNSFileTests.file, user: String = "user-1", at: Timestamp? = nil, id: String? = nil,
        topic: String? = nil
    ) throws -> [UInt8] {
        try APNSFile.eventLine(file: Array(contents.utf8), user: user, at: at ?? self.at, id: id, topic: topic)
    }

    @Test("the bundle key becomes the topic and leaves the payload")
    func bundleBecomesTopic() throws {
        let event = try line()
        try withJSON(event) { json throws in
            #expect(json.member(json.root, "topic").flatMap(json.string) == "com.example.homeapp")
            let payload = try #require(json.member(json.root, "payload"))
            #expect(json.members(payload).allSatisfy { json.string($0.key) != APNSFile.bundleKey })
        }
        #expect(try decodeEvent(event).notification?.topic == "com.example.homeapp")
    }

    @Test("the payload keeps the other keys in their order with their values unchanged")
    func payloadKeepsOrder() throws {
        try withJSON(try line()) { json throws in
            let payload = try #require(json.member(json.root, "payload"))
            #expect(
                json.members(payload).map { json.string($0.key) } == ["aps", "task_id", "button_types", "residence_id"])
            #expect(json.rawString(json.member(payload, "residence_id")!) == "1.50e1")
            let expected =
                #"{"aps":{"alert":{"title":"Clean  gutters","body":"Due tomorrow"},"category":"TASK_ACTIONABLE"},"#
                + #""task_id":7,"button_types":["edit","complete"],"residence_id":1.50e1}"#
            #expect(try jsonEqual(json.rawString(payload), expected))
        }
    }

    @Test("a topic given explicitly wins over the bundle key, which still leaves the payload")
    func explicitTopicWins() throws {
        let event = try line(topic: "com.example.other")
        #expect(try decodeEvent(event).notification?.topic == "com.example.other")
        try withJSON(event) { json throws in
            let payload = try #require(json.member(json.root, "payload"))
            #expect(json.members(payload).count == 4)
        }
    }

    @Test("a file without the bundle key gives an event without a topic")
    func noBundle() throws {
        let event = try line(#"{"aps":{"alert":"Hi"}}"#)
        try withJSON(event) { json in #expect(json.member(json.root, "topic") == nil) }
        #expect(try decodeEvent(event).notification?.topic == nil)
    }

    @Test("the produced line is a valid notification event with the given user and time")
    func decodesAsNotification() throws {
        let event = try decodeEvent(try line())
        #expect(event.type == .notification)
        #expect(event.user == "user-1")
        #expect(event.at == at)
        let n = try #require(event.notification)
        #expect(n.title == "Clean  gutters")
        #expect(n.category == "TASK_ACTIONABLE")
        #expect(n.taskID == 7)
        #expect(n.buttons == ["edit", "complete"])
        #expect(n.residenceID == .json("1.50e1"))
    }

    @Test("a time with microseconds survives into the event")
    func microsecondsKept() throws {
        let precise = utcSeconds(referenceSeconds, micros: 123_456)
        #expect(try decodeEvent(try line(at: precise)).at == precise)
    }

    @Test("a user that needs escaping is written as valid JSON")
    func userEscaped() throws {
        let user = "o\"brien\\\n"
        #expect(try decodeEvent(try line(user: user)).user == user)
    }

    @Test("the derived id is a lowercase version-8 UUID")
    func derivedIDIsUUID() throws {
        let id = try decodeEvent(try line()).id
        let uuid = try Regex("^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        #expect(id.wholeMatch(of: uuid) != nil, "\(id)")
    }

    @Test("the derived id is the same for the same file, user and time")
    func derivedIDStable() throws {
        #expect(try decodeEvent(try line()).id == decodeEvent(try line()).id)
        #expect(
            APNSFile.derivedID(contents: [1, 2, 3], user: "u", at: "2026-11-29T10:00:00.000Z")
                == APNSFile.derivedID(contents: [1, 2, 3], user: "u", at: "2026-11-29T10:00:00.000Z"))
    }

    @Test("the derived id changes with the user, the time or the file")
    func derivedIDDiffers() throws {
        let base = try decodeEvent(try line()).id
        #expect(try decodeEvent(try line(user: "user-2")).id != base)
        #expect(try decodeEvent(try line(at: utcSeconds(referenceSeconds, micros: 124_000))).id != base)
        #expect(try decodeEvent(try line(APNSFileTests.file.replacingOccurrences(of: "7", with: "8"))).id != base)
        // The parts are delimited: moving a byte from the user to the time is a different id.
        #expect(
            APNSFile.derivedID(contents: [], user: "ab", at: "c")
                != APNSFile.derivedID(contents: [], user: "a", at: "bc"))
    }

    @Test("an explicit id is used as given")
    func explicitID() throws {
        let id = "7D4B2E6A-0000-4000-8000-000000000001"
        #expect(try decodeEvent(try line(id: id)).id == id)
    }

    @Test("a file that is not valid JSON is refused")
    func invalidJSON() {
        #expect(throws: (any Error).self) { try line(#"{"aps":{"alert":"Hi"},}"#) }
        #expect(throws: (any Error).self) { try line(#"{"aps":{},"aps":{}}"#) }
        #expect(throws: (any Error).self) { try line("") }
    }

    @Test("a file that is not a JSON object is refused")
    func notAnObject() {
        #expect(throws: (any Error).self) { try line(#"[{"aps":{}}]"#) }
    }
}

@Suite("APNS file export")
struct APNSExportTests {
    @Test("the bundle comes first, then every payload key in order with its value as ingested")
    func export() throws {
        let payload =
            #"{ "aps" : { "alert" : "Hi  there" , "badge" : 1 }, "task_id" : 7, "due_date" : "2026-12-01","#
            + #" "n" : 1.50e1 }"#
        let raw = Fixture.notification.with("payload", payload).bytes
        let file = try APNSFile.export(event: raw, bundle: "com.example.homeapp")
        #expect(file.last == UInt8(ascii: "\n"))
        try withJSON(Array(file.dropLast())) { json throws in
            let keys = json.members(json.root).map { json.string($0.key) }
            #expect(keys == [APNSFile.bundleKey, "aps", "task_id", "due_date", "n"])
            #expect(json.member(json.root, "task_id").flatMap(json.int64) == 7)
            #expect(json.rawString(json.member(json.root, "aps")!) == #"{ "alert" : "Hi  there" , "badge" : 1 }"#)
            #expect(json.rawString(json.member(json.root, "n")!) == "1.50e1")
            #expect(json.string(json.members(json.root)[0].value) == "com.example.homeapp")
        }
    }

    @Test("an imported file exports back to the same keys and values")
    func importThenExport() throws {
        let original =
            #"{"Simulator Target Bundle":"com.example.homeapp","aps":{"alert":{"title":"T","body":"B"},"#
            + #""category":"TASK_ACTIONABLE"},"task_id":7,"button_types":["edit","complete"]}"#
        let line = try APNSFile.eventLine(
            file: Array(original.utf8), user: "u", at: utcSeconds(referenceSeconds), id: nil, topic: nil)
        let exported = try APNSFile.export(event: line, bundle: "com.example.homeapp")
        #expect(try jsonEqual(String(decoding: exported, as: UTF8.self), original))
        #expect(
            String(decoding: exported, as: UTF8.self).hasPrefix(
                #"{"Simulator Target Bundle":"com.example.homeapp","aps":"#))
    }

    @Test("a bundle id that needs escaping is written as valid JSON")
    func bundleEscaped() throws {
        let file = try APNSFile.export(event: Fixture.notification.bytes, bundle: "odd\"bundle\\")
        try withJSON(Array(file.dropLast())) { json throws in
            #expect(json.string(json.members(json.root)[0].value) == "odd\"bundle\\")
        }
    }

    @Test("an event without a payload object cannot be exported")
    func noPayload() {
        #expect(throws: (any Error).self) { try APNSFile.export(event: Fixture.action.bytes, bundle: "b") }
    }
}

@Suite("Safe file names")
struct SafeFileNameTests {
    @Test("only letters, digits, dot, underscore and hyphen are kept")
    func component() {
        #expect(SafeFileName.component("task-7_a.b") == "task-7_a.b")
        #expect(SafeFileName.component("a/b\\c d:é😀") == "a_b_c_d___")
        #expect(SafeFileName.component("") == "_")
    }

    @Test("a name never hides, climbs or escapes the directory")
    func neverEscapes() {
        for stem in ["..", "../../etc/passwd", ".hidden", "/abs", "a/../b", "."] {
            let name = SafeFileName.component(stem)
            #expect(!name.hasPrefix("."), "\(stem) → \(name)")
            #expect(!name.contains("/"), "\(stem) → \(name)")
            #expect(name != ".." && name != ".", "\(stem) → \(name)")
        }
    }

    @Test("an .apns name stays within 255 bytes and keeps its -seq.apns end")
    func apnsName() {
        #expect(SafeFileName.apns(stem: "task-7", seq: 12) == "task-7-12.apns")
        #expect(SafeFileName.apns(stem: "thread", seq: 3, prefix: "001-") == "001-thread-3.apns")
        let long = SafeFileName.apns(stem: String(repeating: "t", count: 1000), seq: UInt64.max, prefix: "0001-")
        #expect(long.utf8.count == 255)
        #expect(long.hasSuffix("-\(UInt64.max).apns"))
        #expect(long.hasPrefix("0001-ttt"))
        let wide = SafeFileName.apns(stem: String(repeating: "é", count: 300), seq: 1)
        #expect(wide.utf8.count <= 255)
        #expect(wide.hasSuffix("-1.apns"))
    }
}
