import AudioIO
import Synchronization
import TalkLogging

/// Sits between the capture device and the listener: measures each frame's level for barge-in's energy guard,
/// and passes frames or silence (so the endpointer hears none) as the loop's one microphone mode says
/// (`TurnTaking+Microphone`: open, muted, held).
///
/// It runs where its device yields frames (the device's executor when the device is an actor: `EchoCancellingCapture`'s
/// own `echo-cancel` thread), so a frame passes through it without waiting for the cooperative pool, and a sound over
/// the reply lowers the reply there and then, when the loop has said it should (`lowerAtSoundOnset`): on a loaded
/// machine the pool's threads wait for a CPU like any other, and the reply, lowered from the loop's actor, came down
/// 320 ms after the user's onset instead of 40 to 80.
package actor MicrophoneGate: AudioCaptureDevice {
    private let inner: any AudioCaptureDevice
    /// Whose executor the gate runs on: the device's (`CaptureExecutor`).
    private nonisolated let host: any Actor
    package nonisolated var unownedExecutor: UnownedSerialExecutor { host.unownedExecutor }
    private var forward: Task<Void, Never>?
    private var level: SpeechEnergy
    /// What passes: set by the session in the same step as its own state (a lock rather than this actor's queue,
    /// so a mute and the unmute after it can never arrive out of order).
    private let current = Mutex(TurnTaking.MicrophoneMode.open)
    /// The gain the next sound onset lowers the reply to, at once (`lowerAtSoundOnset`); nil: it is left alone.
    private let onsetLowering = Mutex<Float?>(nil)
    /// The speaker whose level the gate may set itself (nil: only the loop sets it).
    private let speaker: (any ImmediatePlaybackGain)?
    private let logger: Logger?
    /// What each frame carried for barge-in's evidence (`BargeInEvidenceMeter`).
    private var evidence: BargeInEvidenceMeter
    /// One element each time the microphone turns loud (`SpeechEnergy.onsetFrames` frames in a row over the
    /// floor): sound that may be the user starting to speak, long before the endpointer can say so. Unbounded: an
    /// onset that lowered the reply must reach the loop, which alone may raise it again.
    package nonisolated let soundOnsets: AsyncStream<SoundOnset>
    private let onsetSink: AsyncStream<SoundOnset>.Continuation
    private var loudFrames = 0
    /// Where the capture stream has reached (stream ms): the end of the last frame passed.
    package private(set) var heardToMs = 0
    /// When the last frame passed was captured (its `captureTimeNs`, monotonic), if one has passed.
    package private(set) var heardToCaptureNs: UInt64?
    /// The sequences of the frames that were loud over the noise floor on their own (the energy guard's test of one
    /// frame, what makes an onset) and passed with the microphone open, within the last `SpeechEnergy.keptFrames`.
    private var loudSequences: [UInt64] = []

    /// A sound onset (`soundOnsets`).
    package struct SoundOnset: Sendable, Equatable {
        /// Where the onset's first loud frame starts in the capture stream (stream ms, `AudioFrame.streamPositionMs`:
        /// the clock of the endpointer's positions and of the relay's frames).
        package var positionMs: Int
        /// The gain the gate lowered the reply to at this onset, on the loop's standing order; nil if it did not.
        package var loweredTo: Float?
        /// When the onset's last frame was captured (`AudioFrame.captureTimeNs`, monotonic).
        package var captureNs: UInt64
    }

    /// - Parameters:
    ///   - speaker: the reply's speaker, if its level can be set from here (`ImmediatePlaybackGain`): the gate lowers
    ///     it at a sound onset when the loop has said so (`lowerAtSoundOnset`).
    package init(
        _ inner: any AudioCaptureDevice, energy: BargeInPolicy.EnergyGuard = BargeInPolicy.EnergyGuard(),
        speaker: (any ImmediatePlaybackGain)? = nil, logger: Logger? = nil
    ) {
        self.inner = inner
        host = CaptureExecutor.of(inner)
        self.speaker = speaker
        self.logger = logger
        level = SpeechEnergy(energy)
        evidence = BargeInEvidenceMeter(audibleRMS: energy.minimumRMS)
        (soundOnsets, onsetSink) = AsyncStream.makeStream(of: SoundOnset.self, bufferingPolicy: .unbounded)
    }

    package func start() async throws -> AsyncStream<CaptureEvent> {
        stopForwarding()
        let events = try await inner.start()
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        forward = Task { await self.forward(events, to: continuation) }
        continuation.onTermination = { _ in Task { await self.stopForwarding() } }
        return stream
    }

    package func stop() async {
        stopForwarding()
        await inner.stop()
    }

    /// Passes the device's frames on, on the gate's executor (the device's): isolated, the stream resumes it there.
    private func forward(_ events: AsyncStream<CaptureEvent>, to continuation: AsyncStream<CaptureEvent>.Continuation) async {
        for await event in events {
            continuation.yield(pass(event))
        }
        continuation.finish()
    }

    /// The loop's standing order (`TurnTaking.soundOnsetLowering`, set in the same step as the machine's state): the
    /// next sound onset lowers the reply to `gain` at once, then tells the loop (`SoundOnset.loweredTo`); nil: an
    /// onset leaves the level to the loop. Nothing without a `speaker`.
    package nonisolated func lowerAtSoundOnset(_ gain: Float?) { onsetLowering.withLock { $0 = gain } }

    /// `Action.setMicrophone`: the next frame meets `mode`.
    package nonisolated func setMode(_ mode: TurnTaking.MicrophoneMode) { current.withLock { $0 = mode } }

    /// What the microphone passes now.
    package nonisolated var mode: TurnTaking.MicrophoneMode { current.withLock { $0 } }

    /// Whether the 300 ms of audio ending at `endMs` (stream milliseconds: where a partial's audio ends) were loud
    /// enough over the noise floor as it stood then to be someone speaking (`BargeInPolicy.EnergyGuard`); the last 300 ms when `endMs` is nil or no longer kept. The
    /// recogniser lags the microphone (seconds on a loaded machine): judged by what the microphone hears when the
    /// partial arrives, a user who spoke in a pause of the reply had often stopped by then, and their words, heard
    /// right, were held as "not loud enough" and then ignored as heard over the reply.
    func heardSpeech(endingAtMs endMs: Int?) -> Bool {
        guard let endMs else { return level.isSpeech }
        return level.wasSpeech(endingAtSequence: UInt64(max(0, endMs / AudioFrame.durationMs - 1))) ?? level.isSpeech
    }

    /// The reply plays at `gain` from now (`BargeInEvidenceMeter.replyPlays(atGain:)`).
    func replyPlays(atGain gain: Float) {
        evidence.replyPlays(atGain: gain)
    }

    /// What the frames of the utterance that opened at `positionMs`, through `throughMs` (where a partial's audio
    /// ends; nil: the latest), say about it: see `BargeInEvidenceMeter.evidence(ofUtteranceAtMs:throughMs:)`; a
    /// held partial's `recheck` asks for the user's own sound to have gone on.
    func bargeInEvidence(
        fromPositionMs positionMs: Int, throughMs: Int?, recheck: Bool = false
    ) -> (echoExplained: Double?, startedBeforeReplyAudio: Bool?, userSoundShown: Bool?) {
        evidence.evidence(ofUtteranceAtMs: positionMs, throughMs: throughMs, recheck: recheck)
    }

    /// Whether the microphone hears the user's own sound now (the onset hold's question: `BargeInPolicy.Lowering`'s
    /// `onsetHoldLimit`): the last 300 ms loud enough over the noise floor to be speech, and a run of frames in the last
    /// 500 ms that the reply's echo does not explain (`BargeInEvidenceMeter.userSoundGoesOn`); false with no canceller's
    /// measure.
    func hearsUserSound() -> Bool {
        level.isSpeech && evidence.userSoundGoesOn(lastFrames: BargeInEvidenceMeter.holdFrames)
    }

    /// Whether any frame from `fromMs` up to `throughMs` (stream ms: a frame counts if it starts in between) was loud
    /// over the noise floor on its own and passed with the microphone open: past the reply's echo, the sound of a held
    /// utterance that goes on (`Action.weighSpeechPastEcho`). Only the last `SpeechEnergy.keptFrames` frames are known;
    /// older ones count as quiet.
    func heardSound(fromMs: Int, throughMs: Int) -> Bool {
        let first = UInt64(max(0, fromMs) / AudioFrame.durationMs)
        let end = UInt64(max(0, throughMs) / AudioFrame.durationMs)
        return loudSequences.contains { $0 >= first && $0 < end }
    }

    /// Where the user began speaking in the utterance that opened at `positionMs`: see
    /// `BargeInEvidenceMeter.userSpeechStart(fromPositionMs:)`.
    func userSpeechStart(fromPositionMs positionMs: Int) -> UserSound {
        evidence.userSpeechStart(fromPositionMs: positionMs)
    }

    private func stopForwarding() {
        forward?.cancel()
        forward = nil
    }

    private func pass(_ event: CaptureEvent) -> CaptureEvent {
        guard case .frame(var frame) = event else { return event }
        let loud = level.add(frame.samples, sequence: frame.sequence)
        evidence.add(frame)
        heardToMs = Int(frame.sequence + 1) * AudioFrame.durationMs
        heardToCaptureNs = frame.captureTimeNs
        loudFrames = loud ? loudFrames + 1 : 0
        let open = mode == .open
        if loud, open { loudSequences.append(frame.sequence) }
        if let oldest = loudSequences.first, oldest + UInt64(SpeechEnergy.keptFrames) <= frame.sequence {
            loudSequences.removeAll { $0 + UInt64(SpeechEnergy.keptFrames) <= frame.sequence }
        }
        if loudFrames == SpeechEnergy.onsetFrames {
            evidence.soundOnset(atSequence: frame.sequence + 1 - UInt64(SpeechEnergy.onsetFrames))
        }
        if !open {
            frame.samples = [Int16](repeating: 0, count: frame.samples.count)
        } else if loudFrames == SpeechEnergy.onsetFrames {
            let positionMs = Int(frame.sequence + 1 - UInt64(SpeechEnergy.onsetFrames)) * AudioFrame.durationMs
            let onset = SoundOnset(positionMs: positionMs, loweredTo: lowerReplyAtOnset(), captureNs: frame.captureTimeNs)
            traceOnset(onset)
            onsetSink.yield(onset)
        }
        return .frame(frame)
    }

    /// Carries out the standing order, once: the speaker and the evidence meter take the lowered level from this frame.
    private func lowerReplyAtOnset() -> Float? {
        guard let speaker, let gain = onsetLowering.withLock({ order in defer { order = nil }; return order }) else { return nil }
        speaker.setGainAtOnce(gain)
        evidence.replyPlays(atGain: gain)
        return gain
    }

    /// At debug level: how long after the onset's last frame was captured the gate saw it (`talk.onsetLagMs`).
    private func traceOnset(_ onset: SoundOnset) {
        guard let logger, logger.logLevel <= .debug else { return }
        let now = monotonicNanoseconds()
        logger.debug("sound onset", metadata: [
            "talk.onsetMs": "\(onset.positionMs)", "talk.onsetLagMs": "\(Self.milliseconds(now &- min(now, onset.captureNs)))",
            "talk.loweredTo": "\(onset.loweredTo.map { "\($0)" } ?? "-")",
        ])
    }
}

