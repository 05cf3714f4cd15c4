import SessionBridge

/// The vocabulary of `TurnTaking`: its states (each carrying its data), the events it is fed, the actions it
/// returns, the microphone's modes and the named timers.
extension TurnTaking {
    package enum State: Sendable, Equatable {
        /// Talk is off: no microphone, no `talk.mode`.
        case idle
        /// Talk is on but holding still: microphone closed, nothing plays.
        case paused
        /// Between turns in wake-phrase or push-to-talk mode: nothing heard now is sent.
        case resting
        /// Between turns, taking what the user says.
        case listening
        /// The transcript went out; no sentence of the reply plays yet.
        case thinking(Turn)
        /// A sentence of the reply plays.
        case speaking(Turn, Progress, Intrusion?)
        /// Between turns the loop speaks a notice of its own (prompt `number`, the microphone muted); then it rests.
        case announcing(prompt: Int)
        /// An approval's question spoken and its answer taken by voice (`TurnTaking+Asking`).
        case asking(Asking)

        /// The state the events and `talk.mode` name.
        package var talkState: TalkState {
            switch self {
            case .idle: .idle
            case .paused: .paused
            case .resting: .waiting
            case .listening: .listening
            case .thinking: .thinking
            case .speaking, .announcing: .speaking
            case .asking(let asking): asking.step.talkState
            }
        }
    }

    /// A turn: its number (later turns' work never mistakes it for theirs), the transcript sent, and what the
    /// reply has said so far (the text guard compares partials with it).
    package struct Turn: Sendable, Equatable {
        package var number: Int
        package var transcript: String
        package var reply = ""
        /// The Gateway's voice failed in this turn: its later sentences use the local voice.
        package var localVoice = false
    }

    /// How far the reply has got: the seconds of it already heard, and the sentence playing now (since when, how long).
    package struct Progress: Sendable, Equatable {
        package var spokenSeconds = 0.0
        package var playing: (startNs: UInt64, seconds: Double)?
        /// The sentences that have started playing: all of the reply its echo can hold (the text guard's words).
        package var played = ""

        package static func == (a: Progress, b: Progress) -> Bool {
            a.spokenSeconds == b.spokenSeconds && a.playing?.startNs == b.playing?.startNs && a.playing?.seconds == b.playing?.seconds
                && a.played == b.played
        }

        /// Seconds of the reply heard at `nowNs`.
        func offset(atNs nowNs: UInt64) -> Double {
            spokenSeconds + (playing.map { min($0.seconds, Double(nowNs &- $0.startNs) / 1e9) } ?? 0)
        }
    }

    /// The user may be cutting in: sound or an utterance over the reply, and whether the reply plays lowered.
    package struct Intrusion: Sendable, Equatable {
        /// When the utterance opened; nil for sound with no utterance (yet).
        package var speechStartNs: UInt64?
        package var lowered: Bool
        /// How long the onset hold has run in all since the sound lowered the reply (`BargeInPolicy.Lowering.onsetHoldLimit`).
        package var held: Duration = .zero
    }

    /// An utterance that opened while the reply played and did not interrupt it: what the reply had said then,
    /// and whether its speech ended before the reply did. Its final is judged by them.
    package struct OpenedOverReply: Sendable, Equatable {
        package var spoken: String
        package var endedWithinReply = false
    }

    /// A final's words where they lie in the capture stream, and where the user began speaking in its utterance
    /// (`BargeInEvidenceMeter.userSpeechStart`): an utterance that opened over the reply loses the echo's words
    /// before it.
    package struct HeardTiming: Sendable, Equatable {
        package struct Word: Sendable, Equatable {
            package var text: String
            package var startMs: Int
            package var endMs: Int

            package init(_ text: String, startMs: Int, endMs: Int) {
                self.text = text
                self.startMs = startMs
                self.endMs = endMs
            }
        }

        package var words: [Word]
        package var userSound: UserSound

        package init(words: [Word], userSound: UserSound) {
            self.words = words
            self.userSound = userSound
        }
    }

    /// What the microphone passes (`MicrophoneGate`), one mode at a time (`TurnTaking+Microphone`).
    package enum MicrophoneMode: Sendable, Equatable {
        /// Frames pass.
        case open
        /// Silence while the loop's own voice plays without barge-in (a reply, a prompt), and for the mute tail after.
        case muted
        /// Silence between push-to-talk captures (push-to-talk mode): it wins over the mute.
        case held
    }

