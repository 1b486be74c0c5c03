import Testing

@testable import PushTrailModel

@Suite("Text search: the ingested text, any case, beyond ASCII")
struct TextSearchTests {
    /// An event line holding `text` in a string, as the backend would send it.
    func event(_ text: String) -> [UInt8] {
        Array("{\"type\":\"notification\",\"payload\":{\"aps\":{},\"residence_name\":\"\(text)\"}}".utf8)
    }

    @Test(
        "a word matches in either case, with accents, in Greek and in CJK",
        arguments: [
            ("Résidence Côté", "résidence côté"), ("Résidence Côté", "RÉSIDENCE CÔTÉ"), ("Résidence Côté", "côté"),
            ("Straße am Fluss", "STRASSE"), ("Straße am Fluss", "straße"), ("Öl wechseln", "öl"), ("öl wechseln", "ÖL"),
            ("Καθαρισμός υδρορροών", "ΚΑΘΑΡΙΣΜΌΣ"), ("ΚΑΘΑΡΙΣΜΌΣ", "καθαρισμός"), ("οδός", "ΟΔΌΣ"),
            ("東京の家 排水溝の掃除", "排水溝"), ("Ｗｉｎｄｏｗ", "ｗｉｎｄｏｗ"), ("Дача Иванова", "дача"),
        ])
    func matches(_ stored: String, _ typed: String) {
        // Straße/STRASSE is full case folding (ß → ss), which simple folding does not do.
        let expected = !(stored.hasPrefix("Straße") && typed == "STRASSE")
        #expect(TextSearch(typed).matches(event(stored)) == expected, "\(typed) in \(stored)")
    }

    @Test("text written with JSON escapes is the text it spells")
    func escapes() {
        let line = Array(
            (#"{"residence_name":"R\u00e9sidence C\u00f4t\u00e9","task_name":"\u6392\u6c34\u6e9d","#
                + #""x":"\ud83c\udfe0 home","q":"say \"hi\""}"#).utf8)
        #expect(TextSearch("RÉSIDENCE").matches(line))
        #expect(TextSearch("côté").matches(line))
        #expect(TextSearch("排水溝").matches(line))
        #expect(TextSearch("🏠 HOME").matches(line))
        #expect(TextSearch("say \"hi\"").matches(line))
        #expect(!TextSearch("u00e9").matches(line))
    }

    @Test("a near miss does not match: another accent, another letter, a longer word")
    func nearMisses() {
        #expect(!TextSearch("cote").matches(event("Résidence Côté")))
        #expect(!TextSearch("côtes").matches(event("Résidence Côté")))
        #expect(!TextSearch("ΚΑΘΑΡΟΣ").matches(event("Καθαρισμός")))
        #expect(!TextSearch("排水口").matches(event("排水溝の掃除")))
        #expect(!TextSearch("é").matches(event("plain ascii")))
    }

    @Test("ASCII events keep matching as before, in either case; an empty text matches everything")
    func ascii() {
        #expect(TextSearch("GUTTER").matches(event("Clean the gutters")))
        #expect(TextSearch("clean THE").matches(event("Clean the gutters")))
        #expect(!TextSearch("gutterz").matches(event("Clean the gutters")))
        #expect(TextSearch("").matches(event("anything")))
    }

    @Test("the folds that are not lowercasing: final sigma, micro sign, long s")
    func specialFolds() {
        #expect(TextSearch("σ").matches(event("οδός")))  // ς folds to σ
        #expect(TextSearch("ς").matches(event("ΟΔΟΣ")))
        // Folding keeps accents: a capital without its tonos is another word.
        #expect(!TextSearch("ΟΔΟΣ").matches(event("οδός")))
        #expect(TextSearch("μ").matches(event("5 µm")))  // U+00B5
        #expect(TextSearch("s").matches(event("ſ")))
    }
}
