import TestSupport
import Testing

@testable import PushTrailModel

@Suite("JSON value equality")
struct JSONEqualityTests {
    @Test("objects are equal whatever their key order")
    func keyOrderIgnored() throws {
        #expect(
            try jsonEqual(
                #"{"a":1,"b":[true,null],"c":{"x":"y","z":2}}"#, #"{"c":{"z":2,"x":"y"},"b":[true,null],"a":1}"#))
        #expect(try jsonEqual("{}", " { } "))
    }

    @Test("objects with different members are unequal")
    func objectsDiffer() throws {
        #expect(try !jsonEqual(#"{"a":1}"#, #"{"a":1,"b":2}"#))
        #expect(try !jsonEqual(#"{"a":1,"b":2}"#, #"{"a":1}"#))
        #expect(try !jsonEqual(#"{"a":1}"#, #"{"b":1}"#))
        #expect(try !jsonEqual(#"{"a":1}"#, #"{"a":2}"#))
        #expect(try !jsonEqual(#"{"a":{"b":1}}"#, #"{"a":{"b":"1"}}"#))
    }

    @Test("arrays are equal only in the same order")
    func arraysOrdered() throws {
        #expect(try jsonEqual("[1,2,3]", "[ 1 , 2 , 3 ]"))
        #expect(try !jsonEqual("[1,2]", "[2,1]"))
        #expect(try !jsonEqual("[1,2]", "[1,2,2]"))
        #expect(try !jsonEqual("[]", "[null]"))
    }

    @Test(
        "numbers compare by their exact decimal value",
        arguments: [
            ("1.0", "1"), ("1", "10e-1"), ("1.0", "10e-1"), ("1.5e2", "150"), ("150", "1.50E+2"), ("0.1", "1e-1"),
            ("0", "-0"), ("0", "0.000e5"), ("100", "1e2"), ("-2.50", "-25e-1"), ("0.05", "5e-2"),
            ("123456789012345678901", "1.23456789012345678901e20"),
        ])
    func equalNumbers(_ a: String, _ b: String) throws {
        #expect(try jsonEqual(a, b))
        #expect(try jsonEqual(b, a))
    }

    @Test(
        "numbers with different values are unequal",
        arguments: [
            ("1", "2"), ("1", "-1"), ("1.01", "1.1"), ("1e2", "1e3"), ("10", "1"), ("0.1", "0.01"),
            // Equal as doubles, different as decimals: compared exactly.
            ("9007199254740993", "9007199254740992"), ("0.1", "0.10000000000000001"),
        ])
    func unequalNumbers(_ a: String, _ b: String) throws {
        #expect(try !jsonEqual(a, b))
    }

    @Test("strings are compared after unescaping")
    func stringsUnescaped() throws {
        #expect(try jsonEqual(#""A""#, #""\u0041""#))
        #expect(try jsonEqual(#""a/b""#, #""a\/b""#))
        #expect(try jsonEqual(#""line\nnext""#, #""line\u000anext""#))
        #expect(try jsonEqual("\"é😀\"", #""\u00E9\ud83d\ude00""#))
        #expect(try !jsonEqual(#""a""#, #""b""#))
        #expect(try !jsonEqual(#""a""#, #""A""#))
        #expect(try !jsonEqual(#""a""#, #""a ""#))
    }

    @Test("object keys are compared after unescaping")
    func keysUnescaped() throws {
        #expect(try jsonEqual(#"{"\u0061":1}"#, #"{"a":1}"#))
    }

    @Test(
        "values of different types are unequal",
        arguments: [
            ("1", #""1""#), ("null", "false"), ("true", "1"), ("[]", "{}"), ("0", "false"), ("null", #""""#),
            (#""true""#, "true"), ("[1]", "1"),
        ])
    func differentTypes(_ a: String, _ b: String) throws {
        #expect(try !jsonEqual(a, b))
        #expect(try !jsonEqual(b, a))
    }

    @Test("literals are equal to themselves only")
    func literals() throws {
        #expect(try jsonEqual("true", "true"))
        #expect(try jsonEqual("null", " null"))
        #expect(try !jsonEqual("true", "false"))
    }

    @Test("a decimal number normalises sign, digits and exponent")
    func decimalNumber() {
        func decimal(_ s: String) -> DecimalNumber { Array(s.utf8).withUnsafeBytes { DecimalNumber($0) } }
        let d = decimal("-1.2300e3")
        #expect(d.negative)
        #expect(d.digits == Array("123".utf8))
        #expect(d.exponent == 1)
        #expect(decimal("-0.0") == decimal("0"))
        #expect(decimal("0.0012") == decimal("12e-4"))
    }
}

@Suite("JSON view")
struct JSONViewTests {
    @Test("member finds a key's value and nil for a missing key or a non-object")
    func member() throws {
        try withJSON(#"{"a":1,"b":{"c":"x"},"d":[1]}"#) { json in
            let b = try #require(json.member(json.root, "b"))
            #expect(json.kind(b) == .object)
            #expect(json.member(b, "c").flatMap(json.string) == "x")
            #expect(json.member(json.root, "c") == nil)
            let d = try #require(json.member(json.root, "d"))
            #expect(json.member(d, "a") == nil)
        }
    }

    @Test("member matches an escaped key by its unescaped text")
    func memberEscapedKey() throws {
        try withJSON(#"{"\u0074ype":"x"}"#) { json in
            #expect(json.member(json.root, "type").flatMap(json.string) == "x")
        }
    }

    @Test("members and elements list children in order")
    func children() throws {
        try withJSON(#"{"z":1,"a":[10,[20,21],{"q":30}],"m":null}"#) { json in
            let members = json.members(json.root)
            #expect(members.map { json.string($0.key) } == ["z", "a", "m"])
            let array = members[1].value
            let elements = json.elements(array)
            #expect(elements.count == 3)
            #expect(json.int64(elements[0]) == 10)
            #expect(json.elements(elements[1]).map { json.int64($0) } == [20, 21])
            #expect(json.kind(elements[2]) == .object)
            #expect(json.kind(members[2].value) == .null)
        }
    }

    @Test("strings are unescaped, and their byte length counted after unescaping")
    func strings() throws {
        try withJSON(#"["a\nb\u00e9\ud83d\ude00\/\"\\", "plain", 5]"#) { json throws in
            let e = json.elements(json.root)
            #expect(json.string(e[0]) == "a\nbé😀/\"\\")
            #expect(json.stringLength(e[0]) == "a\nbé😀/\"\\".utf8.count)
            #expect(json.stringBytes(e[0]) == Array("a\nbé😀/\"\\".utf8))
            #expect(json.string(e[1]) == "plain")
            #expect(json.stringLength(e[1]) == 5)
            #expect(json.string(e[2]) == nil)
        }
    }

    @Test("int64 reads integers that fit and nothing else")
    func int64() throws {
        try withJSON(
            #"[0, -0, 42, -42, 9223372036854775807, -9223372036854775808, 9223372036854775808, -9223372036854775809,"#
                + #" 1.0, 1e2, "7", true]"#
        ) { json throws in
            let values = json.elements(json.root).map { json.int64($0) }
            #expect(values == [0, 0, 42, -42, Int64.max, Int64.min, nil, nil, nil, nil, nil, nil])
        }
    }

    @Test("bool reads booleans only")
    func bool() throws {
        try withJSON("[true, false, null, 1]") { json throws in
            #expect(json.elements(json.root).map { json.bool($0) } == [true, false, nil, nil])
        }
    }

    @Test("raw text is a value exactly as written, a string with its quotes")
    func rawText() throws {
        try withJSON(#"{"s" : "a\u0041" , "n" : 1.50e2 , "o" : { "k" : [ 1 ] } }"#) { json in
            #expect(json.rawString(json.member(json.root, "s")!) == #""a\u0041""#)
            #expect(json.rawString(json.member(json.root, "n")!) == "1.50e2")
            #expect(json.rawString(json.member(json.root, "o")!) == #"{ "k" : [ 1 ] }"#)
        }
    }

    @Test("compact text removes whitespace outside strings and keeps it inside")
    func compactText() throws {
        let text = " {\n\t\"a\" : [ 1 , 2.50 ] ,\r\n \"b\" : \"x  y\" , \"c\" : \"q\\\" z\\\\\" , \"d\" : { } }\n"
        let expected = #"{"a":[1,2.50],"b":"x  y","c":"q\" z\\","d":{}}"#
        try withJSON(text) { json throws in
            #expect(String(decoding: json.compactText(json.root), as: UTF8.self) == expected)
            #expect(json.compactSize(json.root) == expected.utf8.count)
        }
    }

    @Test("the compact size of a nested value counts only that value")
    func compactSizeNested() throws {
        try withJSON(#"{"payload" : { "aps" : { "alert" : "Hi  there" } }, "other": [ 1, 2 ]}"#) { json in
            let payload = try #require(json.member(json.root, "payload"))
            #expect(json.compactSize(payload) == #"{"aps":{"alert":"Hi  there"}}"#.utf8.count)
            let alert = try #require(json.member(json.member(payload, "aps")!, "alert"))
            #expect(json.compactSize(alert) == #""Hi  there""#.utf8.count)
            #expect(String(decoding: json.compactText(alert), as: UTF8.self) == #""Hi  there""#)
        }
    }

    @Test("compact text is itself valid JSON equal to the original")
    func compactTextIsEqual() throws {
        let text = #"{ "a" : [ 1 , { "b" : "  spaced \" and \\ escaped  " } ] , "c" : "é" }"#
        let compact = try withJSON(text) { String(decoding: $0.compactText($0.root), as: UTF8.self) }
        #expect(try jsonEqual(text, compact))
        #expect(!compact.contains(" : "))
    }
}

@Suite("JSON output")
struct JSONOutputTests {
    @Test("pretty output indents objects and keeps short scalar arrays on one line")
    func pretty() throws {
        let rendered = try withJSON(#"{"a":[1,2],"b":{"c":"x\u0041"},"e":{},"f":[]}"#) { JSONPretty.render($0) }
        #expect(
            rendered == """
                {
                  "a": [1, 2],
                  "b": {
                    "c": "x\\u0041"
                  },
                  "e": {},
                  "f": []
                }
                """)
    }

    @Test("pretty output can substitute a top-level member's value")
    func prettyReplace() throws {
        let rendered = try withJSON(#"{"device":"abcdef","nested":{"device":"kept"}}"#) { json in
            JSONPretty.render(json, replace: { $0 == "device" ? #""ab…ef""# : nil })
        }
        #expect(rendered.contains(#""device": "ab…ef""#))
        #expect(rendered.contains(#""device": "kept""#))
        #expect(!rendered.contains("abcdef"))
    }

    @Test("written JSON keeps the given key order and escapes what it must")
    func serialize() {
        let value: JSONValue = .object([
            ("z", 1), ("a", "quote \" slash \\ newline \n tab \t"), ("c", .array([true, nil, -5])),
            ("ctl", .string("\u{1}\u{2028}")),
        ])
        #expect(
            value.serialized()
                == #"{"z":1,"a":"quote \" slash \\ newline \n tab \t","c":[true,null,-5],"ctl":"\u0001\u2028"}"#)
    }

    @Test("the byte writer escapes only what it must, and agrees with the text")
    func serializeBytes() {
        // "…" (E2 80 A6) and "€" (E2 82 AC) share U+2028's first bytes; a trailing E2 80
        // is cut short of one.
        let value: JSONValue = .object([
            ("sep", "a\u{2028}b\u{2029}c"), ("near", "…€"), ("cr", "\r\u{1f}\u{7f}"),
            ("ints", .array([.int(Int64.min), .int(0), .int(Int64.max)])), ("raw", .raw("[1]")),
        ])
        let expected =
            #"{"sep":"a\u2028b\u2029c","near":"…€","cr":"\r\u001f\u007f","#
            + #""ints":[-9223372036854775808,0,9223372036854775807],"raw":[1]}"#
        #expect(value.serializedBytes() == Array(expected.utf8))
        #expect(value.serialized() == expected)
        #expect(JSONValue.quoted("\"…\u{2029}") == #""\"…\u2029""#)
    }

    @Test("written JSON parses back to an equal value")
    func serializeRoundTrip() throws {
        let value: JSONValue = .object([("name", "é😀\u{7f}"), ("raw", .raw(#"{"k":[1,2]}"#))])
        let text = value.serialized()
        #expect(jsonError(text) == nil)
        #expect(try jsonEqual(text, #"{"raw":{"k":[1,2]},"name":"é😀\u007f"}"#))
    }
}