    /// One timer of each name runs at a time: arming it again replaces it; a stale firing is ignored.
    package enum Timer: String, Sendable, Equatable, CaseIterable {
        /// Sound over the reply lowered it: with no utterance within `BargeInPolicy.Lowering.onsetHold`, the level returns,
        /// unless the microphone still hears the user's own sound (up to `onsetHoldLimit` in all).
        case onsetHold
        /// Without barge-in the microphone opens `BargeInPolicy.muteTail` after the reply.
        case muteTail
        /// No reply text within `Settings.replyTimeout`: the turn is given up.
        case replyTimeout
        /// Always-listening falls back to wake-phrase mode after `Settings.idleTimeout`.
        case idle
        /// A wake phrase said on its own: the next utterance is taken if it starts within `Settings.wakeFollowUp`.
        case wakeWindow
        /// A push-to-talk capture ends by itself: `Settings.pushToTalkCaptureLimit` (`start`), `pushToTalkOnceLimit` (`once`).
        case captureLimit
        /// A stopping capture waits at most `Settings.pushToTalkCloseWait` for its utterance's final.
        case captureCloseWait
        /// A partial held because the reply's echo explained it is judged again (`BargeInPolicy.Partials.recheckEveryMs`).
        case evidenceRecheck
        /// No answer began within `ApprovalPrompt.answerWindow` of the microphone opening for it.
        case answerTimeout
    }

    package enum ControlCommand: Sendable, Equatable {
        /// Talk on (`start`, `talk start`): the microphone's stream is open.
        case activate
        /// Talk off: `talk stop`, or the session's end (`stop()`).
        case deactivate(TalkOffReason)
        case pause
        /// The microphone's stream is open again.
        case resume
        case type(String)
    }

    package enum Event: Sendable, Equatable {
        case control(ControlCommand)
        case speechStarted(positionMs: Int, atNs: UInt64)
        /// `endMs`: where the partial's audio ends in the capture stream (the barge-in evidence is read through it).
        case partial(String, atNs: UInt64, endMs: Int? = nil)
        /// What `Action.weighBargeIn` found: the evidence about the utterance so far, and the energy guard's verdict
        /// on the microphone now (`loudEnough`).
        case bargeInEvidence(partial: String, BargeInEvidence, loudEnough: Bool, atNs: UInt64)
        /// `endedNs`: when the speech ended (the silence window before the utterance closed).
        case speechEnded(lastSpeechEndMs: Int, closedAtMs: Int, endedNs: UInt64)
        /// A final's words, chosen (local or the relay's); the hands-free mode decides what of them is meant for the
        /// agent. `timing` when they are the local recogniser's, unchanged.
        case final(String, timing: HeardTiming? = nil)
        /// The microphone turned loud (`MicrophoneGate.soundOnsets`): the onset's first loud frame, in stream ms;
        /// `loweredTo`, the gain the gate already lowered the reply to on the machine's standing order
        /// (`soundOnsetLowering`), nil if it did not.
        case soundOnset(positionMs: Int, loweredTo: Float? = nil)
        /// What `Action.weighSoundOverReply` found: whether the microphone still hears sound over the reply that its
        /// echo does not explain (`MicrophoneGate.hearsUserSound`).
        case soundOverReply(userSound: Bool)
        case playbackStarted(sentence: String, seconds: Double, atNs: UInt64)
        case playbackStopped(completed: Bool)
        /// The agent wrote: the turn's reply text grew by these sentences (queued for synthesis), or it failed.
        case replySentences([String])
        /// The turn's reply is over: every sentence played, or it failed. `heardToMs`: how far the capture stream had
        /// reached then (stream ms), which an utterance's speech end is compared with.
        case replyEnded(atNs: UInt64, heardToMs: Int? = nil)
        /// What `Action.findReplyStop` found: how far the capture stream had reached once the cut reply stopped.
        case replyStopped(heardToMs: Int)
        /// What `Action.weighSpeechPastEcho` found: whether the microphone heard sound loud enough to be speech past the
        /// reply's echo, through `throughMs` (where the held utterance's partial ends).
        case speechPastEcho(throughMs: Int, heard: Bool)
        case timerFired(Timer)
        /// `talk.ptt.*` (`TurnTaking+PushToTalk`).
        case pushToTalk(CaptureCommand)
        /// `talk.config`'s idle timeout (nil: none): always-listening falls back to wake-phrase mode after it.
        case idleTimeoutChanged(Duration?)
        case connectionChanged(String, connected: Bool)
        /// Speak this notice at the next pause (never over the user's utterance or a reply).
        case noticeArrived(String)
        /// Ask about this approval aloud at the next pause.
        case approvalArrived(PendingApproval)
        /// The approval was decided elsewhere or expired: not asked, or withdrawn aloud while asked.
        case approvalWithdrawn(id: String)
        /// Prompt `number` (a notice, a question, a confirmation) finished playing, or was cut off.
        case promptSpoken(number: Int)
        /// An answer's final while asking, with the recogniser's confidence (0...1) where it gives one.
        case answerHeard(String, confidence: Double?)
        /// The decision for `id` went out (`failure` nil), or was refused: `failure` is what to say.
        case decisionSent(id: String, failure: String?)
        /// A final is in, before its words are chosen: a relayed utterance's are the source's (`RelayStep.takeFinal`).
        case finalArriving
        /// Turn `turn`'s sentence could not have the Gateway's voice: the rest of the turn uses the local voice.
        case gatewayVoiceFailed(turn: Int, reason: String)
    }

