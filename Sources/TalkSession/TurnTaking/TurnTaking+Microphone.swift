/// The microphone's one mode (`MicrophoneMode`), the machine's to decide: held between push-to-talk captures,
/// muted while the loop's own voice plays without barge-in (a reply, a prompt) and for the mute tail after it, open
/// otherwise. Held wins over muted: in push-to-talk mode a capture opens the microphone, not the reply's end; and a
/// capture that opens while the mute tail runs is let through only when it ends. `Action.setMicrophone` goes out
/// only when the mode changes, at the point in the list where it changes; the owner sets the gate in the same step
/// as the actions around it, so a mute and the unmute after it never arrive out of order.
extension TurnTaking {
    /// Push-to-talk mode holds the microphone between captures and while a stopping capture waits for its final (the
    /// silence closes the utterance); an approval's answer is let through while it is listened for.
    var holdsMicrophone: Bool {
        guard handsFree == .pushToTalk else { return false }
        if let capture { return capture.stopping != nil }
        if case .asking(let asking) = state, asking.step == .answer { return false }
        return true
    }

    /// Sets the mute of the loop's own voice (`muting`; nil: as it is) and returns `setMicrophone` if the mode changes.
    mutating func microphoneFollows(muting: Bool? = nil) -> [Action] {
        if let muting { voiceMuted = muting }
        let wanted: MicrophoneMode = holdsMicrophone ? .held : voiceMuted ? .muted : .open
        guard wanted != microphone else { return [] }
        microphone = wanted
        return [.setMicrophone(wanted)]
    }
}
