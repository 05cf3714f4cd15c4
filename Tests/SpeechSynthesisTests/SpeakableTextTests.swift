import Testing

@testable import SpeechSynthesis

/// What a listener hears of a markdown reply: its words, not its syntax.
@Suite struct SpeakableTextTests {
    @Test(arguments: [
        ("**Bold** and *italic* and __strong__ and _em_ and ~~gone~~", "Bold and italic and strong and em and gone"),
        ("## Setting up", "Setting up"),
        ("- first item", "first item"),
        ("* starred item", "starred item"),
        ("3. third step", "third step"),
        ("> quoted words", "quoted words"),
        ("- [x] done task", "done task"),
        ("See [the guide](https://example.com/guide) now", "See the guide now"),
        ("![a diagram](img.png)", "a diagram"),
        ("Read https://docs.swift.org/swift-book/documentation please", "Read docs.swift.org please"),
        ("Open <https://www.example.org/a?b=c>.", "Open example.org."),
        ("Visit www.openclaw.ai/docs, then ask.", "Visit openclaw.ai, then ask."),
        ("Run `make test` and call `snake_case_name()`", "Run make test and call snake case name"),
        ("| Name | Size |", "Name, Size"),
        ("|------|:----:|", ""),
        ("---", ""),
        ("Great job 🎉👍🏽!", "Great job!"),
        ("Flags 🇫🇷 and keycaps 1️⃣ and family 👨‍👩‍👧 are silent", "Flags and keycaps and family are silent"),
        ("🙂", ""),
        ("Line one<br>line two", "Line one line two"),
        ("Keep 3.5 and file_name.txt and 2*3", "Keep 3.5 and file_name.txt and 2 3"),
    ])
    func `markdown becomes words`(markdown: String, spoken: String) {
        #expect(SpeakableText.clean(markdown) == spoken)
    }

    @Test func `a fenced code block is said as code omitted, once`() {
        let reply = "Here is the fix:\n```swift\nlet x = 1. // not a sentence.\nprint(x)\n```\nThat is all."
        let (_, sentences) = SpokenReply.sentences(of: reply)
        #expect(sentences == ["Here is the fix:", "code omitted", "That is all."])
    }

    @Test func `a code block still open while streaming is held back, then omitted`() {
        var reply = SpokenReply()
        #expect(reply.append("Try this.\n```\nrm -rf build. ") == ["Try this."])
        #expect(reply.append("More code.\n") == [])
        #expect(reply.append("```\nDone. ") == ["code omitted", "Done."])
    }

    @Test func `an unclosed code block at the end of a reply is omitted`() {
        let (_, sentences) = SpokenReply.sentences(of: "Look:\n~~~\nsecret() . stuff")
        #expect(sentences == ["Look:", "code omitted"])
    }

    @Test func `a table is read row by row`() {
        let (_, sentences) = SpokenReply.sentences(of: "| City | Temp |\n|---|---|\n| Paris | 21 |\n")
        #expect(sentences == ["City, Temp", "Paris, 21"])
    }
}