    /// What the transcript source is told (`TurnTaking+Relay`).
    package enum RelayStep: Sendable, Equatable {
        /// An utterance opened at `positionMs`; `held`: it opened while the reply plays, and the source keeps its
        /// audio on the machine, sending nothing, until `released` (or `dropped`).
        case started(positionMs: Int, held: Bool = false)
        /// The held utterance goes to the relay from the user's onset (`onsetMs`, stream ms: the source sends from
        /// a margin before it, never before the utterance's own pre-roll); nil: from the utterance's own start.
        case released(onsetMs: Int?)
        case ended(lastSpeechEndMs: Int)
        /// The final's words are the source's (answered to the caller of `finalArriving`).
        case takeFinal
        /// The utterance ends without a final: the source drops it.
        case dropped
    }

    package enum Action: Sendable, Equatable {
        case emit(TalkEvent.Kind)
        /// Tell the Gateway the phase (`talk.mode`).
        case announce(TalkPhase)
        /// Send the transcript to the agent as turn `number` and speak its reply (the turn before it, if any, is dropped).
        case sendTurn(number: Int, transcript: String, interruptedAtSeconds: Double?)
        /// Stop the reply: its work, the synthesis, the speaker; with `abort`, the agent's run too (`chat.abort`).
        case cutReply(abort: Bool)
        /// Ask the devices for the barge-in evidence about the utterance that opened at `fromPositionMs`, through the
        /// partial's audio (`throughMs`; nil: the latest); the answer comes back as `Event.bargeInEvidence`. A
        /// `recheck` of a held partial reads through the latest frame and asks more of the user's own sound there
        /// (`BargeInEvidenceMeter.lastingUserSound`).
        case weighBargeIn(partial: String, fromPositionMs: Int, throughMs: Int? = nil, recheck: Bool = false)
        /// The onset hold ran out with no utterance open: ask the devices whether the microphone still hears the user's
        /// own sound over the reply; the answer comes back as `Event.soundOverReply`.
        case weighSoundOverReply
        /// The reply was cut off (not by a barge-in) while a held utterance is relayed: ask the devices how far the
        /// capture stream has reached; the answer comes back as `Event.replyStopped`.
        case findReplyStop
        /// Ask the devices whether any frame from `fromMs` (the reply's end and its echo's tail) through `throughMs` (a
        /// partial's end, the held utterance still open there) was loud enough over the noise floor to be speech, with
        /// the microphone open; the answer comes back as `Event.speechPastEcho`.
        case weighSpeechPastEcho(fromMs: Int, throughMs: Int)
        /// Why a partial did not cut in (for the debug log).
        case held(partial: String, reason: String)
        /// For the log (notice level), with its metadata.
        case note(String, [String: String])
        case setReplyGain(Float)
        /// The microphone's one mode (`TurnTaking+Microphone`): sent when it changes, carried out in order.
        case setMicrophone(MicrophoneMode)
        /// Start reading the microphone's stream (opened by the owner before `activate`/`resume`).
        case openMicrophone
        case closeMicrophone
        case arm(Timer, Duration)
        case cancel(Timer)
        /// A turn is over (its reply spoken, failed, timed out or cut off): `--max-turns` counts these.
        case turnEnded(reason: TurnEndReason)
        /// A control command the state does not allow, with why.
        case refuse(TalkSession.ControlRefusal)
        /// Speak the loop's own words (a notice, a question, a confirmation) in the local voice; `promptSpoken`
        /// follows when they end or are cut. The microphone is muted first (`setMicrophone(.muted)`, unless held).
        case speakPrompt(number: Int, text: String)
        /// Stop the prompt playing.
        case cutPrompt
        /// Recognition takes the answers of this JSGF grammar; nil: back to the session's own.
        case listenFor(grammar: String?)
        /// Send the decision for exactly this approval (the one read out); `decisionSent` follows.
        case resolveApproval(id: String, decision: ApprovalDecision)
        /// Nothing was decided: the approval stays pending for other clients, and a desktop notification is left.
        case leavePending(PendingApproval)
        /// The push-to-talk command's answer.
        case answer(PushToTalkResult)
        /// The push-to-talk command's answer is how capture `id` ends (`captureEnded`).
        case answerWhenCaptureEnds(id: String)
        /// A capture ended: whoever waits for it gets `result`.
        case captureEnded(PushToTalkResult)
        /// Tell the transcript source (`TurnTaking+Relay`).
        case relay(RelayStep)
    }
}
