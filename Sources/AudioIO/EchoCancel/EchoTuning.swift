/// The echo path's tuning, one group per stage, in the order a frame meets them (the shape of WebRTC's own
/// `EchoCanceller3Config`): where playback puts the reference, how the echo is aligned with it, when the user is
/// heard over it, how a sentence's onset is treated, what the residual suppressor lets through, and how much of
/// the capture the reply explains. Each value has its unit in its name or comment and the reason it has that
/// value; the measurements behind them are in the commits that set them.
/// The canceller's own settings (delay hint, linear stage, suppression level) are `EchoCancellerOptions`, as
/// `bench aec` and `run` may change them; the Talk loop's barge-in rules are `TalkSession.Settings`.
///
/// Frames are 20 ms (`AudioFrame`), windows 100 ms (5 frames); levels are RMS of 16-bit samples (32768 = 0 dBFS)
/// or ratios of energies.
enum EchoTuning {
    /// Where playback lays each sound on the reference (`PlaybackTimeline`, `ReferenceCursor`).
    enum Placement {
        /// Once a stream has played this long (µs), and as long again after an underrun the server reported, its
        /// placement has settled: later the server's estimate wanders while the sound does not (3 ms steps every half
        /// second on PulseAudio's loopback; drifts of 20 ms and more that snap back on both servers, with no gap in
        /// the sound), and each move would shift the reference under a canceller converged on it. Only a move over
        /// `settledMoveNs` is followed then; a smaller misplacement the aligner measures on the signals and puts back
        /// to the sample.
        static let settledAfterUsec: UInt64 = 300_000
        /// 200 ms: within the aligner's reach (an echo 200 ms before to 500 ms after its reference) from a lag of
        /// 15 to 140 ms. A gap in the sound comes with an underrun report, after which the estimates place the
        /// stream again (PulseAudio's follow the gap to the sample; PipeWire 0.3.65's miss the quantum of silence it
        /// inserted by 7 to 17 ms, which the aligner then puts back); at a 20 ms bound the drifts alone moved the
        /// reference under the converged canceller.
        static let settledMoveNs: UInt64 = 200_000_000
        /// While the stream starts, moves smaller than this (ns) are the estimate's jitter, not the stream's.
        static let startingMoveNs: UInt64 = 3_000_000
        /// The capture's first read of the reference is this far (ns) ahead of the frame's time: the sound
        /// server's start-up latency then still leaves the echo after its reference, where the canceller finds it.
        static let cursorLeadNs: Int64 = 20_000_000
        /// Once the cursor has fed the canceller sound, a frame time this far (ns) from where it reads places it
        /// again: a device change without an event. Smaller disagreements are timestamp jitter (±30 ms) and the
        /// capture's drift, which the aligner measures on the signals and puts back without a relearn.
        static let cursorJumpNs: Int64 = 250_000_000
        /// Before the cursor has fed any sound, a frame time this far (ns) from where it reads places it again: the
        /// step of a capture stream's first latency reports (20 to 540 ms on PulseAudio's monitor, 0.8 to 1.3 s after
        /// it connects), over the timestamps' jitter (±30 ms), which would otherwise move the reads frame by frame.
        static let cursorStartingJumpNs: Int64 = 30_000_000
        /// Before any sound, a smaller disagreement to later times the last 10 frames' times (200 ms) agree on (their
        /// median, over `startingMoveNs`) places the reads again: the monitor's first latency reports step by as little as 20 ms,
        /// which the jump bound above let stand (recorded sessions on PulseAudio began replies with the echo -1 to
        /// 14 ms after its reference instead of 20, 6 of 20 moved by the aligner at once).
        static let cursorStartingSteadyFrames = 10
    }

