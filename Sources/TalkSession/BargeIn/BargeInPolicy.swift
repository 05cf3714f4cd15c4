import Foundation

/// When speech over the reply stops it, and what the loop does while it cannot tell yet: every barge-in threshold
/// in one place, named, with its unit and the reason for its value (in the spirit of LiveKit's interruption options
/// and pipecat's interruption strategies). `config.json` and `run`'s flags fill it; it is read-only while a session
/// runs (`talk.config`'s `interruptOnSpeech` turns barge-in on or off, never these values).
package struct BargeInPolicy: Sendable, Equatable {
    /// `--no-barge-in`: speech never stops the reply, `talk.config` cannot turn barge-in back on, and the
    /// microphone is muted while the reply plays and for `muteTail` after.
    package var forcedOff = false
    package var energy = EnergyGuard()
    package var text = TextGuard()
    package var lowering = Lowering()
    package var evidence = Evidence()
    package var partials = Partials()
    /// Without barge-in, the microphone stays muted this long after the reply stops playing (`--mute-tail-ms`,
    /// default 500 ms): the room's echo and the speaker's buffer outlast the last sample played.
    package var muteTail: Duration = .milliseconds(500)
    package var echoTail = EchoTail()

    package init() {}

    /// The reply's echo outlasts its last sample: what the microphone hears just after it, or began hearing while
    /// it played, is judged against that.
    package struct EchoTail: Sendable, Equatable {
        /// An utterance that opened while the reply played becomes a turn only if its speech went on this long
        /// past the reply's end, in the capture stream's own time (700 ms: the speaker's buffer and the sound
        /// server's latency, 100 to 300 ms, the echo's reach, and the endpointer counting the voiced frames its
        /// smoothing holds over). Judged by wall time, a recogniser lagging on a busy machine made the echo of the
        /// reply's last sentence ("firefox") end after the reply and sent it as a turn.
        package var afterReplyMs = 700

        package init() {}
    }

    /// The energy guard: the microphone must be this loud over its noise floor (which the reply's echo raises)
    /// before a partial may interrupt.
    package struct EnergyGuard: Sendable, Equatable {
        /// How far the loudest frame of the last 300 ms must stand over the noise floor (`--barge-in-energy-db`,
        /// default 10 dB): the echo a canceller leaves sits near the floor it raised; a voice in the room does not.
        package var decibelsOverNoiseFloor = 10.0
        /// An RMS (of full scale 32 767) below which nothing counts (150, about −47 dBFS): digital silence under a
        /// file would otherwise make any sound speech.
        package var minimumRMS = 150.0

        package init() {}

        /// `decibelsOverNoiseFloor` as an amplitude ratio (10 dB: 3.16).
        package var ratioOverFloor: Double { pow(10, decibelsOverNoiseFloor / 20) }
    }

    /// The text guard: a partial interrupts only with this many letters or digits in words the reply is not
    /// saying, so the reply's own echo, recognised back, never stops it.
    package struct TextGuard: Sendable, Equatable {
        /// `--barge-in-min-chars`, default 3: one short word of the user's own ("stop", "wait"); fewer lets a
        /// misheard syllable of the echo ("oh", "a") through.
        package var minimumNewCharacters = 3
        /// A partial one letter short of `minimumNewCharacters` (2 by default: a short first word, "go", "no", or
        /// dictation's "oh" for one) stops the reply when the canceller's frames say the sound is the user's: measured,
        /// and at most this share (0...1) of its audible frames the reply's echo (`BargeInEvidence.echoExplained`), or
        /// begun before the reply's sound reached the microphone; nil: never. 0.5, twice the margin of
        /// `Evidence.maximumEchoExplained` under the echo's own share (1: no audible frame of echo alone was less
        /// than 61 % explained): echo misheard as a syllable is commoner than as a word. The user's "go" then
        /// stops the reply when heard, not a word later ("go for(ward)", 150 to 400 ms on, and with a grammar the
        /// whole of "forward", whose partial comes only once the word has ended).
        package var shortPartialMaximumEchoExplained: Double? = 0.5

        package init() {}

        /// The fewest new letters or digits a partial needs to be weighed at all.
        package var weighedFrom: Int {
            shortPartialMaximumEchoExplained == nil ? minimumNewCharacters : max(1, minimumNewCharacters - 1)
        }

        /// Why a partial with fewer than `minimumNewCharacters` new letters (but `weighedFrom`) does not stop the
        /// reply on `evidence`, or nil when it does.
        package func shortPartialHoldReason(_ evidence: BargeInEvidence) -> String? {
            guard let limit = shortPartialMaximumEchoExplained else { return "fewer than \(minimumNewCharacters) new letters" }
            if evidence.startedBeforeReplyAudio == true { return nil }
            guard let explained = evidence.echoExplained else {
                return "fewer than \(minimumNewCharacters) new letters, and no echo measure to tell them from the reply's"
            }
            guard explained <= limit else {
                return "fewer than \(minimumNewCharacters) new letters, and the reply's audio explains \(Int((explained * 100).rounded())) % of what the microphone heard"
            }
            return nil
        }
    }

    /// How soon what the user says over the reply is read: barge-in is decided on a partial, so it waits for one.
    package struct Partials: Sendable, Equatable {
        /// While the reply plays with barge-in on, the recogniser's partial is taken every this many ms (40: every
        /// second 20 ms frame) instead of the recogniser's usual 100: the decision waits for the first partial that
        /// passes the guards, and one taken 100 ms apart comes a mean 50 ms (at worst 100) after the words in it
        /// were heard. Only then, as each partial is a search of the lattice so far and costs CPU.
        package var overReplyEveryMs = 40
        /// A partial held on the evidence is judged again this often (ms) while it is the latest, over the frames
        /// heard since (`TurnTaking`'s recheck): at the partials' pace, so a held word is decided as soon after the
        /// user's own sound shows as a new partial would be (every 100 ms, a held "go" waited a mean 50 ms more,
        /// 100 at worst, on the loopback's grammar barge-ins). A recheck reads the meter's kept frames, no decoding.
        package var recheckEveryMs = 40
        /// While the reply is lowered for a sound over it (`Lowering`), recognition starts on an utterance's first
        /// voiced frame, not once the endpointer has heard 250 ms of them (`UtterancePipeline.decodeWhileStarting`):
        /// the first partial then comes as the utterance starts, not after the 650 ms of pre-roll and start window are
        /// decoded in one go (120 to 370 ms, median 170, in 13 loopback sessions with the local voice). Only then:
        /// through the whole reply its echo keeps the endpointer counting starts it gives up, and decoding each of them
        /// took 24 % of a core (p50) against 4 %. What opens an utterance is unchanged.
        package var decodeFromFirstVoicedFrame = true

        package init() {}

        /// `overReplyEveryMs` in 20 ms frames, at least one.
        package var overReplyEveryFrames: Int { max(1, overReplyEveryMs / 20) }
    }

    /// While the user may be cutting in (the microphone turned loud over the reply, or an utterance opened over it),
    /// the reply plays quieter: they hear they were heard, and their words meet that much less echo.
    package struct Lowering: Sendable, Equatable {
        /// How much quieter, in dB (`--lower-reply-db`, default 25; nil, or 0 on the command line, keeps the level).
        /// 25: the user must end up louder than the echo. Barge-in tells their frames from the reply's by energy, frame
        /// by frame (`EchoExplanation`: a frame is the echo's when the reference, through the coupling that covers 90 %
        /// of the echo's own frames, predicts half of it), and a user a metre from speakers at full level is about 20 dB
        /// under the echo: lowered 15 dB they stayed 5 dB under it, the echo explained every frame of theirs but in the
        /// reply's gaps between syllables, and the decision waited for the next gap (880 to 1,500 ms after their onset in
        /// 13 of 69 recorded `--user-gain-db -12` barge-ins). Lowered 25 dB they are about 5 dB over it. The echo's own
        /// leaks are as much quieter, which only helps the reply not to cut itself off.
        package var decibels: Double? = 25
        /// Sound over the reply lowers it at once; if no utterance opens this long after (`--barge-in-onset-hold-ms`,
        /// default 800 ms: over the 200 to 500 ms the endpointer takes to tell speech from a knock), the level returns,
        /// unless the user's own sound goes on (`onsetHoldLimit`).
        package var onsetHold: Duration = .milliseconds(800)
        /// When the hold runs out with no utterance open but the microphone still hears sound over the reply that its
        /// echo does not explain (`MicrophoneGate.hearsUserSound`: the user's own sound, as the barge-in evidence
        /// judges it), the hold goes on, `onsetHold` at a time, up to this long from the onset in all (2,400 ms). In
        /// recorded barge-ins the recogniser's speech start came 740 to 1,412 ms after the user's onset (the echo and
        /// the lowering confuse the endpointer) and its events lag the stream 300 to 550 ms under load: restored at
        /// 800 ms, the reply came back to full level over the user's words and the turn the relay got lacked them.
        /// The cap keeps a sound that opens no utterance (music, a television) from keeping the reply lowered.
        package var onsetHoldLimit: Duration = .milliseconds(2400)

        package init() {}

        /// The playback gain while lowered (25 dB: 0.056); nil keeps the level.
        package var gain: Float? {
            guard let decibels, decibels > 0 else { return nil }
            return Float(pow(10, -decibels / 20))
        }
    }

    /// Thresholds on the evidence an utterance over the reply carries (`BargeInEvidence`), beyond the energy and
    /// text guards. The echo check is on by default (`maximumEchoExplained`); duration and confidence are off.
    package struct Evidence: Sendable, Equatable {
        /// The user's speech must have lasted this long (ms) before it may interrupt (LiveKit's minimum
        /// interruption duration); 0: no minimum.
        package var minimumSpeechMs = 0
        /// At most this share (0...1) of the utterance's audible frames may be the reply's own echo, frame by frame
        /// (`BargeInEvidence.echoExplained`); nil: not checked. 0.75: on the reply's echo alone the share is 1 (in
        /// recorded loopback sessions with the local voice and 25 s replies, no audible frame of echo was less than
        /// 61 % explained, the frame's bar being 50 %), while a user over the reply, lowered for them, leaves half or
        /// more of their frames unexplained by the time their first words are recognised. Without it, residual echo
        /// that dictation made words of ("it's", "got", "to ah") cut a 25 s reply off in 4 of 6 loopback sessions.
        package var maximumEchoExplained: Double? = 0.75
        /// The recogniser's confidence in the partial (0...1) must be at least this; nil: not checked.
        package var minimumConfidence: Double?
        /// Words whose audio ends more than this many ms behind the microphone's newest frame do not stop the reply
        /// (`BargeInEvidence.behindMs`); they are judged again as the recogniser catches up (the recheck). nil: no bound.
        /// 1,000 ms: the evidence describes the reply as it plays now (what it has played, the current stretch of its
        /// sound in the microphone, which starts afresh after 1 s without it, the energy guard's last 300 ms), so words
        /// a busy recogniser reports seconds late are judged against the wrong reply: on a loaded machine (1-minute load
        /// 17) an echo word 12 s old ("but"), reported as a new sentence started, read as begun before the reply's sound
        /// and cut it. On a quiet machine partials come 0 to 650 ms behind (the fifth round's kept rows), under it.
        package var maximumBehindMs: Int? = 1000

        package init() {}

        /// Why `evidence` does not allow a barge-in, or nil when it does. A measure the loop lacks (nil) is not
        /// held against the user.
        package func holdReason(_ evidence: BargeInEvidence) -> String? {
            if let limit = maximumBehindMs, let behind = evidence.behindMs, behind > limit {
                return "the words end \(behind) ms behind the microphone, over the \(limit) ms their evidence holds for"
            }
            if evidence.speechMs < minimumSpeechMs {
                return "speech lasted \(evidence.speechMs) ms of the \(minimumSpeechMs) ms needed"
            }
            // Speech that began before the reply's sound reached the microphone cannot be its echo.
            if let limit = maximumEchoExplained, evidence.startedBeforeReplyAudio != true {
                if let explained = evidence.echoExplained, explained > limit {
                    return "the reply's audio explains \(Int((explained * 100).rounded())) % of what the microphone heard"
                }
                // A low share over a few frames is no proof: a reference placed late explains the echo's onset
                // poorly, frame by frame, without a run of it (`BargeInEvidenceMeter.userRunFrames`) reading as unexplained.
                if evidence.userSoundShown == false {
                    return "no run of the user's own sound: the reply's audio explains every stretch of what the microphone heard"
                }
            }
            if let minimum = minimumConfidence, let confidence = evidence.confidence, confidence < minimum {
                return "recognition confidence \(confidence) under \(minimum)"
            }
            return nil
        }
    }
}

