import SessionBridge

/// What the loop takes as meant for the agent. Always listening sends every utterance; wake-phrase mode only what
/// follows a wake phrase; push-to-talk only what is said while the button (`talk.ptt.*`) holds the floor.
package enum HandsFreeMode: String, Sendable, Equatable, CaseIterable {
    case alwaysListening = "always"
    case wakePhrase = "wake"
    case pushToTalk = "ptt"
}

/// The loop's bookkeeping for the hands-free modes, owned by the `TalkSession` actor.
struct HandsFreeState: Sendable {
    /// The mode in force: `Settings.mode`, or wake-phrase mode after always-listening idled out.
    var mode = HandsFreeMode.alwaysListening
    /// Wake-phrase mode because always-listening idled out: a wake phrase brings always-listening back.
    var idledOut = false
    /// The Gateway's voice-wake triggers (`voicewake.get` / `voicewake.changed`), once known.
    var gatewayPhrases: [String] = []
    /// After a wake phrase said on its own, the next utterance is taken (`Timer.wakeWindow` shuts the window).
    var awake = false
    /// The push-to-talk capture holding the floor.
    var capture: PushToTalkCapture?
    var lastCaptureId = ""
    /// A capture was cancelled while an utterance was open: its final is dropped.
    var dropNext = false
    /// How the last capture ended, for a command that comes after its end.
    var lastResult: PushToTalkResult?
}

/// One push-to-talk capture: what was heard while it held the floor, and who waits for its result.
struct PushToTalkCapture: Sendable {
    var id: String
    var once: Bool
    var heard: [String] = []
    var stopping = false
    var waiters: [CheckedContinuation<PushToTalkResult, Never>] = []
}
