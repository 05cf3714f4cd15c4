import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import SpeechSynthesis

/// What hears the user: capture → endpointer → recogniser as one ordered event stream. `UtterancePipeline` is
/// the real one; tests script the events.
///
/// No requirement has a default: a conformer says what each does, even where it does nothing. A default in an
/// extension of this protocol is async, as its requirement is, and `UtterancePipeline`'s own methods are synchronous
/// on its actor: a caller in an async context that calls one on the pipeline itself (not through this protocol) gets
/// the default instead, a silent no-op, wherever TalkSession is imported (`ListenerDirectCallTests`).
package protocol TalkListener: Sendable {
    func start() async throws -> AsyncStream<UtteranceEvent>
    func stop() async
    /// Recognition takes only the sentences of this JSGF grammar (an approval's answers); nil: back to its own. A
    /// listener that cannot switch grammars keeps its own: the answer is then read from what it hears
    /// (`ApprovalPrompt.interpret`).
    func useGrammar(_ jsgf: String?) async
    /// Partial hypotheses every `frames` 20 ms frames from now on; nil: the listener's own cadence. A listener with a
    /// fixed cadence keeps it.
    func reportPartials(everyFrames frames: Int?) async
    /// Recognition starts on an utterance's first voiced frame (`UtterancePipeline.decodeWhileStarting`), or once
    /// the utterance has started.
    func decodeWhileStarting(_ on: Bool) async
    /// Decoding ahead starts no earlier than shortly before `ms` (stream ms; `UtterancePipeline.decodeAhead`); nil: anywhere.
    func decodeAhead(notBeforeMs ms: Int?) async
    /// Where the recogniser has heard through (stream ms, the capture's clock), read without waiting on it; nil: not
    /// known (barge-in then takes a partial's own end as where its words stand).
    var heardThroughMs: Int? { get }
    /// The open utterance decoded again from `fromMs` (stream ms), each frame as `samples` gives it
    /// (`UtterancePipeline.decodeAgain`): its final is then the new decode's. A listener that cannot decode again
    /// keeps its words.
    func decodeAgain(fromMs: Int, samples: @escaping @Sendable (AudioFrame) -> [Int16]) async
}

extension UtterancePipeline: TalkListener {}

/// The agent on the other end: a transcript in, its reply as it is written out. `ChatConversation` is the real one
/// (`ChatClient`, exactly once through its outbox); tests use a scripted agent.
package protocol TalkConversation: Sendable {
    /// Sends the transcript (with the interruption prefix when `interruptedAtSeconds` is set).
    func converse(_ transcript: String, interruptedAtSeconds: Double?) async -> AsyncStream<ChatReplyUpdate>
    /// Stops the agent's run for the last transcript sent, if it is still going (`chat.abort`): the user cut its
    /// reply off, so the rest of it is not wanted. Returns once the run is chosen, before the Gateway answers.
    func abortReply() async
}

/// A sentence in the Gateway's voice, or the word to speak it locally (with why).
package enum GatewaySpeech: Sendable, Equatable {
    case audio(PCMBuffer)
    case useLocalVoice(reason: String)
}

/// The Gateway's voice (`talk.speak` when `talk.config` names a provider).
package protocol GatewayVoice: Sendable {
    /// `voice`: `talk.config`'s voice and model, the reply's voice directive over them.
    func speak(_ text: String, voice: TalkVoiceSettings) async -> GatewaySpeech
}

/// The clock the loop measures by: monotonic nanoseconds, wall time for the events, and sleeps.
package struct TalkClock: Sendable {
    package var nowNs: @Sendable () -> UInt64
    package var wallNow: @Sendable () -> Date
    package var sleep: @Sendable (Duration) async throws -> Void

    package init(nowNs: @escaping @Sendable () -> UInt64, wallNow: @escaping @Sendable () -> Date,
                 sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.nowNs = nowNs
        self.wallNow = wallNow
        self.sleep = sleep
    }

    package static let live = TalkClock(nowNs: monotonicNanoseconds, wallNow: { Date() }, sleep: { try await Task.sleep(for: $0) })
}