/// What the loop knows about an utterance heard over the reply when a partial might interrupt it: what a user's
/// speech has and the reply's echo has not. The loop fills `speechMs`; the echo work fills the rest.
package struct BargeInEvidence: Sendable, Equatable {
    /// The share (0...1) of the utterance's audible frames (what passed the canceller and reached the recogniser)
    /// that the reply's own audio explains: frames whose raw capture the reference, through the coupling learnt
    /// from the echo alone, predicts at least half of (`EchoExplanation` in AudioIO); nil: not measured (no
    /// canceller, nothing playing, nothing audible).
    package var echoExplained: Double?
    /// The recogniser's confidence in the partial (0...1); nil: not known.
    package var confidence: Double?
    /// How long the user's speech has lasted, in ms.
    package var speechMs: Int
    /// The near end was heard before the reply's sound reached the microphone; nil: not known.
    package var startedBeforeReplyAudio: Bool?
    /// The utterance's frames show the user's own sound (`BargeInEvidenceMeter.userSound`: a run of audible frames
    /// the reply does not explain); false: the reply explains every stretch of it; nil: not measured.
    package var userSoundShown: Bool?
    /// How far the audio the recogniser's words stand for ends behind the microphone's newest frame, in ms (the
    /// recogniser lags the microphone, by seconds on a loaded machine); nil: not known.
    package var behindMs: Int?

    package init(
        echoExplained: Double? = nil, confidence: Double? = nil, speechMs: Int, startedBeforeReplyAudio: Bool? = nil,
        userSoundShown: Bool? = nil, behindMs: Int? = nil
    ) {
        self.echoExplained = echoExplained
        self.confidence = confidence
        self.speechMs = speechMs
        self.startedBeforeReplyAudio = startedBeforeReplyAudio
        self.userSoundShown = userSoundShown
        self.behindMs = behindMs
    }
}