extension MicrophoneGate {
    /// Nanoseconds as milliseconds with one decimal, for a trace.
    static func milliseconds(_ ns: UInt64) -> String { "\(ns / 1_000_000).\(ns / 100_000 % 10)" }
}

/// Where a wrapper of a capture device runs (`MicrophoneGate`, `UtteranceAudioTap`): on the device's executor when the
/// device is an actor, so each frame it yields is taken up on the same thread (`EchoCancellingCapture`: its own, off
/// the cooperative pool) without a hop; on an executor of the wrapper's own otherwise.
enum CaptureExecutor {
    static func of(_ device: any AudioCaptureDevice) -> any Actor { (device as? any Actor) ?? Standalone() }

    private actor Standalone {}
}

/// The energy guard: a noise floor that follows the quietest level (down at once, up slowly, so the echo of a
/// reply playing on speakers raises it) against the loudest frame of the last 300 ms. How far over the floor speech
/// must be, and the level below which nothing counts, are `BargeInPolicy.EnergyGuard`'s.
package struct SpeechEnergy: Sendable {
    /// The loudest of the last 15 frames (300 ms of 20 ms frames) is the level compared with the floor.
    static let recentFrames = 15
    /// Loud frames in a row that make an onset: 40 ms, over a click's length and under a syllable's.
    package static let onsetFrames = 2

    /// Frames kept for `wasSpeech(endingAtSequence:)`: 3 s, the span `BargeInEvidenceMeter` reads its share over.
    static let keptFrames = 150

    private let ratioOverFloor: Double
    private let minimumRMS: Double
    private(set) var floor: Double?
    private var recent: [Double] = []
    /// The last `keptFrames` frames: sequence, level (RMS) and the floor after it.
    private var kept: [(sequence: UInt64, rms: Double, floor: Double)] = []

    package init(_ guardPolicy: BargeInPolicy.EnergyGuard = BargeInPolicy.EnergyGuard()) {
        ratioOverFloor = guardPolicy.ratioOverFloor
        minimumRMS = guardPolicy.minimumRMS
    }

    /// Adds a frame; returns whether it alone is loud enough over the floor (as it stood before it) to be speech.
    @discardableResult
    package mutating func add(_ samples: [Int16], sequence: UInt64? = nil) -> Bool {
        guard !samples.isEmpty else { return false }
        let rms = AudioLevel.rms(samples)
        let loud = rms >= Swift.max(minimumRMS, (floor ?? rms) * ratioOverFloor)
        if let current = floor {
            floor = rms < current ? rms : current + (rms - current) * 0.01
        } else {
            floor = rms
        }
        recent.append(rms)
        if recent.count > Self.recentFrames { recent.removeFirst(recent.count - Self.recentFrames) }
        if let sequence, let floor {
            kept.append((sequence, rms, floor))
            if kept.count > Self.keptFrames { kept.removeFirst(kept.count - Self.keptFrames) }
        }
        return loud
    }

    /// `isSpeech` as it stood after frame `sequence`: its `recentFrames` frames against the floor then; nil when that
    /// frame is not kept (too old, or not heard yet).
    func wasSpeech(endingAtSequence sequence: UInt64) -> Bool? {
        guard let end = kept.lastIndex(where: { $0.sequence == sequence }) else { return nil }
        let window = kept[max(0, end - Self.recentFrames + 1)...end]
        guard let loudest = window.map(\.rms).max() else { return nil }
        return loudest >= Swift.max(minimumRMS, kept[end].floor * ratioOverFloor)
    }

    var isSpeech: Bool {
        guard let loudest = recent.max() else { return false }
        return loudest >= Swift.max(minimumRMS, (floor ?? 0) * ratioOverFloor)
    }
}
