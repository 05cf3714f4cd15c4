/// The text `chat.send` carries for one utterance: the transcript, prefixed as the iOS Talk client does
/// with `Assistant speech interrupted at N.Ns.` and a blank line when the previous reply was barged into,
/// so the agent knows how much of its answer was heard.
package enum InterruptionPrefix {
    /// `Assistant speech interrupted at 2.4s.\n\n`; seconds are rounded to a tenth without the locale
    /// (a decimal comma would change what the agent reads). Negative or non-finite offsets count as 0.
    package static func prefix(interruptedAtSeconds seconds: Double) -> String {
        let tenths = seconds.isFinite && seconds > 0 ? Int((min(seconds, 1e9) * 10).rounded()) : 0
        return "Assistant speech interrupted at \(tenths / 10).\(tenths % 10)s.\n\n"
    }

    /// The message for `chat.send`: the transcript, prefixed when `interruptedAtSeconds` is given.
    package static func message(transcript: String, interruptedAtSeconds: Double?) -> String {
        guard let seconds = interruptedAtSeconds else { return transcript }
        return prefix(interruptedAtSeconds: seconds) + transcript
    }
}
