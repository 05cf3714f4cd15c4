import AudioIO

/// What the microphone carried about an utterance heard over the reply, frame by frame, for barge-in to judge:
/// how much of it the reply's own sound explains (`AudioFrame.echoExplained`, measured by echo cancellation
/// against the raw capture), and whether it began before the reply's sound reached the microphone. Kept for the
/// last 3 s of frames by `MicrophoneGate`, which sees every frame the recogniser hears.
///
/// Only audible frames count (over the energy guard's minimum level): those are what the recogniser made words
/// of; the echo the suppressor turned down is not. On the reply's
/// echo alone (recorded loopback sessions with the local voice, 25 s replies) no such frame was less than 61 %
/// explained, so an utterance of echo is explained whole; a user speaking over the reply leaves most of their
/// frames under half explained once the reply is lowered for them.
///
/// The same frames say where, in an utterance the reply's echo opened, the user's own sound begins
/// (`userSound(fromPositionMs:)`): the loop reads the barge-in share from there, and drops the echo's words before
/// where the user began speaking (`userSpeechStart(fromPositionMs:)`) from the turn.
struct BargeInEvidenceMeter {
    /// A frame at least this much explained by the reference counts as the reply's echo.
    static let explainedFrame: Float = 0.5
    /// Frames kept: 10 s, so an utterance's final, which comes after its speech and the silence window (and the
    /// recogniser's lag), still finds the frames it began with.
    static let keepFrames = 500
    /// The share is read over the last 3 s of the utterance at most: a long stretch of echo before the user
    /// began does not outweigh their first words.
    static let shareFrames = 150
    /// Audible frames in a row the reply does not explain that make the user's sound (60 ms): one such frame
    /// happens in the echo now and then; three in a row, in recorded sessions of the echo alone, did not.
    static let userRunFrames = 3
    /// Frames before the utterance's first voiced one that count with it (the endpointer's start lags its onset).
    static let preRollFrames = 5
    /// How long (160 ms, the realtime guard's `minimumUserSoundMs`) the user's own sound must have gone on, from a run
    /// of `userRunFrames`, before a recheck counts it: read through the latest frame, again every 40 ms, over an
    /// utterance of echo that goes on for seconds, a 60 ms run of the echo's residue is bound to turn up sooner or
    /// later; a user who goes on speaking over the lowered reply goes on being theirs.
    static let recheckUserSoundFrames = 8
    /// At most this share of the audible frames from that run through the latest frame may be explained in a recheck
    /// (2 of 8): a residue's run is followed by the echo, explained; a user's words by more of their own sound, with
    /// a loud syllable of the reply within the explanation's reach now and then. Not 8 in a row: in 16 of 80
    /// recorded barge-ins (both servers, both voices) no such run came within 1.2 s of the user's onset, and a
    /// grammar's held "go", with no new partial to weigh, stayed held through their whole utterance.
    static let recheckMaximumExplained = 0.25
    /// The onset hold asks whether the user's own sound goes on over the last 500 ms (`userSoundGoesOn`): a user's first
    /// word ("go") is often followed by 100 to 150 ms of silence and a next word whose onset the reply still explains,
    /// and in 58 recorded barge-ins (PulseAudio, local voice, 25 s) the last 300 ms held no run of their sound at the
    /// hold's end in 13, the last 500 ms in 2; no sound onset on the echo alone before the users showed one in either.
    static let holdFrames = 25
    /// This long without the reply's sound (1 s of frames) and the next sound starts a new stretch of reply audio.
    static let newReplyFrames = 50
    /// A sound onset at most this many frames (800 ms) before the user's own sound is where they began speaking.
    /// A user who speaks over the reply at full level is heard as theirs only once the reply, lowered at their onset,
    /// reaches the microphone lowered: the onset is seen 40 ms in, then the sink's buffer and the server's latency
    /// (100 to 300 ms), the reference's reach and the explanation's 100 ms window, and the three frames of the run;
    /// in a loopback run on a loaded machine their own sound showed 720 ms after they began (`heldRun` in the tests).
    /// Their first word ("go"), said before that, must not be dropped as the echo's.
    static let onsetReachFrames = 40

    /// A frame in the settling window after a playback gap or a move of the reference (`AudioFrame.echoSettling`) is
    /// the reply's echo unless its window reading explains less than this share of it (`settledReading`): a voice
    /// four times as loud as the echo that the loudest reference frame within 260 ms predicts is no misplaced echo's
    /// leak. Over 200 recorded loopback sessions (barge-in and self-echo, both servers) the audible frames of the echo
    /// alone in such a window read 0.87 or more by their window (a gap's leak 1.0 by it and 0.08 to 0.18 closely), the
    /// users who began in one 0.001 to 0.11 once their sound stood over the lowered echo: half the meter's own bar
    /// leaves a margin to both.
    static let settlingOwnBelow: Float = 0.25

