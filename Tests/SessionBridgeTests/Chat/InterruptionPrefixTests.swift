import Testing

@testable import SessionBridge

struct InterruptionPrefixTests {
    @Test(arguments: [
        (2.34, "Assistant speech interrupted at 2.3s.\n\nwhat next"),
        (0.05, "Assistant speech interrupted at 0.1s.\n\nwhat next"),
        (12.0, "Assistant speech interrupted at 12.0s.\n\nwhat next"),
        (-3.0, "Assistant speech interrupted at 0.0s.\n\nwhat next"),
        (Double.nan, "Assistant speech interrupted at 0.0s.\n\nwhat next"),
    ])
    func `an interrupted reply prefixes the next transcript with the offset and a blank line`(seconds: Double, expected: String) {
        #expect(InterruptionPrefix.message(transcript: "what next", interruptedAtSeconds: seconds) == expected)
    }

    @Test func `without an interruption the transcript goes as it is`() throws {
        #expect(InterruptionPrefix.message(transcript: "hello", interruptedAtSeconds: nil) == "hello")
    }
}
