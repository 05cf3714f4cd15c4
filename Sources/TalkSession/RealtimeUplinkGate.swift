import AudioIO

/// What the relay hears of the microphone while the answer's sound is in it (no I/O). The relay's provider decides on
/// its own whether the user speaks (upstream's relay creates the bridge with `interruptResponseOnInputAudio`: OpenAI's
/// server VAD cancels the response on `speech_started`), and its VAD knows nothing of the answer: the canceller's
/// leak at a loud word's onset (RMS 500 to 3 500, 100 to 150 ms, in replays of recorded 25 s loopback answers) is
/// speech to it, and cuts the answer off. So a frame the answer's own sound explains (`AudioFrame.echoExplained` at
/// least `BargeInEvidenceMeter.explainedFrame`) is held back, and sent as silence once `heldFrames` later, unless the
/// user's own sound opens the gate first: then what is held goes out as heard, the user's onset with it, and what
/// follows goes out at once, until `openFrames` pass without their sound. A frame with no measure (nothing played
/// within the echo's reach, or no canceller's measure: `--aec pulse`) goes out as heard, after what is held (as
/// silence unless the gate is open); but while frames are held, an audible one is the user's own sound (nothing
/// plays to explain it) and is held with them: the user may have begun under the answer's last sound, their onset
/// among the held frames, and a run of such frames opens the gate, which sends that onset as heard.
///
/// The user's own sound is either of:
/// - `BargeInEvidenceMeter.userRunFrames` audible frames in a row the answer does not explain;
/// - while the answer plays lowered for them (`RealtimeReplyLevel`), once the lowered answer has reached the
///   microphone (`loweredReachFrames`), `loweredOwnFrames` audible frames among the last `loweredWindowFrames` that
///   the answer does not explain whole (`loweredExplainedFrame`). A user quieter than the answer's echo (a metre from
///   speakers at full level: 6 to 12 dB under it) is still the canceller's output, but the explanation reads the raw
///   capture against the loudest reference in its reach, so their frames stay over half explained even with the
///   answer lowered; lowered 15 dB, the answer's leak falls under the audible level, and what stays audible is
///   theirs. The level's return (no utterance followed) closes the gate this opened.
struct RealtimeUplinkGate {
    /// Frames held back while the answer's sound explains them (500 ms): over the answer at full level, the user's
    /// own sound shows only once the answer, lowered at their onset, reaches the microphone lowered (300 to 400 ms
    /// after they began on the loopback: `BargeInEvidenceMeter.userSpeechStart`); their onset is still held when it
    /// opens the gate. Holding costs no time: the gate sends what it holds at once when it opens.
    static let heldFrames = 25
    /// The gate stays open this many frames (1 s) past the user's last own frame: pauses between their words.
    static let openFrames = 50
    /// Frames (200 ms) from lowering the answer until the microphone hears it lowered: the sink's 100 ms buffer and
    /// the gain's ramp; in 10 recorded loopback sessions the lowered reference reached it within 140 ms.
    static let loweredReachFrames = 10
    /// The window (300 ms) over which the user's audible frames are counted while the answer is lowered.
    static let loweredWindowFrames = 15
    /// Audible frames in the window that make the user's own sound while the answer is lowered (80 ms of 300 ms):
    /// in replays of 40 recorded 25 s realtime answers without a user, at most 3 frames in any such window after a
    /// sound onset were 15 dB over the audible level (the lowered leak's equivalent), but in one session whose
    /// canceller had lost the echo; a user 20 dB under the local voice's reply (`bench talk --user-gain-db -12`)
    /// made 4 in 19 of 20 sessions.
    static let loweredOwnFrames = 4
    /// While the answer is lowered, a frame it explains at least this much is its own: the canceller's failures (a
    /// misplaced reference, the double-talk detector passing the lowered echo) read 0.83 to 1 explained at once.
    static let loweredExplainedFrame: Float = 0.95

    private let audibleRMS: Double
    private var held: [[Int16]] = []
    private var ownRun = 0
    private var openFor = 0
    /// Frames since the answer was lowered (nil: at its level).
    private var loweredFor: Int?
    /// The last `loweredWindowFrames` frames heard lowered and reached: whether each was audible and not the answer's whole.
    private var loweredOwn: [Bool] = []
    /// The gate is open on the lowered evidence alone (not a run of unexplained frames).
    private var openedLowered = false

    init(audibleRMS: Double = BargeInPolicy().energy.minimumRMS) { self.audibleRMS = audibleRMS }

    /// Whether the user's own sound holds the gate open.
    var isOpen: Bool { openFor > 0 }

    /// Frames held back now (each `AudioFrame.samplesPerFrame` samples).
    var heldCount: Int { held.count }

    /// The answer plays lowered now, while the user may be cutting in.
    mutating func answerLowered() {
        if loweredFor == nil { loweredFor = 0 }
    }

    /// The answer's level returned while it plays (no utterance followed, or it closed): a gate opened on the lowered
    /// evidence alone closes.
    mutating func answerLevelReturned() {
        if openedLowered { openFor = 0 }
        answerStopped()
    }

    /// The answer stopped (a barge-in, its end): the user who stopped it is still heard while the gate is open.
    mutating func answerStopped() {
        loweredFor = nil
        loweredOwn = []
        openedLowered = false
    }

    /// Takes the next frame heard; returns the samples to send now, in order (empty while it holds them).
    mutating func pass(_ frame: AudioFrame) -> [Int16] {
        let audible = AudioLevel.rms(frame.samples) >= audibleRMS
        guard let explained = frame.echoExplained ?? (audible && !held.isEmpty ? 0 : nil) else {
            ownRun = 0
            return release(silenced: !isOpen) + frame.samples
        }
        ownRun = audible && explained < BargeInEvidenceMeter.explainedFrame ? ownRun + 1 : 0
        let overLowered = heardOverLoweredAnswer(audible: audible, explained: explained)
        if ownRun >= BargeInEvidenceMeter.userRunFrames {
            openFor = Self.openFrames
            openedLowered = false
        } else if overLowered {
            if !isOpen { openedLowered = true }
            openFor = Self.openFrames
        } else if openFor > 0 {
            openFor -= 1
        }
        if isOpen { return release(silenced: false) + frame.samples }
        held.append(frame.samples)
        guard held.count > Self.heldFrames else { return [] }
        return [Int16](repeating: 0, count: held.removeFirst().count)
    }

    /// Whether, with the answer lowered and reached, the window holds the user's own sound.
    private mutating func heardOverLoweredAnswer(audible: Bool, explained: Float) -> Bool {
        guard let frames = loweredFor else { return false }
        loweredFor = frames + 1
        guard frames >= Self.loweredReachFrames else { return false }
        loweredOwn.append(audible && explained < Self.loweredExplainedFrame)
        if loweredOwn.count > Self.loweredWindowFrames { loweredOwn.removeFirst() }
        return loweredOwn.count(where: { $0 }) >= Self.loweredOwnFrames
    }

    /// What is held, as heard or as silence, and nothing held after.
    private mutating func release(silenced: Bool) -> [Int16] {
        defer { held = [] }
        return silenced ? [Int16](repeating: 0, count: held.reduce(0) { $0 + $1.count }) : held.flatMap { $0 }
    }
}
