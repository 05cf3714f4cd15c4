import AudioIO

/// What the relay hears of the microphone while the answer's sound is in it (no I/O). The relay's provider decides on
/// its own whether the user speaks (upstream's relay creates the bridge with `interruptResponseOnInputAudio`: OpenAI's
/// server VAD cancels the response on `speech_started`), and its VAD knows nothing of the answer: the canceller's
/// leak at a loud word's onset (RMS 500 to 3 500, 100 to 150 ms, in replays of recorded 25 s loopback answers) is
/// speech to it, and cuts the answer off. So a frame the answer's own sound explains (`AudioFrame.echoExplained` at
/// least `BargeInEvidenceMeter.explainedFrame`) is held back, and sent as silence once `heldFrames` later, unless the
/// user's own sound (`BargeInEvidenceMeter.userRunFrames` audible frames in a row the answer does not explain) opens
/// the gate first: then what is held goes out as heard, the user's onset with it, and what follows goes out at once,
/// until `openFrames` pass without their sound. A frame with no measure (nothing played within the echo's reach, or
/// no canceller's measure: `--aec pulse`) goes out as heard, after what is held.
struct RealtimeUplinkGate {
    /// Frames held back while the answer's sound explains them (500 ms): over the answer at full level, the user's
    /// own sound shows only once the answer, lowered at their onset, reaches the microphone lowered (300 to 400 ms
    /// after they began on the loopback: `BargeInEvidenceMeter.userSpeechStart`); their onset is still held when it
    /// opens the gate. Holding costs no time: the gate sends what it holds at once when it opens.
    static let heldFrames = 25
    /// The gate stays open this many frames (1 s) past the user's last own frame: pauses between their words.
    static let openFrames = 50

    private let audibleRMS: Double
    private var held: [[Int16]] = []
    private var ownRun = 0
    private var openFor = 0

    init(audibleRMS: Double = BargeInPolicy().energy.minimumRMS) { self.audibleRMS = audibleRMS }

    /// Whether the user's own sound holds the gate open.
    var isOpen: Bool { openFor > 0 }

    /// Frames held back now (each `AudioFrame.samplesPerFrame` samples).
    var heldCount: Int { held.count }

    /// Takes the next frame heard; returns the samples to send now, in order (empty while it holds them).
    mutating func pass(_ frame: AudioFrame) -> [Int16] {
        guard let explained = frame.echoExplained else { return release(silenced: !isOpen) + frame.samples }
        let own = explained < BargeInEvidenceMeter.explainedFrame && AudioLevel.rms(frame.samples) >= audibleRMS
        ownRun = own ? ownRun + 1 : 0
        if ownRun >= BargeInEvidenceMeter.userRunFrames {
            openFor = Self.openFrames
        } else if openFor > 0 {
            openFor -= 1
        }
        if isOpen { return release(silenced: false) + frame.samples }
        held.append(frame.samples)
        guard held.count > Self.heldFrames else { return [] }
        return [Int16](repeating: 0, count: held.removeFirst().count)
    }

    /// What is held, as heard or as silence, and nothing held after.
    private mutating func release(silenced: Bool) -> [Int16] {
        defer { held = [] }
        return silenced ? [Int16](repeating: 0, count: held.reduce(0) { $0 + $1.count }) : held.flatMap { $0 }
    }
}
