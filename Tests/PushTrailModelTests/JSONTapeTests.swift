import Foundation
import TestSupport
import Testing

@testable import PushTrailModel

@Suite("JSON parser: valid input")
struct JSONTapeValidTests {
    @Test(
        "every kind of valid JSON value is accepted",
        arguments: [
            "{}", "[]", "\"\"", "0", "-0", "1", "-1", "1e10", "1E10", "1.5E-3", "1.5e+3", "-0.0",
            "123456789012345678901234567890",
            "1e-999", "true", "false", "null",
            #"{"a":{"b":[1,[2,[3,{"c":null}]],{"d":true}]},"e":[],"f":{}}"#,
            #"["\"\\\/\b\f\n\r\t"]"#,
            #""\u00e9\u4e2d\ud83d\ude00\uD83D\uDE00""#,
            "\"é中😀\"",
            " \t\r\n{ \"a\" : [ 1 , 2 ] }\n\r\t ",
        ])
    func acceptsValid(_ text: String) {
        #expect(jsonError(text) == nil)
    }

    @Test("the tape records each value's kind, extent and subtree end")
    func tapeShape() throws {
        let text = #"{"a":[1,22],"b":"x\ny","c":true}"#
        var tape = JSONTape()
        try Array(text.utf8).withUnsafeBytes { try tape.parse($0) }
        let kinds = tape.nodes.map(\.kind)
        #expect(kinds == [.object, .string, .array, .number, .number, .string, .string, .string, .bool])
        let bytes = Array(text.utf8)
        func slice(_ n: JSONNode) -> String { String(decoding: bytes[Int(n.start)..<Int(n.end)], as: UTF8.self) }
        #expect(slice(tape.nodes[0]) == text)
        #expect(slice(tape.nodes[1]) == "a")  // a string's text is between its quotes
        #expect(slice(tape.nodes[2]) == "[1,22]")
        #expect(slice(tape.nodes[4]) == "22")
        #expect(tape.nodes[0].next == 9)
        #expect(tape.nodes[2].next == 5)  // just past the array's elements
        #expect(!tape.nodes[1].flag)
        #expect(tape.nodes[6].flag)  // "x\ny" holds an escape
        #expect(tape.nodes[8].flag)  // true
    }

    @Test("a tape can be reused for another document")
    func tapeReuse() throws {
        var tape = JSONTape()
        try Array("[1,2,3,4]".utf8).withUnsafeBytes { try tape.parse($0) }
        #expect(tape.nodes.count == 5)
        try Array("{}".utf8).withUnsafeBytes { try tape.parse($0) }
        #expect(tape.nodes.count == 1)
        #expect(tape.nodes[0].kind == .object)
    }

