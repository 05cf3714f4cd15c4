import SessionBridge

/// What the loop takes as meant for the agent. Always listening sends every utterance; wake-phrase mode only what
/// follows a wake phrase; push-to-talk only what is said while the button (`talk.ptt.*`) holds the floor.
package enum HandsFreeMode: String, Sendable, Equatable, CaseIterable {
    case alwaysListening = "always"
    case wakePhrase = "wake"
    case pushToTalk = "ptt"
}
