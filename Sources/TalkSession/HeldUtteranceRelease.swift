import AudioIO

/// What a held utterance sends once it is released as the user's (`RelayTranscription.utteranceReleased`): its
/// frames from `Settings.marginMs` before the user's onset, and around that onset the linear stage's output
/// (`AudioFrame.linearSamples`) instead of the fully cleaned capture.
///
/// Why: for the user's first 150 to 200 ms over the reply its echo is still at full level (the reply is lowered only
/// once the gate hears them, and the sink still holds up to 100 ms of it), about 10 dB over the user. WebRTC takes
/// the user's first frames down with the echo and the residual suppressor mutes what is left, so the relay heard
/// their first word damaged ("a forward ten meters"). The linear stage keeps those frames whole, with the echo about
/// as loud as the user: no stage that passes each frame as it comes can tell them from echo alone (`UserOnsetKeeper`),
/// but a release comes after the barge-in, which already said the utterance is the user's. The live decision and
/// what the recogniser hears are unchanged; only the words sent gain the onset. Replayed over 80 recorded barge-ins
/// (PulseAudio and PipeWire, the local voice at 5 and 25 s, the Gateway's voice; each judged as `bench talk` judges
/// a relay turn): the first word first in 69 against 51, with the user's words (WER <= 0.25) in 78 against 76.
package struct HeldUtteranceRelease: Sendable, Equatable {
    package struct Settings: Sendable, Equatable {
        /// The release starts this long (200 ms) before the user's onset (the gate's first loud frame): a word's soft
        /// start (a fricative, a plosive's closure, 50 to 150 ms) comes before its first loud frame, and in replayed
        /// barge-ins the canceller's output showed the user's onset up to 55 ms after the clean clip's. More would put
        /// the echo's last syllable back in front of the user's first word.
        package var marginMs = 200
        /// The linear stage's output is sent from this long (60 ms) before the onset: the gate's onset comes 0 to
        /// 100 ms after the user's first sound, as the stages took that sound down. From 100 ms before, the echo's
        /// last syllable came in front of the user's word more often ("we go forward"; over the 80 replayed
        /// barge-ins, to 200 ms after: the first word first in 65 against 68 from 60 ms; from 40 ms, 69 with one
        /// trial fewer with words) ...
        package var linearBeforeOnsetMs = 60
        /// ... up to this long (300 ms) after it: the first word ("go", about 250 ms) and the start of the second
        /// (to 200 ms: with words 76 of the 80, the first word first 68; to 300 ms: 78, 69).
        package var linearAfterOnsetMs = 300
        /// ... and only when the onset came at most this long before the release (the stream's end then). A barge-in
        /// is decided 350 to 600 ms after the user's first sound on a quiet machine; an onset further back is the
        /// reply's echo that began the stretch of onsets before the user's (`TurnTaking.onsetStretchGapMs`), where
        /// the linear stage's output would put the echo's words in front of theirs, or a release that came later
        /// than a barge-in's (speech going on past the reply).
        package var linearReachMs = 800
        /// An onset is the reply's echo (`heardAsEcho`) when the reply's own sound explains every audible frame of
        /// its first 200 ms (10 frames): a user's word lasts that long, and its frames show under the echo there, if
        /// late (its first frames read whole under a loud echo). In 40 replayed barge-ins (PulseAudio, local voice at 5
        /// s and 260 words a minute) each echo onset before the user's read at least 0.95 explained in every audible
        /// frame of that span, each user's onset under 0.9 in at least one, closely or over the window.
        package var echoOnsetFrames = 10
        /// ... explained at least this much (0.9) in both readings (`AudioFrame.echoExplained`, and
        /// `echoExplainedClosely` where it is measured) ...
        package var echoOnsetExplained: Float = 0.9
        /// ... where a frame is audible at this RMS (`BargeInPolicy.Energy.minimumRMS`): the quiet after an echo
        /// syllable is read against the loud reference and means nothing.
        package var audibleRMS = BargeInPolicy().energy.minimumRMS
        package init() {}
    }

    /// The first stream position sent.
    package var fromMs: Int
    /// Frames starting in here send the linear stage's output (where they carry it).
    package var linearMs: Range<Int>

    /// A held utterance that starts (its pre-roll) at `startMs`, released from the user's `onsetMs` (nil: none was
    /// heard, so it goes from its start as it is) when the stream has reached `heardThroughMs`.
    package init(startMs: Int, onsetMs: Int?, heardThroughMs: Int, settings: Settings = Settings()) {
        guard let onsetMs else {
            fromMs = startMs
            linearMs = startMs..<startMs
            return
        }
        fromMs = max(startMs, onsetMs - settings.marginMs)
        guard heardThroughMs - onsetMs <= settings.linearReachMs else {
            linearMs = fromMs..<fromMs
            return
        }
        let linearFrom = max(fromMs, onsetMs - settings.linearBeforeOnsetMs)
        linearMs = linearFrom..<max(linearFrom, onsetMs + settings.linearAfterOnsetMs)
    }

    /// Whether the sound onset at `onsetMs` (stream ms) is the reply's echo, by the frames heard from it (any
    /// frames: those outside its first `Settings.echoOnsetFrames` are not read): each audible one explained by the
    /// reply's own sound (`Settings.echoOnsetExplained`), and at least one measured. A frame with no measure (nothing
    /// played), or none heard, says it is not.
    package static func heardAsEcho(onsetMs: Int, frames: some Sequence<AudioFrame>, settings: Settings = Settings()) -> Bool {
        let span = onsetMs..<onsetMs + settings.echoOnsetFrames * AudioFrame.durationMs
        var measured = false
        for frame in frames where span.contains(frame.streamPositionMs) && AudioLevel.rms(frame.samples) >= settings.audibleRMS {
            guard let explained = frame.echoExplained, explained >= settings.echoOnsetExplained,
                  (frame.echoExplainedClosely ?? 1) >= settings.echoOnsetExplained else { return false }
            measured = true
        }
        return measured
    }

    /// What goes out of `frame`.
    package func samples(of frame: AudioFrame) -> [Int16] {
        guard linearMs.contains(frame.streamPositionMs), let linear = frame.linearSamples, linear.count == frame.samples.count else {
            return frame.samples
        }
        return linear
    }
}
