import Testing

@testable import PushTrailCLI

/// The escapes behind shell words, completion scripts and the man page. They replace
/// characters one by one (`String.replacingEvery`), since release builds leave out
/// `_StringProcessing` and its `replacing(_:with:)`.
@Suite("escaping")
struct EscapingTests {
    @Test("every occurrence is replaced, whole characters only")
    func replacingEvery() {
        #expect("a'b'c".replacingEvery("'", with: "'\\''") == "a'\\''b'\\''c")
        #expect("no quotes".replacingEvery("'", with: "x") == "no quotes")
        #expect("".replacingEvery("'", with: "x") == "")
        #expect("''".replacingEvery("'", with: "") == "")
        // "é" written as e + a combining accent is one Character, not an "e".
        #expect("e\u{301}e".replacingEvery("e", with: "E") == "e\u{301}E")
        #expect("naïve · ok".replacingEvery("·", with: "-") == "naïve - ok")
    }

    @Test("a shell word is bare when safe, else single-quoted with ' as '\\''")
    func shellWord() {
        #expect(Render.shellWord("task-1102") == "task-1102")
        #expect(Render.shellWord("task-1102", quoted: true) == "'task-1102'")
        #expect(Render.shellWord("it's here") == "'it'\\''s here'")
        #expect(Render.shellWord("") == "''")
    }

    @Test("zsh, fish and troff escapes")
    func scripts() {
        #expect(CompletionCommand.zshEscape("a'[b]:c") == "a'\\''\\[b\\]\\:c")
        #expect(CompletionCommand.fishEscape("a\\b'c") == "a\\\\b\\'c")
        #expect(ManpageCommand.roff("-x \\ y") == "\\-x \\e y")
        #expect(ManpageCommand.roff(".start") == "\\&.start")
        #expect(ManpageCommand.roff("'quote") == "\\&'quote")
    }
}