    private struct Frame {
        var sequence: UInt64
        var audible: Bool
        var explained: Float?
    }

    /// `BargeInPolicy.EnergyGuard.minimumRMS`.
    let audibleRMS: Double

    init(audibleRMS: Double) {
        self.audibleRMS = audibleRMS
    }

    private var frames: [Frame] = []
    /// The first loud frame of each sound onset the gate heard (`SpeechEnergy.onsetFrames` loud frames in a row over
    /// the noise floor), oldest first, as long as its frames are kept.
    private var onsets: [UInt64] = []
    /// The first frame of the current stretch of reply audio in the microphone, and frames since the last one.
    private var replyAudioFrom: UInt64?
    private var framesWithoutReply = 0
    /// The first frame read with the reply lowered and the lowering in the microphone (nil: at its level).
    private var loweredFrom: UInt64?

    /// The reply plays at `gain` from now (1: its level; the loop lowers it while the user may be cutting in).
    ///
    /// While it plays lowered, a frame is the reply's echo only if its close reading (`AudioFrame.echoExplainedClosely`,
    /// the frame against its own reference) explains half of it too. A user speaking under the reply's echo even
    /// lowered (a metre from speakers at full level is about 20 dB under it: 5 dB under it when it was lowered 15 dB,
    /// about 5 dB over it at `BargeInPolicy.Lowering`'s 25; further off, under it still) is most of no frame's
    /// energy, and the 100 ms window against 260 ms of reference explains their frames whole but in the reply's
    /// longer pauses; the frame against its own reference shows them in the gaps between the reply's syllables
    /// (replayed `bench talk --user-gain-db -12` trials: a run of three such frames 340 to 900 ms after the user's
    /// onset in most trials the window reading held). Only while lowered: the close reading is tight where the window
    /// is generous (a sentence's onset whose reference came a frame late reads unexplained closely, alone or in a
    /// pair: 13 of 3,996 audible frames of the echo alone in 180 recorded self-echo sessions, none in a run of three),
    /// and lowered, the loop has heard a sound over the reply and those leaks are as much quieter as the reply.
    ///
    /// From the next frame on, not once the lowered reply has reached the microphone (the sink's buffer and the
    /// server's latency, up to 200 ms on): the sound that lowered it is often the user's word in a short pause of the
    /// reply, and the window, reading 260 ms of reference, explains that word whole while the close reading leaves it
    /// to them; read only from 200 ms on, their run waited for the reply's next pause (replayed `--user-gain-db -12`
    /// trials: 4 of 20 found 560 to 840 ms after the user's onset, 400 to 560 read from the lowering). The frames in
    /// between are the echo at its level, which the close reading explains as it does at any level.
    mutating func replyPlays(atGain gain: Float) {
        if gain >= 1 {
            loweredFrom = nil
        } else if loweredFrom == nil {
            loweredFrom = frames.last.map { $0.sequence + 1 } ?? 0
        }
    }

    mutating func add(_ frame: AudioFrame) {
        let samples = frame.samples
        let energy = AudioLevel.meanSquare(samples)
        var explained = frame.echoExplained
        if let from = loweredFrom, frame.sequence >= from, let window = explained, let close = frame.echoExplainedClosely {
            explained = min(window, close)
        }
        if frame.echoSettling { explained = Self.settledReading(window: frame.echoExplained) }
        frames.append(Frame(sequence: frame.sequence, audible: energy >= audibleRMS * audibleRMS, explained: explained))
        if frames.count > Self.keepFrames { frames.removeFirst(frames.count - Self.keepFrames) }
        if let oldest = frames.first?.sequence { onsets.removeAll { $0 < oldest } }
        if frame.echoExplained != nil {
            if replyAudioFrom == nil || framesWithoutReply >= Self.newReplyFrames { replyAudioFrom = frame.sequence }
            framesWithoutReply = 0
        } else {
            framesWithoutReply += 1
        }
    }

    /// What a frame in the settling window counts as, from its window reading alone (the close one reaches a frame or
    /// two of reference, and an echo tens of ms off its reference reads unexplained there): its own where the reply
    /// explains less than `settlingOwnBelow` of it or nothing played within its reach, else the echo.
    static func settledReading(window explained: Float?) -> Float? {
        guard let explained, explained >= settlingOwnBelow else { return explained }
        return max(explained, explainedFrame)
    }