    /// How the echo's lag behind the reference is measured and kept in the canceller's window (`EchoAligner`).
    enum Alignment {
        /// The lags (ms) the canceller handles with its 60 ms delay hint: 20 to 150 ms, measured on synthetic paths.
        static let acceptedMs = 15...140
        /// Where (ms) a lag outside `acceptedMs` is brought: the delay hint's centre.
        static let targetMs = 60
        /// How clearly (normalised correlation) the envelopes, and the samples, must match before the reference moves.
        static let minimumCorrelation = 0.6
        /// Envelope blocks: 32 samples, 2 ms at 16 kHz.
        static let blockSamples = 32
        static let blockMs = 2.0
        /// The envelopes compared: 750 blocks, 1.5 s.
        static let windowBlocks = 750
        /// The lags searched, in blocks: -200 ms (an echo before its reference, as on a null sink's monitor while
        /// it starts) to +500 ms.
        static let minLagBlocks = -100
        static let maxLagBlocks = 250
        /// Measured every 10 frames (200 ms): the first correction lands 0.4-0.7 s into a reply.
        static let everyFrames = 10
        /// A held lag moves back once it has jumped by more than this (ms): the envelope's lag wanders by a block
        /// or two, and the graph quantum a PipeWire underrun inserts into what plays is 21.3 ms.
        static let heldToleranceMs = 4.0
        /// Samples of capture the sample-exact lag is measured over (0.5 s), and how far (samples, 3 ms) around
        /// the envelope's lag it looks.
        static let fineSamples = 8_000
        static let fineSearchSamples = 48
        /// Once the samples match clearly there, how far (samples, 25 ms) around the envelope's lag the best match is
        /// looked for. The envelopes of a voice with a steady pitch (espeak-ng's en-us, the reference Gateway's voice:
        /// 117 Hz) match about as well one or two pitch periods (8.6, 17 ms) off the echo's lag as at it, while the
        /// samples match clearly only at it (1.0 against 0.84 to 0.93); 25 ms covers two periods of a voice down to
        /// 80 Hz. Searched only within 3 ms, the lag held was a period off for 23 of 40 delays of that voice, and
        /// once the envelopes found the echo's own lag the aligner moved the reference by that period under the
        /// converged canceller (seen live 1 to 2 s into a reply, under a user's first words). About 160 ms of a core
        /// in a debug build, 801 lags of 0.5 s: only once a clear match is there (a lag held, a jump confirmed).
        static let pitchSearchSamples = 400
        /// How much better (in correlation) the samples must match at a new lag than at the held one before the
        /// reference is moved: at a sound's end the envelopes alone once misled it by 10 ms.
        static let jumpEvidence = 0.3
        /// After a playback gap, how long (samples, 0.8 s) before the lag is measured again to the sample: the
        /// `fineSamples` compared must all be echo of sound placed after the gap, and the gap reaches the capture up
        /// to 300 ms after the server reports it (the sink's and the capture's buffers).
        static let gapSettleSamples = fineSamples + 4_800
        /// How far (samples, 25 ms, as `pitchSearchSamples`) around the held lag the echo is looked for after a gap:
        /// the stream is placed again from timing estimates that each jitter by up to 1.4 ms and move it only beyond
        /// 3 ms (`Placement.startingMoveNs`), so it ends up to about 4.4 ms off; a gap the placement did not follow
        /// (PipeWire's Pulse server inserting one graph quantum, 21.3 ms) is found as well, before the envelopes
        /// confirm it. The samples match clearly only at the echo's own lag, not a pitch period off.
        static let gapSearchSamples = pitchSearchSamples
        /// How much better (in correlation) the samples must match at the lag found after a gap than at the held one
        /// before the reference is moved: the lags next to a clear match's match less well by more (0.09 one sample
        /// off, on the test clip's speech at 16 kHz).
        static let gapEvidence = 0.01
    }

