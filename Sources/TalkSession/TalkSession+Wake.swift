import SessionBridge

/// Wake-phrase mode's inputs (`TurnTaking+HandsFree` decides what a final is for): the Gateway's voice-wake
/// triggers, and whether what the microphone hears may leave the machine.
extension TalkSession {
    /// The Gateway's voice-wake triggers (`VoiceWakeTracker`: `voicewake.get`, then each `voicewake.changed`).
    package func useGatewayWakePhrases(_ triggers: [String]) {
        machine.gatewayWakePhrases = triggers
    }

    /// Whether what the microphone hears now may leave the machine (the transcription relay): the mode's answer.
    var mayLeaveMachine: Bool { machine.mayLeaveMachine }
}
