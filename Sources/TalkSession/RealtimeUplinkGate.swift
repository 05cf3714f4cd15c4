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
/// - `BargeInEvidenceMeter.userRunFrames` audible frames in a row the answer does not explain (`ownSound`: over the
///   window, and further where the reference at the echo's lag explains them);
/// - while the answer plays lowered for them (`RealtimeReplyLevel`), once the lowered answer has reached the
///   microphone (`loweredReachFrames`), `loweredOwnFrames` audible frames among the last `loweredWindowFrames` that
///   the answer does not explain whole (`loweredExplainedFrame`). A user quieter than the answer's echo (a metre from
///   speakers at full level: 6 to 12 dB under it) is still the canceller's output, but the explanation reads the raw
///   capture against the loudest reference in its reach, so their frames stay over half explained even with the
///   answer lowered; lowered (`BargeInPolicy.Lowering`, 25 dB), the answer's leak falls under the audible level,
///   and what stays audible is theirs. The level's return (no utterance followed) closes the gate this opened.
///
/// When the user's own sound opens the gate, the frames around their onset (the first sound onset of the stretch
/// heard up to then: `TurnTaking.userOnsetMs(of:)`) go out as the canceller's linear stage left them, by the rule a
/// released held utterance follows (`HeldUtteranceRelease`): over the answer at full level WebRTC and the residual
/// suppressor take the user's first frames down with its echo, and the relay heard their first word damaged
/// ("oh forward ten meters"). The opening already says the sound is theirs, and their onset is still held then, so it
/// goes out whole; the gate's rules, and what it sends when it holds, are unchanged. Where the stages took the user's
/// first word down whole, their first sound onset is their second word; their first word still shows in the linear
/// stage, as frames there that their close reference (`AudioFrame.echoExplainedClosely`) does not explain, and the
/// onset is taken from those up to `lookBackMs` before. What was held from before the onset's margin goes out as
/// silence, and from at most `onsetReachFrames` back unless the onset came from the linear stage.
package struct RealtimeUplinkGate {
    /// Frames held back while the answer's sound explains them (1 s): over the answer at full level, the user's
    /// own sound shows only once the answer, lowered at their onset, reaches the microphone lowered (300 to 400 ms
    /// after they began on the loopback: `BargeInEvidenceMeter.userSpeechStart`), and where the stages took their
    /// first word down whole (a user who began with one of the answer's sentences, whose first second the residual
    /// suppressor guards with a longer run) their first onset is their second word and the gate opens 800 ms after
    /// they began; their onset is still held when it opens the gate. Holding costs no time: the gate sends what it
    /// holds at once when it opens.
    package static let heldFrames = 50
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
    /// misplaced reference, the double-talk detector passing the lowered echo) read 0.83 to 1 explained at once. Read
    /// closely too (the frame against the reference at the echo's lag): the lowered echo the canceller lost read 0.62
    /// to 0.93 over the window in four of 107 recorded realtime answers without a user, four such frames in 300 ms, and
    /// 0.92 to 1 closely, where a user over the lowered answer stands over its reference at the lag.
    static let loweredExplainedFrame: Float = 0.95
    /// The user's own sound in the linear stage (`heardLinear`): this many frames in a row, at least this loud there.
    static let linearOwnFrames = 2
    static let linearOwnRMS = 300.0
    /// How far before the stretch's first sound onset their own sound in the linear stage may put the user's onset.
    package static let lookBackMs = 400
    /// What goes out when the user's own sound opens the gate starts at most this many frames (500 ms) back, unless
    /// their own sound in the linear stage put their onset further: a stretch of sound onsets may have begun with the
    /// answer's leak (`TurnTaking.onsetStretchGapMs`), which the relay would hear in front of their first word.
    static let onsetReachFrames = 25
    /// The linear stage's output around the user's onset: `HeldUtteranceRelease`'s rule, reaching as far back as the gate holds.
    package static var onsetRelease: HeldUtteranceRelease.Settings {
        var settings = HeldUtteranceRelease.Settings()
        settings.linearReachMs = heldFrames * AudioFrame.durationMs
        return settings
    }

    private let audibleRMS: Double
    private let heldFrames: Int
    /// How far before the stretch's first sound onset the user's own sound in the linear stage may put their onset.
    private let lookBackMs: Int
    /// Which frames around the user's onset go out from the linear stage.
    private let onsetRelease: HeldUtteranceRelease.Settings
    private var held: [AudioFrame] = []
    /// The sound onsets of the stretch heard up to now (stream ms of each run's first loud frame; a gap over
    /// `TurnTaking.onsetStretchGapMs` starts a new stretch).
    private var onsetsMs: [Int] = []
    /// Where each run of `linearOwnFrames` frames of the user's own sound in the linear stage began (stream ms),
    /// within the held frames.
    private var linearOwnFromMs: [Int] = []
    private var linearOwnRun = 0
    /// The frame just passed began a run of the user's own sound in the linear stage (`linearOwnFrames`): the session
    /// lowers the answer there as at a sound onset, since where the stages muted the user's first word whole the first
    /// onset is their second word, 300 ms on, and the lowered answer reached the microphone 800 ms after they began.
    /// In 28 s of recorded PipeWire answers before the users (20 sessions) no such run came of the echo once the close
    /// reading followed its lag (`EchoFrameLag`); 17 of the 20 users showed one within 110 ms of their start.
    private(set) var heardOwnInLinear = false
    /// While the user's own sound holds the gate open: the frames around their onset sent from the linear stage.
    private var linearOnset: HeldUtteranceRelease?
    private var ownRun = 0
    private var openFor = 0
    /// Frames since the answer was lowered (nil: at its level).
    private var loweredFor: Int?
    /// The last `loweredWindowFrames` frames heard lowered and reached: whether each was audible and not the answer's whole.
    private var loweredOwn: [Bool] = []
    /// The gate is open on the lowered evidence alone (not a run of unexplained frames).
    private var openedLowered = false

    init(audibleRMS: Double = BargeInPolicy().energy.minimumRMS, onsetRelease: HeldUtteranceRelease.Settings = Self.onsetRelease,
         heldFrames: Int = Self.heldFrames, lookBackMs: Int = Self.lookBackMs) {
        self.audibleRMS = audibleRMS
        self.onsetRelease = onsetRelease
        self.heldFrames = heldFrames
        self.lookBackMs = lookBackMs
    }

    /// The frames the linear stage's output is sent for while the gate is open (empty: none).
    var linearMs: Range<Int> { linearOnset?.linearMs ?? 0..<0 }

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
        if openedLowered {
            openFor = 0
            linearOnset = nil
        }
        answerStopped()
    }

    /// The answer stopped (a barge-in, its end): the user who stopped it is still heard while the gate is open.
    mutating func answerStopped() {
        loweredFor = nil
        loweredOwn = []
        openedLowered = false
    }

    /// Takes the next frame heard, and whether it made a sound onset (`SpeechEnergy.onsetFrames` loud frames in a
    /// row: `RealtimeBargeInGuard.hear`); returns the samples to send now, in order (empty while it holds them).
    mutating func pass(_ frame: AudioFrame, soundOnset: Bool = false) -> [Int16] {
        if soundOnset { heardOnset(atMs: frame.streamPositionMs - (SpeechEnergy.onsetFrames - 1) * AudioFrame.durationMs) }
        heardOwnInLinear = false
        let audible = AudioLevel.rms(frame.samples) >= audibleRMS
        guard let explained = frame.echoExplained ?? (audible && !held.isEmpty ? 0 : nil) else {
            ownRun = 0
            if !isOpen { linearOnset = nil }
            return release(silenced: !isOpen) + sent(frame)
        }
        heardLinear(frame)
        let wasOpen = isOpen
        ownRun = audible && Self.ownSound(frame, explained: explained) ? ownRun + 1 : 0
        let overLowered = heardOverLoweredAnswer(
            audible: audible, explained: max(explained, frame.echoExplainedClosely ?? 0))
        if ownRun >= BargeInEvidenceMeter.userRunFrames {
            openFor = Self.openFrames
            openedLowered = false
        } else if overLowered {
            if !isOpen { openedLowered = true }
            openFor = Self.openFrames
        } else if openFor > 0 {
            openFor -= 1
        }
        if isOpen, !wasOpen {
            let (onsetMs, ownInLinear) = userOnset(heardThroughMs: frame.streamPositionMs)
            let heldFromMs = held.first?.streamPositionMs ?? frame.streamPositionMs
            let reachMs = frame.streamPositionMs - Self.onsetReachFrames * AudioFrame.durationMs
            linearOnset = HeldUtteranceRelease(
                startMs: ownInLinear ? heldFromMs : max(heldFromMs, reachMs), onsetMs: onsetMs,
                heardThroughMs: frame.streamPositionMs + AudioFrame.durationMs, settings: onsetRelease)
        }
        if isOpen { return release(silenced: false) + sent(frame) }
        linearOnset = nil
        held.append(frame)
        guard held.count > heldFrames else { return [] }
        return [Int16](repeating: 0, count: held.removeFirst().samples.count)
    }

    /// Whether a frame the answer plays under (`explained`: its window reading, `AudioFrame.echoExplained`) may be the
    /// user's own sound: under half explained by the window (the capture's 100 ms against the loudest reference frame
    /// in the echo's reach), and, where the close reading (the frame against the reference at the echo's measured lag,
    /// `EchoFrameLag`: `AudioFrame.echoExplainedClosely`) explains half of it, under the share a settling window asks
    /// (`BargeInEvidenceMeter.settledReading`: a quarter). The echo of a sound placed off its reference (the first
    /// sound after a pause of the answer's output, on PipeWire: up to 50 ms early and louder than the reference there)
    /// passes every stage and reads 0.34 to 0.46 over the window, three frames in a row, while the reference at the lag
    /// explains it from the run's second frame on; the relay's VAD took it for the user. A user's own sound over the
    /// answer stands over the reference in reach: in recorded PipeWire barge-ins (f38's, 3 of 14) whose close reading
    /// explained the users' first 200 ms whole, the window read them 0.02 to 0.22, so the close reading alone would
    /// have opened the gate 140 to 200 ms later.
    static func ownSound(_ frame: AudioFrame, explained: Float) -> Bool {
        let closely = (frame.echoExplainedClosely ?? 0) >= BargeInEvidenceMeter.explainedFrame
        let reading = closely ? BargeInEvidenceMeter.settledReading(window: explained) ?? explained : explained
        return reading < BargeInEvidenceMeter.explainedFrame
    }

    /// Follows the user's own sound in the linear stage's output: audible there (`linearOwnRMS`) and under half
    /// explained by its close reference (`AudioFrame.echoExplainedClosely`).
    private mutating func heardLinear(_ frame: AudioFrame) {
        let own = frame.linearSamples.map { AudioLevel.rms($0) >= Self.linearOwnRMS } == true
            && (frame.echoExplainedClosely.map { $0 < BargeInEvidenceMeter.explainedFrame } ?? false)
        linearOwnRun = own ? linearOwnRun + 1 : 0
        if linearOwnRun == Self.linearOwnFrames {
            linearOwnFromMs.append(frame.streamPositionMs - (Self.linearOwnFrames - 1) * AudioFrame.durationMs)
            heardOwnInLinear = true
        }
        let oldest = held.first?.streamPositionMs ?? frame.streamPositionMs
        linearOwnFromMs.removeAll { $0 < oldest }
    }

    /// Where the user began, when their own sound opens the gate: the first sound onset of the stretch heard by then,
    /// or, where their own sound showed in the linear stage there or up to `lookBackMs` before it, there (`ownInLinear`).
    private func userOnset(heardThroughMs: Int) -> (ms: Int?, ownInLinear: Bool) {
        let onset = TurnTaking.userOnsetMs(of: onsetsMs) { [held, onsetRelease] in
            HeldUtteranceRelease.heardAsEcho(onsetMs: $0, frames: held, settings: onsetRelease)
        }
        let latest = onset ?? heardThroughMs
        guard let own = linearOwnFromMs.first(where: { $0 >= latest - lookBackMs && $0 <= latest }) else { return (onset, false) }
        return (own, true)
    }

    private mutating func heardOnset(atMs onsetMs: Int) {
        if let last = onsetsMs.last, onsetMs - last > TurnTaking.onsetStretchGapMs { onsetsMs = [] }
        onsetsMs.append(onsetMs)
    }

    /// What goes out of `frame` as heard: around the user's onset, the linear stage's output.
    private func sent(_ frame: AudioFrame) -> [Int16] {
        linearOnset?.samples(of: frame) ?? frame.samples
    }

    /// Whether, with the answer lowered and reached, the window holds the user's own sound (`explained`: the more of the
    /// window and close readings).
    private mutating func heardOverLoweredAnswer(audible: Bool, explained: Float) -> Bool {
        guard let frames = loweredFor else { return false }
        loweredFor = frames + 1
        guard frames >= Self.loweredReachFrames else { return false }
        loweredOwn.append(audible && explained < Self.loweredExplainedFrame)
        if loweredOwn.count > Self.loweredWindowFrames { loweredOwn.removeFirst() }
        return loweredOwn.count(where: { $0 }) >= Self.loweredOwnFrames
    }

    /// What is held, as heard or as silence, and nothing held after. Opened by the user's own sound, what was held
    /// from before their onset's margin (`HeldUtteranceRelease.fromMs`) goes out as silence: the answer's leak.
    private mutating func release(silenced: Bool) -> [Int16] {
        defer { held = [] }
        let fromMs = silenced ? Int.max : linearOnset?.fromMs ?? Int.min
        return held.flatMap { $0.streamPositionMs < fromMs ? [Int16](repeating: 0, count: $0.samples.count) : sent($0) }
    }
}
