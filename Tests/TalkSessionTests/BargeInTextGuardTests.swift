import Testing

@testable import TalkSession

/// The text guard: a partial interrupts the reply only with 3 letters or digits in words the reply does not hold.
@Suite struct BargeInTextGuardTests {
    static let reply = "Take a coat when you leave the house tonight."

    @Test(arguments: [
        ("stop", true), ("wait 2 min", true), ("go", false), ("the house", false), ("tonight", false),
        // The reply's echo as dictation heard it in CI: "o" and "'s" are 2 letters, not 3 characters.
        ("o.'s", false), ("it's", true),
    ])
    func `only new letters and digits count`(partial: String, interrupts: Bool) {
        #expect(BargeInTextGuard.isNewSpeech(partial, spoken: Self.reply) == interrupts)
    }
}