    /// The microphone turned loud at frame `sequence` (its first loud frame): perhaps the user starting to speak.
    mutating func soundOnset(atSequence sequence: UInt64) {
        onsets.append(sequence)
    }

    /// The share (0...1) of the audible frames from `positionMs` on (with the pre-roll, over the last 3 s) that the
    /// reply's sound explains, nil when none was audible or no frame was measured (no canceller: nothing to say); and
    /// whether the utterance began before the reply's sound reached the microphone (nil: no reply sound heard yet).
    func evidence(fromPositionMs positionMs: Int) -> (echoExplained: Double?, startedBeforeReplyAudio: Bool?) {
        let last = frames.last?.sequence ?? 0
        return (share(from: UInt64(max(0, positionMs / AudioFrame.durationMs - Self.preRollFrames)), through: last),
                startedBeforeReplyAudio(positionMs))
    }

    /// `evidence(fromPositionMs:)` for the utterance that opened at `positionMs`, read over the frames a partial
    /// was made of: from the user's own sound (`userSound`) where the frames show it, else from the utterance's
    /// start, through `throughMs` (where the partial's audio ends; nil: the latest frame), 3 s at most.
    ///
    /// Not from the start when the user's sound is found: a user who begins at a sentence's onset meets the reply at
    /// full level until the lowering reaches the speaker (a playback buffer later, and the reference's reach after
    /// that), and those frames, explained, held every partial of theirs (on the loopback the reply explained 85 % of
    /// a "go forward ten meters" of which a third of the frames from their own sound on were theirs alone). Not
    /// through the latest frame: the recogniser lags the microphone by seconds on a loaded machine, and the frames
    /// after the partial's words are not what it heard (a held partial's recheck reads them: the user's sound after
    /// their words says the words were theirs).
    /// `userSoundShown` says whether those frames show a run of the user's own sound (nil: not measured).
    func evidence(
        ofUtteranceAtMs positionMs: Int, throughMs: Int?, recheck: Bool = false
    ) -> (echoExplained: Double?, startedBeforeReplyAudio: Bool?, userSoundShown: Bool?) {
        let latest = frames.last?.sequence ?? 0
        let last = throughMs.map { min(latest, UInt64(max(0, $0 / AudioFrame.durationMs - 1))) } ?? latest
        let sound = recheck
            ? lastingUserSound(fromPositionMs: positionMs, throughSequence: last)
            : userSound(fromPositionMs: positionMs, throughSequence: last)
        let first: UInt64 =
            if case .from(let ms) = sound {
                UInt64(ms / AudioFrame.durationMs)
            } else {
                UInt64(max(0, positionMs / AudioFrame.durationMs - Self.preRollFrames))
            }
        let shown: Bool? = switch sound {
        case .unknown: nil
        case .echoOnly: false
        case .from: true
        }
        return (share(from: first, through: last), startedBeforeReplyAudio(positionMs), shown)
    }

    /// The share of the audible frames `first...last` (the last `shareFrames` of them at most) the reply explains.
    private func share(from first: UInt64, through last: UInt64) -> Double? {
        let from = max(first, last >= UInt64(Self.shareFrames) ? last - UInt64(Self.shareFrames) + 1 : 0)
        let audible = frames.filter { $0.sequence >= from && $0.sequence <= last && $0.audible }
        guard audible.contains(where: { $0.explained != nil }) else { return nil }
        return Double(audible.filter { ($0.explained ?? 0) >= Self.explainedFrame }.count) / Double(audible.count)
    }

    private func startedBeforeReplyAudio(_ positionMs: Int) -> Bool? {
        replyAudioFrom.map { UInt64(max(0, positionMs / AudioFrame.durationMs)) < $0 }
    }

    /// Where, from `positionMs` (an utterance's first voiced frame) on (through `throughSequence`), the first
    /// `runFrames` audible frames in a row that the reply's sound does not explain begin: the user's own sound.
    /// `.unknown` when no audible frame of the utterance was measured (no canceller, nothing played, nothing audible)
    /// or its start is no longer kept.
    func userSound(fromPositionMs positionMs: Int, throughSequence: UInt64 = .max, runFrames: Int = Self.userRunFrames) -> UserSound {
        let first = UInt64(max(0, positionMs / AudioFrame.durationMs))
        guard let oldest = frames.first?.sequence, oldest <= first else { return .unknown }
        let utterance = frames.filter { $0.sequence >= first && $0.sequence <= throughSequence }
        guard utterance.contains(where: { $0.audible && $0.explained != nil }) else { return .unknown }
        var run: [Frame] = []
        for frame in utterance {
            let own = frame.audible && (frame.explained ?? 0) < Self.explainedFrame
            if own, let last = run.last, frame.sequence == last.sequence + 1 { run.append(frame) } else { run = own ? [frame] : [] }
            if run.count == runFrames { return .from(ms: Int(run[0].sequence) * AudioFrame.durationMs) }
        }
        return .echoOnly
    }