    @Test("a reused tape grows for a longer document and holds only the last one parsed")
    func tapeReuseGrowsAndForgets() throws {
        var tape = JSONTape()
        try Array("[1]".utf8).withUnsafeBytes { try tape.parse($0) }
        #expect(tape.nodes.map(\.kind) == [.array, .number])
        // As dense as JSON gets: a node for every other byte, in a document far longer
        // than the first, so the tape's room grows.
        let dense = "[" + Array(repeating: "0", count: 5_000).joined(separator: ",") + "]"
        try Array(dense.utf8).withUnsafeBytes { try tape.parse($0) }
        #expect(tape.nodes.count == 5_001)
        #expect(tape.nodes[0].next == 5_001)
        #expect(tape.nodes.filter { $0.kind == .number }.count == 5_000)
        // A refused document leaves no nodes behind; the next one is whole.
        #expect(throws: JSONError.self) { try Array(#"{"a":[1,2,{"b":"#.utf8).withUnsafeBytes { try tape.parse($0) } }
        #expect(tape.nodes.count == 0)
        try Array(#"{"k":"v"}"#.utf8).withUnsafeBytes { try tape.parse($0) }
        #expect(tape.nodes.map(\.kind) == [.object, .string, .string])
        #expect(tape.nodes[0].next == 3)
    }

    @Test(
        "sixteen keys with one print among them are compared in full: distinct ones pass, the one equal pair is named")
    func keysSharingAPrint() {
        // Same length and first eight bytes: one print for all sixteen, so every key's
        // bit is taken by the first and each is compared byte by byte.
        let keys = (0..<16).map { "abcdefgh" + String(format: "%02d", $0) }
        let distinct = "{" + keys.map { "\"\($0)\":0" }.joined(separator: ",") + "}"
        #expect(jsonError(distinct) == nil)
        var twin = keys
        twin[15] = keys[7]
        let withTwin = "{" + twin.map { "\"\($0)\":0" }.joined(separator: ",") + "}"
        #expect(jsonError(withTwin)?.message == #"duplicate key "abcdefgh07" in object"#)
    }

    @Test("the same key in different objects is not a duplicate")
    func sameKeyInNestedObjects() {
        #expect(jsonError(#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#) == nil)
    }

    @Test("nesting up to the limit is accepted")
    func nestingAtLimit() {
        let depth = JSONTape.defaultMaxDepth
        #expect(jsonError(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) == nil)
    }
}

@Suite("JSON parser: invalid input")
struct JSONTapeInvalidTests {
    /// Expects `bytes` to be rejected at `offset` with a message containing `message`.
    func expectRejected(
        _ bytes: [UInt8], _ message: String, at offset: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = jsonError(bytes) else {
            Issue.record(
                "accepted \(String(decoding: bytes, as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.message.contains(message), "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.offset == offset, "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.description.hasPrefix("invalid JSON at byte \(offset + 1): "), sourceLocation: sourceLocation)
    }

    func expectRejected(
        _ text: String, _ message: String, at offset: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectRejected(Array(text.utf8), message, at: offset, sourceLocation: sourceLocation)
    }

    @Test("empty input is rejected")
    func empty() {
        expectRejected("", "unexpected end of input", at: 0)
        expectRejected("  \n", "unexpected end of input", at: 3)
    }

    @Test("a trailing comma is rejected")
    func trailingComma() {
        expectRejected("[1,2,]", "expected a value", at: 5)
        expectRejected(#"{"a":1,}"#, "expected a key string", at: 7)
    }

    @Test("a number with a leading zero is rejected")
    func leadingZero() {
        expectRejected("01", "leading zero", at: 1)
        expectRejected("[-007]", "leading zero", at: 3)
    }

    @Test("malformed numbers are rejected", arguments: ["1.", ".5", "1e", "1e+", "+1", "-", "1.e3", "0x10"])
    func malformedNumbers(_ text: String) {
        #expect(jsonError(text) != nil)
    }

    @Test("NaN and Infinity are not JSON")
    func nanAndInfinity() {
        expectRejected("NaN", "unexpected 'N', expected a value", at: 0)
        expectRejected("Infinity", "expected a value", at: 0)
        expectRejected("[1,-Infinity]", "expected a digit", at: 4)
        expectRejected("nul", "expected a value", at: 0)
        expectRejected("tru", "expected a value", at: 0)
    }

    @Test("single-quoted strings are rejected")
    func singleQuotes() {
        expectRejected("'a'", "expected a value", at: 0)
        expectRejected("{'a':1}", "expected a key string", at: 1)
    }

    @Test("comments are rejected")
    func comments() {
        expectRejected("// note\n{}", "expected a value", at: 0)
        expectRejected(#"{"a":1 /* note */}"#, "expected ',' or '}'", at: 7)
        expectRejected("[1 # note\n]", "expected ',' or ']'", at: 3)
    }

    @Test("an unterminated string is rejected at its opening quote")
    func unterminatedString() {
        expectRejected(#""abc"#, "unterminated string", at: 0)
        expectRejected(#"["abcdefghijklmnop"#, "unterminated string", at: 1)
        expectRejected(#"{"a":"b\"}"#, "unterminated string", at: 5)
    }

    @Test("unterminated containers are rejected")
    func unterminatedContainers() {
        expectRejected("[1,2", "unexpected end of input in array", at: 4)
        expectRejected(#"{"a":1"#, "unexpected end of input in object", at: 6)
        expectRejected(#"{"a""#, "expected ':'", at: 4)
    }

    @Test("raw control characters in strings are rejected, in short and long strings")
    func controlCharacters() {
        expectRejected([0x22, 0x61, 0x09, 0x62, 0x22], "control character 0x9", at: 2)
        expectRejected([0x22, 0x00, 0x22], "control character 0x0", at: 1)
        expectRejected(Array("\"0123456789abcdef".utf8) + [0x1F] + Array("\"".utf8), "control character 0x1F", at: 17)
        expectRejected(
            Array("\"0123456789".utf8) + [0x0A] + Array("0123456789\"".utf8), "control character 0xA", at: 11)
    }

    @Test("invalid escapes are rejected")
    func invalidEscapes() {
        expectRejected(#""\x""#, "invalid escape", at: 1)
        expectRejected(#""ab\'""#, "invalid escape", at: 3)
        expectRejected(#""\u12G4""#, "invalid hex digit", at: 5)
        expectRejected(#""\u12""#, "\\u escape", at: 3)
    }

    @Test("a lone low surrogate escape is rejected")
    func loneLowSurrogate() {
        expectRejected(#""\udc00""#, "lone low surrogate", at: 1)
        expectRejected(#""ok\uDFFF""#, "lone low surrogate", at: 3)
    }

    @Test("a lone high surrogate escape is rejected")
    func loneHighSurrogate() {
        expectRejected(#""\ud800""#, "lone high surrogate", at: 1)
        expectRejected(#""\ud800x""#, "lone high surrogate", at: 1)
        expectRejected(#""\ud800\n""#, "lone high surrogate", at: 1)
    }

    @Test("a high surrogate followed by an escape that is not a low surrogate is rejected")
    func highSurrogateWithoutLow() {
        expectRejected(#""\ud800\u0041""#, "not followed by a low surrogate", at: 1)
        expectRejected(#""\ud800\ud800""#, "not followed by a low surrogate", at: 1)
    }

    @Test(
        "invalid UTF-8 in a string is rejected",
        arguments: [
            [0xC0, 0x80],  // overlong NUL
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0x80],  // overlong 3-byte
            [0xE0, 0x9F, 0xBF],  // overlong 3-byte
            [0xF0, 0x8F, 0xBF, 0xBF],  // overlong 4-byte
            [0xED, 0xA0, 0x80],  // encoded surrogate U+D800
            [0xED, 0xBF, 0xBF],  // encoded surrogate U+DFFF
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xFF],
            [0x80],  // lone continuation byte
            [0xC3],  // truncated 2-byte
            [0xE2, 0x82],  // truncated 3-byte
            [0xF0, 0x9F, 0x98],  // truncated 4-byte
            [0xC3, 0x41],  // second byte is not a continuation
        ] as [[UInt8]])
    func invalidUTF8(_ sequence: [UInt8]) {
        let bytes = [0x22, 0x61] + sequence + [0x22]
        let error = jsonError(bytes)
        #expect(error != nil)
        #expect(error?.offset == 2, "message: \(error?.message ?? "")")
        #expect(error?.message.contains("UTF-8") == true, "message: \(error?.message ?? "")")
    }

    @Test("a UTF-8 sequence cut off by the end of input is rejected")
    func truncatedAtEnd() {
        expectRejected([0x22, 0xE2, 0x82], "truncated UTF-8 sequence", at: 1)
    }

    @Test("invalid UTF-8 outside a string is rejected")
    func invalidUTF8OutsideString() {
        expectRejected([0x5B, 0xC3, 0xA9, 0x5D], "expected a value", at: 1)
    }

    @Test("the largest valid code points in UTF-8 are accepted")
    func validUTF8Boundaries() {
        for sequence: [UInt8] in [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ] {
            #expect(jsonError([0x22] + sequence + [0x22]) == nil, "\(sequence)")
        }
    }

    @Test("numbers too large for a double are rejected")
    func tooLarge() {
        expectRejected("1e999", "too large", at: 0)
        expectRejected("[-1e999]", "too large", at: 1)
        expectRejected(#"{"n":1.5E+400}"#, "too large", at: 5)
        expectRejected("1" + String(repeating: "0", count: 400), "too large", at: 0)
    }

    @Test("nesting deeper than the limit is rejected")
    func nestingOverLimit() {
        let depth = JSONTape.defaultMaxDepth + 1
        expectRejected(
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth), "nesting deeper than",
            at: depth - 1)
    }

    @Test("100,000 nested arrays are rejected quickly without a crash")
    func deepArrays() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let clock = ContinuousClock()
        var error: JSONError?
        let elapsed = clock.measure { error = jsonError(text) }
        #expect(error?.message.contains("nesting deeper than \(JSONTape.defaultMaxDepth) levels") == true)
        #expect(error?.offset == JSONTape.defaultMaxDepth)
        #expect(elapsed < .seconds(2))
    }

    @Test("100,000 nested objects are rejected quickly without a crash")
    func deepObjects() {
        let text = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        let clock = ContinuousClock()
        var error: JSONError?
        let elapsed = clock.measure { error = jsonError(text) }
        #expect(error?.message.contains("nesting deeper than") == true)
        #expect(error?.offset == JSONTape.defaultMaxDepth * 5)
        #expect(elapsed < .seconds(2))
    }

    @Test("100,000 unclosed brackets are rejected without a crash")
    func deepUnclosed() {
        #expect(jsonError(String(repeating: "[", count: 100_000)) != nil)
        #expect(jsonError(String(repeating: #"{"a":"#, count: 100_000)) != nil)
    }

    @Test("a duplicate key is rejected at the second occurrence")
    func duplicateKey() {
        expectRejected(#"{"a":1,"a":2}"#, #"duplicate key "a""#, at: 7)
        expectRejected(#"{"a":1,"b":{"c":1,"c":1}}"#, #"duplicate key "c""#, at: 18)
    }

    @Test("keys that are equal after unescaping are duplicates")
    func duplicateKeyEscaped() {
        expectRejected(#"{"a":1,"\u0061":2}"#, #"duplicate key "a""#, at: 7)
        expectRejected(#"{"\/":1,"/":2}"#, "duplicate key", at: 8)
        expectRejected(#"{"é":1,"\u00e9":2}"#, "duplicate key", at: 8)
    }

    @Test("a duplicate key in an object with more than 16 keys is rejected")
    func duplicateKeyInLargeObject() {
        let members = (0..<20).map { "\"k\($0)\":\($0)" }
        #expect(jsonError("{" + members.joined(separator: ",") + "}") == nil)
        let withDuplicate = "{" + (members + [#""k3":99"#]).joined(separator: ",") + "}"
        #expect(jsonError(withDuplicate)?.message == #"duplicate key "k3" in object"#)
        let withEscapedDuplicate = "{" + (members + [#""\u006b17":99"#]).joined(separator: ",") + "}"
        #expect(jsonError(withEscapedDuplicate)?.message == #"duplicate key "k17" in object"#)
    }

    @Test("the eight-byte string scan stops exactly at the first byte that is not plain ASCII, wherever it lies")
    func stringScanStopsAtTheFirstSpecialByte() {
        // The scan reads a word and jumps to its first flagged byte; a borrow in the word
        // arithmetic only flags bytes above a real one. Put each kind of byte at every
        // offset of a long string, with other special bytes right behind it.
        for position in 0..<24 {
            let before = [UInt8](repeating: UInt8(ascii: "a"), count: position)
            let after = [UInt8](repeating: UInt8(ascii: "b"), count: 20)
            func line(_ middle: [UInt8]) -> [UInt8] {
                [UInt8(ascii: "["), 0x22] + before + middle + after + [0x22, UInt8(ascii: "]")]
            }
            let start = 2 + position
            // A control byte followed by a quote and a high byte: named at its own offset.
            expectRejected(line([0x01, 0x22, 0xC3]), "control character 0x1", at: start)
            expectRejected(line([0x1F, 0x00]), "control character 0x1F", at: start)
            // A byte that is never UTF-8, and a truncated sequence, at their offsets.
            expectRejected(line([0xFF, 0x01]), "invalid UTF-8 byte 0xFF", at: start)
            expectRejected(line([0xC3, 0x41]), "invalid UTF-8 sequence", at: start)
            // Valid text with each special byte: an escape, a two-byte letter, a
            // four-byte emoji, and a quote that ends the string early (then a syntax error).
            #expect(jsonError(line(Array(#"\"\u00e9"#.utf8))) == nil, "position \(position)")
            #expect(jsonError(line(Array("é😀\\n".utf8))) == nil, "position \(position)")
            expectRejected(line([0x22, 0x7F]), "in array, expected ',' or ']'", at: start + 1)
        }
        // The string's extent and escape flag come out the same wherever the escape lies.
        for position in 0..<20 {
            let text = "[\"" + String(repeating: "x", count: position) + #"\n"# + "yyyyyyyyy\"]"
            var tape = JSONTape()
            #expect(throws: Never.self) { try Array(text.utf8).withUnsafeBytes { try tape.parse($0) } }
            #expect(tape.nodes.count == 2 && tape.nodes[1].flag)
            #expect(tape.nodes.count == 2 && Int(tape.nodes[1].end - tape.nodes[1].start) == position + 11)
        }
    }

    @Test("keys told apart by length and first eight bytes are still compared in full")
    func duplicateKeysBeyondTheirPrints() {
        // Equal first eight bytes, different ninth: not duplicates; equal: duplicates.
        #expect(jsonError(#"{"abcdefghX":1,"abcdefghY":2}"#) == nil)
        expectRejected(#"{"abcdefghX":1,"abcdefghX":2}"#, #"duplicate key "abcdefghX""#, at: 15)
        // A key that is a prefix of another, and keys of every length up to 12.
        #expect(jsonError(#"{"abc":1,"abcd":2,"ab":3,"":4,"a":5}"#) == nil)
        for length in 0...12 {
            let key = String(repeating: "k", count: length)
            let others = (0...12).filter { $0 != length }.map { "\"" + String(repeating: "k", count: $0) + "\":0" }
            let object = "{" + (others + ["\"\(key)\":1", "\"\(key)\":2"]).joined(separator: ",") + "}"
            #expect(jsonError(object)?.message == "duplicate key \"\(key)\" in object", "length \(length)")
        }
        // Keys in the last eight bytes of the input (their print is read byte by byte).
        expectRejected(#"{"a":1,"a":2}"#, #"duplicate key "a""#, at: 7)
        expectRejected(#"{"b":{"x":0,"x":1}}"#, #"duplicate key "x""#, at: 12)
        #expect(jsonError(#"{"b":{"x":0,"y":1}}"#) == nil)
        // Two pairs of duplicates: the first key that has a later twin names the error.
        expectRejected(#"{"x":1,"y":2,"y":3,"x":4}"#, #"duplicate key "x""#, at: 19)
        // An escaped key among plain ones.
        expectRejected(#"{"abcdefghij":1,"b":2,"abcdefgh\u0069j":3}"#, #"duplicate key "abcdefghij""#, at: 22)
    }

    @Test("anything after the value is rejected")
    func trailingGarbage() {
        expectRejected("{} x", "unexpected 'x' after the value", at: 3)
        expectRejected("1 2", "after the value", at: 2)
        expectRejected("[1]]", "after the value", at: 3)
        expectRejected("{}\u{0}", "after the value", at: 2)
    }

    @Test("an error describes its byte position one-based")
    func errorDescription() {
        let error = JSONError(message: "boom", offset: 0)
        #expect(error.description == "invalid JSON at byte 1: boom")
    }
}

@Suite("JSON parser: hostile input")
struct JSONTapeFuzzTests {
    /// A small deterministic generator (xorshift64*), so a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static let seeds: [String] = [
        Fixture.notification.text, Fixture.action.with("changes", #"{"a":[1,2.5e3,-0,"\u00e9\ud83d\ude00"]}"#).text,
        Fixture.delivery.text, #"{"a":"é中😀","b":[true,false,null,{}],"c":"\"\\\/\b\f\n\r\t"}"#,
    ]

    @Test("mutated events never crash the parser or the decoder, and what parses survives compaction")
    func mutations() throws {
        var random = Generator(state: 0x9E37_79B9_7F4A_7C15)
        let interesting: [UInt8] = [
            0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x3A, 0x2C, 0x75, 0x30, 0x65, 0x2D, 0x00, 0x1F, 0x80, 0xC0, 0xED, 0xF4,
            0xFF, 0x20,
        ]
        var accepted = 0
        for round in 0..<10_000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<(1 + random.below(4)) {
                let at = random.below(bytes.count + 1)
                let byte =
                    random.below(2) == 0 ? interesting[random.below(interesting.count)] : UInt8(random.below(256))
                switch random.below(4) {
                case 0 where at < bytes.count: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                case 2 where at < bytes.count: bytes.remove(at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            _ = rejection(bytes)  // must return, whatever the bytes
            guard jsonError(bytes) == nil else { continue }
            accepted += 1
            let compact = try withJSON(bytes) { $0.compactText($0.root) }
            #expect(jsonError(compact) == nil, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            let equal = try withJSON(bytes) { a in try withJSON(compact) { b in JSONView.equal(a, a.root, b, b.root) } }
            #expect(equal, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            #expect(try withJSON(bytes) { $0.compactSize($0.root) } == compact.count)
        }
        #expect(accepted > 100, "the mutations should leave some documents valid")
    }

    @Test("random bytes never crash the parser")
    func randomBytes() {
        var random = Generator(state: 42)
        for _ in 0..<20_000 {
            let bytes = (0..<random.below(40)).map { _ in UInt8(random.below(256)) }
            _ = jsonError(bytes)
            _ = rejection(bytes)
        }
    }
}