    /// When the user is heard over the echo, from what the linear stage leaves (`DoubleTalkDetector`).
    enum DoubleTalk {
        /// 100 ms windows; 3 s of history (30 windows); judged once 8 windows (800 ms) were seen.
        static let windowFrames = 5
        static let historyWindows = 30
        static let settleWindows = 8
        /// 8 dB (energy ratio 6.3) over what the filter leaves of echo alone: the user's speech is in the window.
        static let margin = 6.3
        /// -20 dB: a user loud enough to barge in (up to about 12 dB under the echo) leaves at least this much; a
        /// filter converged to -30 dB and more leaves up to -24 dB of echo alone in windows of sounds it models
        /// less well, which `margin` alone then took for the user (2 of 30 recorded sessions).
        static let userRatio = 0.01
        /// -2 dB: the filter removes next to nothing here (thrown off, or a user far louder than the echo).
        static let divergedRatio = 0.63
        /// A raw window quieter than this (about -40 dBFS) holds too little to judge.
        static let loudRMS = 300.0
        /// Windows that must say "user" in a row before the detector fires, and how long (frames, 300 ms) it
        /// holds after.
        static let openingWindows = 2
        static let hangoverFrames = 15
        /// Silence this long (frames, 1 s), and the next sound may be placed afresh: the filter must show it has
        /// learnt it.
        static let restartFrames = 50
    }

    /// A sentence's first second after a pause, where both filters leak (`ReferenceOnset`).
    enum Onset {
        /// A reference frame quieter than this (about -60 dBFS) is silent.
        static let pauseRMS = 30.0
        /// 10 silent frames (200 ms: the gap between a reply's sentences, not the quiet between a recording's
        /// words) make the next sound an onset.
        static let pauseFrames = 10
        /// An onset lasts 50 frames (1 s): Speex's filter leaves -3 to -15 dB of the echo for up to 800 ms there.
        static let settlingFrames = 50
    }

    /// What the residual echo suppressor lets through (`ResidualEchoSuppressor`).
    enum Residual {
        /// 100 ms windows; 5 s of history (50 windows); nothing passes until 15 windows (300 ms of a reply after
        /// silence) were seen.
        static let windowFrames = 5
        static let historyWindows = 50
        static let settleWindows = 15
        /// Frames in a row that must stand out before the microphone opens; for a run that begins in the first
        /// second of a sentence (`Onset`), where WebRTC has let 5 or 6 frames of echo through in a row, 7 (140 ms of
        /// the user's first syllable lost there, 40 ms elsewhere). A run that began before the sentence is not its leak.
        static let openingRun = 3
        static let settlingOpeningRun = 7
        /// A frame that stood out keeps the next 10 frames (200 ms) open, so the gaps inside a word are not cut.
        static let hangoverFrames = 10
        /// 6 dB, in energy: the user's quieter syllables in double talk are only a few dB over a converged
        /// canceller's residual, and recognition needs them.
        static let margin = 4.0
        /// The echo path's coupling (raw capture over reference) is this percentile of the windows seen.
        static let couplingPercentile = 0.7
        /// A coupling under this (-20 dB of the reference) means there is no echo path worth the name (headphones,
        /// a file): nothing is turned down.
        static let noEchoCoupling = 0.01
        /// The canceller's attenuation is this percentile of the loud windows seen: what it usually achieves.
        static let attenuationPercentile = 0.3
        /// A reference quieter than this (about -50 dBFS) is not playing; a raw window quieter than `loudRMS`
        /// (about -40 dBFS) holds too little echo to measure the canceller by.
        static let playingRMS = 100.0
        static let loudRMS = 300.0
        /// Quieter than this (about -64 dBFS) never stands out, however well the canceller does: a converged one
        /// leaves almost nothing, and the bar must not sink to zero with it.
        static let audibleRMS = 20.0
        /// Silence this long (frames, 1 s), and the next sound starts from an unsettled canceller again.
        static let restartFrames = 50
        /// How far either side of a frame (ns, and the samples that spans) the reference is searched for sound.
        static let aroundNs: UInt64 = 300_000_000
        static let aroundSamples = 2 * 4_800 + AudioFrame.samplesPerFrame
        /// A muted frame is divided by this: 40 dB down rather than digital silence, so the recogniser and the
        /// endpointer's noise floor still see a signal, not runs of zeros; at -40 dB even an unconverged echo is
        /// under what the endpointer takes for sound.
        static let mutedGain: Int32 = 100
    }