    /// `userSound` for a recheck: the first run of `userRunFrames` from which `recheckUserSoundFrames` frames have
    /// been heard through `throughSequence`, at most `recheckMaximumExplained` of their audible ones explained.
    /// `.echoOnly` when no run has gone on so (a residue's run then reads as the echo it is part of).
    func lastingUserSound(fromPositionMs positionMs: Int, throughSequence last: UInt64) -> UserSound {
        let first = UInt64(max(0, positionMs / AudioFrame.durationMs))
        guard let oldest = frames.first?.sequence, oldest <= first else { return .unknown }
        let utterance = frames.filter { $0.sequence >= first && $0.sequence <= last }
        guard utterance.contains(where: { $0.audible && $0.explained != nil }) else { return .unknown }
        var run = 0
        for (index, frame) in utterance.enumerated() {
            let own = frame.audible && (frame.explained ?? 0) < Self.explainedFrame
            let follows = index > 0 && utterance[index - 1].sequence + 1 == frame.sequence
            run = own ? (follows ? run + 1 : 1) : 0
            guard run >= Self.userRunFrames else { continue }
            let start = frame.sequence + 1 - UInt64(Self.userRunFrames)
            guard run == Self.userRunFrames, last + 1 >= start + UInt64(Self.recheckUserSoundFrames) else { continue }
            if let explained = share(from: start, through: last), explained <= Self.recheckMaximumExplained {
                return .from(ms: Int(start) * AudioFrame.durationMs)
            }
        }
        return .echoOnly
    }
}

extension BargeInEvidenceMeter {
    /// Whether the last `lastFrames` frames hold the user's own sound: a run of `userRunFrames` audible frames the reply
    /// does not explain, as in `userSound` (a frame with nothing played within the echo's reach, in a pause of the
    /// reply, is not explained). False when no frame of the last 3 s was measured (no canceller, nothing played):
    /// nothing says whose the sound is.
    func userSoundGoesOn(lastFrames: Int) -> Bool {
        guard frames.suffix(Self.shareFrames).contains(where: { $0.explained != nil }) else { return false }
        var run = 0
        var previous: UInt64?
        for frame in frames.suffix(lastFrames) {
            let own = frame.audible && (frame.explained ?? 0) < Self.explainedFrame
            run = own ? (previous.map { $0 + 1 == frame.sequence } == true ? run + 1 : 1) : 0
            previous = frame.sequence
            if run >= Self.userRunFrames { return true }
        }
        return false
    }

    /// Where the user began speaking in the utterance that opened at `positionMs`, for splitting its words: their own
    /// sound (`userSound`), or the earliest sound onset of the utterance (from its pre-roll on) at most
    /// `onsetReachFrames` before it. The reply explains a user's first frames until its lowering reaches the
    /// microphone; the onset that lowered it is where they began. The echo's words within that reach before their
    /// sound stay with theirs: a turn the user made can gain an echo's word, none is made of the echo alone.
    func userSpeechStart(fromPositionMs positionMs: Int) -> UserSound {
        let sound = userSound(fromPositionMs: positionMs)
        guard case .from(let ms) = sound else { return sound }
        let own = UInt64(ms / AudioFrame.durationMs)
        let utterance = UInt64(max(0, positionMs / AudioFrame.durationMs - Self.preRollFrames))
        let reach = own >= UInt64(Self.onsetReachFrames) ? own - UInt64(Self.onsetReachFrames) : 0
        guard let onset = onsets.first(where: { $0 >= max(utterance, reach) && $0 < own }) else { return sound }
        return .from(ms: Int(onset) * AudioFrame.durationMs)
    }
}

/// What an utterance's frames say of the user's own sound in it (`BargeInEvidenceMeter.userSound`).
package enum UserSound: Sendable, Equatable {
    /// Not measured: nothing is dropped on it.
    case unknown
    /// Every audible stretch of it the reply's sound explains.
    case echoOnly
    /// The user's sound begins here, in stream milliseconds.
    case from(ms: Int)
}
