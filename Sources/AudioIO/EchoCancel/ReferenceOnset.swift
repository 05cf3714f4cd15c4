/// Where a sound starts in the reference after a pause (200 ms of digital silence: the gap between a reply's
/// sentences, not the quiet between a recording's words), and how long ago. Both cancellers mis-handle the
/// first stretch of such a sound on the loopback: Speex's filter leaves -3 to -15 dB of its echo for up to
/// 800 ms, and WebRTC's output has let 5 or 6 frames of it through in a row 160 to 720 ms in (the echo of
/// "Take a coat" recognised as "oh" and as "cool", a new turn of the reply's own making). `DoubleTalkDetector`
/// and `ResidualEchoSuppressor` are stricter for that long.
struct ReferenceOnset {
    /// Its tuning: `EchoTuning.Onset`.
    typealias Tuning = EchoTuning.Onset

    private var quietFrames = Tuning.pauseFrames
    private var sinceOnset = 0

    /// Takes the reference fed with the next frame; returns whether that frame is within `settlingFrames` of
    /// an onset.
    mutating func add(far: [Int16]) -> Bool {
        if AudioLevel.meanSquare(far) >= Tuning.pauseRMS * Tuning.pauseRMS {
            if quietFrames >= Tuning.pauseFrames { sinceOnset = 0 }
            quietFrames = 0
        } else {
            quietFrames += 1
        }
        sinceOnset = min(sinceOnset + 1, Tuning.settlingFrames)
        return sinceOnset < Tuning.settlingFrames
    }
}
