/// What happens to one captured frame once its reference is placed: the canceller (Speex's linear stage, then
/// WebRTC), the double-talk detector choosing which of their outputs holds the user, the residual-echo
/// suppressor, and the keeper of a user's first frames it would turn down (`UserOnsetKeeper`). Split from
/// `EchoCancellingCapture`, which places the reference and owns this, so that a recorded capture
/// (`EchoCaptureRecording`) is replayed through exactly the stages a live one went through.
struct EchoFrameProcessor {
    /// One frame's outcome; `cancelled` is kept for the per-frame trace, `linear` also goes on with the frame
    /// (`AudioFrame.linearSamples`).
    struct Outcome {
        var samples: [Int16]
        var cancelled: [Int16]
        var linear: [Int16]
        var userOverEcho: Bool
        /// The detector opened or closed on this frame.
        var changed: Bool
        /// How much of the frame the reference explains (`EchoExplanation`); nil when nothing played.
        var echoExplained: Double?
        /// The same for the frame alone, against its close reference (`EchoExplanation.Reading.frame`).
        var echoExplainedClosely: Double?
    }

    let canceller: EchoCanceller
    private var suppressor = ResidualEchoSuppressor()
    private var doubleTalk = DoubleTalkDetector()
    private var onset = ReferenceOnset()
    private var userOnset = UserOnsetKeeper()
    private var explanation = EchoExplanation()
    private var wasUserOverEcho = false

    init(_ canceller: EchoCanceller) {
        self.canceller = canceller
    }

    /// The detector's last judgement (see `DoubleTalkDetector.lastJudgement`), for the log line.
    var lastJudgement: (ratio: Double, echoOnly: Double?)? { doubleTalk.lastJudgement }

    /// The reference was moved under the canceller: both filters must learn the moved path again, and until
    /// they show it, neither the user's speech nor the echo is told apart by them.
    mutating func relearn() {
        doubleTalk.reset()
        suppressor.relearn()
        userOnset.reset()
    }

    /// Another device or a restarted server: the echo path starts afresh.
    mutating func restart() {
        suppressor = ResidualEchoSuppressor()
        doubleTalk = DoubleTalkDetector()
        onset = ReferenceOnset()
        userOnset = UserOnsetKeeper()
        explanation.restart()
        wasUserOverEcho = false
    }

    /// `far` is the reference fed with the frame, `playedAround` the loudest 20 ms of reference within 300 ms
    /// either side of it (`AudioLevel.loudestFrameRMS`).
    /// - Throws: `EchoCancelError` for a frame the canceller refuses.
    mutating func process(raw: [Int16], far: [Int16], playedAround: Double) throws -> Outcome {
        try canceller.analyzeReverse(far)
        let (cancelled, linear) = try canceller.processKeepingLinear(raw)
        let settling = onset.add(far: far)
        // The user over the echo: the linear stage's output keeps them, WebRTC's would not.
        let userOverEcho = canceller.options.linearStageMs > 0
            && doubleTalk.add(raw: raw, linear: linear, playing: playedAround >= EchoTuning.Residual.playingRMS, settling: settling)
        let changed = userOverEcho != wasUserOverEcho
        wasUserOverEcho = userOverEcho
        var samples: [Int16] =
            if userOverEcho {
                linear
            } else if canceller.options.suppressResidualEcho {
                suppressor.pass(far: far, playedAround: playedAround, raw: raw, cleaned: cancelled, settling: settling)
            } else {
                cancelled
            }
        let suppressed = !userOverEcho && canceller.options.suppressResidualEcho && suppressor.mutedLast
        // The user's first frames, which the suppressor's run rule would turn down (see `UserOnsetKeeper`).
        let onsetKept = canceller.options.linearStageMs > 0 && canceller.options.suppressResidualEcho
            && userOnset.keep(raw: raw, linear: linear, cancelled: cancelled, playing: playedAround >= EchoTuning.Residual.playingRMS,
                              muted: suppressed, userOverEcho: userOverEcho)
        if onsetKept { samples = linear }
        let echoAlone = suppressed && !onsetKept
        let explained = explanation.read(raw: raw, far: far, echoAlone: echoAlone)
        return Outcome(samples: samples, cancelled: cancelled, linear: linear, userOverEcho: userOverEcho, changed: changed,
                       echoExplained: explained.window, echoExplainedClosely: explained.frame)
    }
}