    /// When the user's first frames over the reply pass the linear stage's output (`UserOnsetKeeper`).
    enum UserOnset {
        /// Frame ratios (linear stage over raw) kept: the last 150 loud frames (3 s) not kept; judged once 40 (800 ms)
        /// were seen, as `DoubleTalk.settleWindows`.
        static let historyFrames = 150
        static let settleFrames = 40
        /// What the linear stage usually leaves of the echo alone: this percentile of those ratios, as `DoubleTalk`.
        static let usualPercentile = 0.3
        /// 10 dB (energy ratio 10) over that usual opens; 4 dB (2.5) keeps the next frames. Measured per frame on the
        /// echo-only stretches of 120 recorded barge-ins: 1.9 % of frames reach 10 dB, none of them with WebRTC's
        /// output within 6 dB of the linear stage's and the suppressor turning it down. Lower margins (6, 8 dB) and a
        /// looser `webRTCKeptRatio` keep more frames of the echo alone than of users' onsets (`UserOnsetKeeper`).
        static let openMargin = 10.0
        static let holdMargin = 2.5
        /// WebRTC kept the frame: its output's energy times this (6 dB) reaches the linear stage's.
        static let webRTCKeptRatio = 4.0
        /// Frames kept at most (100 ms): the suppressor's own run opens on the third.
        static let keptFrames = 5
        /// A raw frame quieter than this (about -40 dBFS) holds too little to judge, as `DoubleTalk.loudRMS`.
        static let loudRMS = 300.0
        /// Ratios are floored here (-90 dB) so a frame the filter cancels whole still counts.
        static let floorRatio = 1e-9
    }

    /// How much of each captured frame the reply's own sound explains (`EchoExplanation`).
    enum Explanation {
        /// 100 ms windows of the raw capture.
        static let windowFrames = 5
        /// The echo's reach: the reference of this many frames before the window's last (160 ms), the most the
        /// placement leaves between a sound and its echo (`Alignment.acceptedMs`).
        static let reachFrames = 8
        /// The coupling predicted is this percentile of the echo-alone ratios seen: a prediction that covers
        /// most of the echo's frames, so the echo rarely looks unexplained.
        static let couplingPercentile = 0.9
        /// Ratios kept: the last 150 frames (3 s) of echo-alone windows.
        static let historyFrames = 150
        /// Until 10 echo-alone frames (200 ms) were seen nothing is said (nil): the suppressor mutes a reply's
        /// first 300 ms after silence, which teaches the coupling before any leak can pass.
        static let settleFrames = 10
        /// A reference quieter than this (about -50 dBFS) plays nothing that could be heard back.
        static let playingRMS = 100.0
        /// The close reading (`EchoExplanation.Reading.frame`): the frame alone against the loudest reference frame
        /// within this many of the echo's lag (`EchoFrameLag`), three frames (60 ms) in all: a dip of the reply as
        /// short as a syllable's gap shows what else the microphone hears, where the 100 ms window against 260 ms of
        /// reference shows only pauses longer than that; a frame either side covers a lag between two frames and its
        /// wander. Its own coupling, learnt from the same echo-alone frames, says how well it fits. Until the lag is
        /// measured it reads the whole reach (`reachFrames`): a window that missed the echo would read its words'
        /// ends, the reference silent and the echo still loud, as someone else's.
        static let closeSpreadFrames = 1
        /// The echo's lag (`EchoFrameLag`) is measured every 10 frames (200 ms) over the last 100 (2 s: several of
        /// the reply's words, whose syllables and pauses make one clear peak), at lags up to 7 frames (140 ms, the
        /// aligner's window: `Alignment.acceptedMs`), once 25 of those frames (500 ms) played sound, and taken where
        /// the loudness in dB of capture and reference correlate at least 0.5 there. In 20 recorded self-echo sessions
        /// on PipeWire the best lag (2 frames in 18, 1 in 2) never changed within a session, its correlation 0.78 to
        /// 1.0; in 10 recorded barge-ins there it stayed at 2, 3 or 4 frames, also under the user's words (0.3 to 1.0).
        static let lagEveryFrames = 10
        static let lagHistoryFrames = 100
        static let lagMaxFrames = 7
        static let lagPlayingFrames = 25
        static let lagMinimumCorrelation = 0.5
    }
}