extension TalkSession {
    /// Everything the loop talks to, passed in so tests swap devices, agent, voices and clock. The capture and
    /// playback devices are whatever the caller builds: an echo-cancelling pair can wrap them before they come here.
    package struct Dependencies: Sendable {
        package var capture: any AudioCaptureDevice
        package var playback: any AudioPlaybackDevice
        /// Builds the listener on the capture the loop hands it (the caller's device behind `MicrophoneGate`).
        package var makeListener: @Sendable (any AudioCaptureDevice) throws -> any TalkListener
        package var synthesizer: any SpeechSynthesizer
        package var conversation: any TalkConversation
        package var gatewayVoice: (any GatewayVoice)?
        /// `talk.mode {enabled, phase}`; called in order, one at a time.
        package var announce: (@Sendable (_ enabled: Bool, _ phase: TalkPhase?) async -> Void)?
        package var clock: TalkClock
        /// Named in the transcript events.
        package var engine: String
        /// The Gateway's transcription relay (`--stt gateway|auto`); nil: the local recogniser's words only.
        package var transcriptSource: (any TranscriptSource)? = nil

        package init(
            capture: any AudioCaptureDevice, playback: any AudioPlaybackDevice,
            makeListener: @escaping @Sendable (any AudioCaptureDevice) throws -> any TalkListener,
            synthesizer: any SpeechSynthesizer, conversation: any TalkConversation, gatewayVoice: (any GatewayVoice)? = nil,
            announce: (@Sendable (Bool, TalkPhase?) async -> Void)? = nil, clock: TalkClock = .live, engine: String = "pocketsphinx"
        ) {
            self.capture = capture
            self.playback = playback
            self.makeListener = makeListener
            self.synthesizer = synthesizer
            self.conversation = conversation
            self.gatewayVoice = gatewayVoice
            self.announce = announce
            self.clock = clock
            self.engine = engine
        }
    }

    /// How the loop behaves.
    package struct Settings: Sendable {
        /// When speech over the reply stops it, and what the loop does meanwhile; read-only while the session runs.
        package var bargeIn = BargeInPolicy()
        /// The local voice (flags beat the reply's directive for what was given).
        package var voice = VoiceSettings.default
        package var voiceFixed = false
        package var rateFixed = false
        /// Speak with the Gateway's voice (`talk.config` names a provider) when one is given.
        package var useGatewayVoice = false
        /// No reply text (nor a failure) this long after a send: the turn is given up and the loop listens again.
        /// Longer than the chat client's patience (300 s) and its `chat.history` fallback (25 s), which end a silent
        /// run first: an agent that uses tools may write nothing for minutes (`run --reply-timeout` sets both).
        package var replyTimeout: Duration = .seconds(340)
        /// The Gateway's voice: `talk.config`'s voice and model; a reply's directive goes over it, and one without
        /// `once` leaves its voice and model in `sessionVoice`, over the config's for the rest of the session.
        package var gatewayVoice = TalkVoiceSettings()
        package var sessionVoice = TalkVoiceSettings()
        /// `--wake` / `--ptt`; always listening by default.
        package var mode = HandsFreeMode.alwaysListening
        /// The local wake phrases (`models/keyphrases/wake.kws`), heard besides the Gateway's triggers.
        package var wakePhrases: [String] = []
        /// After a wake phrase said on its own, the next utterance is taken if it starts within this long.
        package var wakeFollowUp: Duration = .seconds(8)
        /// Always-listening falls back to wake-phrase mode after this long without an interaction (`--idle-timeout`,
        /// else `talk.idleTimeoutS`); nil: never. `idleTimeoutFixed`: the flag gave it, `talk.config` does not change it.
        package var idleTimeout: Duration?
        package var idleTimeoutFixed = false
        /// `talk.ptt.once` stops by itself after this long (as on iOS); a `stop` waits at most `pushToTalkCloseWait`
        /// for the utterance being spoken to close.
        package var pushToTalkOnceLimit: Duration = .seconds(12)
        package var pushToTalkCloseWait: Duration = .seconds(5)
        /// A `talk.ptt.start` capture that no `stop` ends is stopped after this long, as a `stop` would (`run
        /// --ptt-limit`, config `pttLimit`): a Gateway client must not hold the microphone open (and past the wake
        /// phrase) indefinitely. 60 s: far longer than one spoken request, short enough to end a forgotten capture.
        package var pushToTalkCaptureLimit: Duration = .seconds(60)

        package init() {}
    }
}
