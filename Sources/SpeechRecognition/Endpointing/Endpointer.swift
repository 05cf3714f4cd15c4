import AudioIO

/// Why an utterance was closed.
package enum EndpointReason: String, Sendable, Equatable {
    /// `silenceMs` of silence followed the last speech.
    case silence
    /// The utterance reached `maxUtteranceMs`; the next one starts with the following frame.
    case maximumLength
    /// The audio source ended (or the device vanished) while speech was going on.
    case endOfStream
}

/// What the endpointer decided on a frame.
package enum EndpointerEvent: Sendable, Equatable {
    /// Speech started at `positionMs` (the first voiced frame). `frames` is the audio the recogniser
    /// must be given now, oldest first: the pre-roll, the start window and the current frame.
    case speechStarted(positionMs: Int, frames: [AudioFrame])
    /// The utterance is closed. `lastSpeechEndMs` is where its last voiced frame ends; `closedAtMs` is
    /// where the frame that closed it ends; `lastSpeechCaptureNs` is when that last voiced frame was captured.
    case speechEnded(lastSpeechEndMs: Int, closedAtMs: Int, lastSpeechCaptureNs: UInt64, reason: EndpointReason)
}

/// Decides where utterances start and end in a stream of 20 ms frames, from their energy against an
/// adaptive noise floor (with hysteresis) and, optionally, the recogniser's own voice-activity signal.
/// A pure state machine: frames in, events out; the owner feeds the recogniser.
///
/// While listening, frames wait in a short buffer (pre-roll plus the start window); frames that fall out
/// of it are silence, counted in `droppedFrames`. In speech every frame belongs to the utterance, which
/// the owner has already fed to the recogniser before calling `process` (so its voice signal is current).
package struct Endpointer: Sendable {
    private enum State: Sendable, Equatable {
        case listening
        /// Voiced frames have been seen since `firstVoicedPositionMs`, but not enough yet to call it speech.
        case starting(firstVoicedPositionMs: Int, voicedFrames: Int, gapFrames: Int)
        case speaking(utteranceStartMs: Int, lastSpeechEndMs: Int, lastSpeechCaptureNs: UInt64, silentFrames: Int)
    }

    package let settings: EndpointerSettings
    private var state: State = .listening
    private var floor: NoiseFloorTracker
    /// Frames waiting while listening, with their levels (dBFS).
    private var buffer: [(frame: AudioFrame, level: Double)] = []
    /// Frames judged silence and never handed to the recogniser.
    package private(set) var droppedFrames = 0

    package init(settings: EndpointerSettings = .default) {
        self.settings = settings
        floor = NoiseFloorTracker(
            riseDbPerSecond: settings.floorRiseDbPerSecond, riseInSpeechDbPerSecond: settings.floorRiseInSpeechDbPerSecond)
    }

    /// True while an utterance is open: the owner feeds each frame to the recogniser before `process`.
    package var isInSpeech: Bool {
        if case .speaking = state { return true }
        return false
    }

    /// While voiced frames are being counted toward a start: the frames a start would hand the recogniser now (the
    /// pre-roll before the first voiced frame and the window since, oldest first); nil otherwise. An owner may start
    /// decoding them at once and go on with each frame: if the start comes, `speechStarted` hands over these same frames
    /// and the ones since; if voiced frames stop first, it is listening again (nil).
    package var pendingStartFrames: [AudioFrame]? {
        guard case .starting(let first, _, _) = state else { return nil }
        return buffer.filter { $0.frame.streamPositionMs >= first - settings.preRollMs }.map(\.frame)
    }

    /// While speaking: how long since the last voiced frame (0 on a voiced frame); nil while listening.
    package var silenceSinceSpeechMs: Int? {
        if case .speaking(_, _, _, let silent) = state { return silent * AudioFrame.durationMs }
        return nil
    }

    /// The current noise-floor estimate in dBFS.
    package var noiseFloorDb: Double? { floor.floorDb }

    /// Judges one frame. `voiceActivity` is the recogniser's signal for this frame when it was fed one.
    package mutating func process(_ frame: AudioFrame, voiceActivity: Bool? = nil) -> [EndpointerEvent] {
        let level = AudioLevel.dbfsWithoutOffset(frame.samples)
        let floorDb = floor.floorDb ?? level
        let startThreshold = max(floorDb + settings.startMarginDb, settings.minimumSpeechDbfs)
        let keepThreshold = startThreshold - settings.hysteresisDb
        var voiced = level >= keepThreshold
        if !voiced, settings.useRecognizerVoiceActivity, voiceActivity == true, level >= floorDb + settings.hysteresisDb {
            voiced = true
        }
        defer { floor.update(levelDb: level, inSpeech: isInSpeech) }

        switch state {
        case .listening:
            buffer.append((frame, level))
            if level >= startThreshold {
                // Speech began where the level first rose above the keep threshold: soft onsets count.
                let onset = buffer.reversed().prefix { $0.level >= keepThreshold }
                let first = onset.last?.frame.streamPositionMs ?? frame.streamPositionMs
                state = .starting(firstVoicedPositionMs: first, voicedFrames: onset.count, gapFrames: 0)
                return startIfReady()
            }
            trimBuffer(keepingFromMs: nil)
            return []
        case .starting(let first, let count, let gaps):
            buffer.append((frame, level))
            if voiced {
                state = .starting(firstVoicedPositionMs: first, voicedFrames: count + 1, gapFrames: 0)
                return startIfReady()
            }
            if (gaps + 1) * AudioFrame.durationMs > settings.startGapToleranceMs {
                state = .listening
                trimBuffer(keepingFromMs: nil)
            } else {
                state = .starting(firstVoicedPositionMs: first, voicedFrames: count, gapFrames: gaps + 1)
            }
            return []
        case .speaking(let start, let lastEnd, let lastNs, let silent):
            let frameEnd = frame.streamPositionMs + AudioFrame.durationMs
            if frameEnd - start >= settings.maxUtteranceMs {
                let end = voiced ? frameEnd : lastEnd
                state = .speaking(utteranceStartMs: frameEnd, lastSpeechEndMs: frameEnd,
                                  lastSpeechCaptureNs: frame.captureTimeNs, silentFrames: 0)
                return [
                    .speechEnded(lastSpeechEndMs: end, closedAtMs: frameEnd,
                                 lastSpeechCaptureNs: voiced ? frame.captureTimeNs : lastNs, reason: .maximumLength),
                    .speechStarted(positionMs: frameEnd, frames: []),
                ]
            }
            if voiced {
                state = .speaking(utteranceStartMs: start, lastSpeechEndMs: frameEnd,
                                  lastSpeechCaptureNs: frame.captureTimeNs, silentFrames: 0)
                return []
            }
            if (silent + 1) * AudioFrame.durationMs >= settings.silenceMs {
                state = .listening
                return [.speechEnded(lastSpeechEndMs: lastEnd, closedAtMs: frameEnd, lastSpeechCaptureNs: lastNs, reason: .silence)]
            }
            state = .speaking(utteranceStartMs: start, lastSpeechEndMs: lastEnd, lastSpeechCaptureNs: lastNs, silentFrames: silent + 1)
            return []
        }
    }

    /// The source has ended: closes an open utterance, and counts buffered frames as silence.
    package mutating func finish(atMs positionMs: Int) -> EndpointerEvent? {
        defer {
            droppedFrames += buffer.count
            buffer = []
            state = .listening
        }
        guard case .speaking(_, let lastEnd, let lastNs, _) = state else { return nil }
        return .speechEnded(lastSpeechEndMs: lastEnd, closedAtMs: positionMs, lastSpeechCaptureNs: lastNs, reason: .endOfStream)
    }

    /// Forgets the utterance in progress and the buffered audio; the noise floor is kept (same room).
    package mutating func reset() {
        droppedFrames += buffer.count
        buffer = []
        state = .listening
    }

    private mutating func startIfReady() -> [EndpointerEvent] {
        guard case .starting(let first, let count, _) = state,
              count >= EndpointerSettings.frames(settings.speechToStartMs),
              let last = buffer.last?.frame
        else { return [] }
        trimBuffer(keepingFromMs: first)
        let frames = buffer.map(\.frame)
        buffer = []
        let lastEnd = last.streamPositionMs + AudioFrame.durationMs
        state = .speaking(utteranceStartMs: frames.first?.streamPositionMs ?? first, lastSpeechEndMs: lastEnd,
                          lastSpeechCaptureNs: last.captureTimeNs, silentFrames: 0)
        return [.speechStarted(positionMs: first, frames: frames)]
    }

    /// Drops frames older than the pre-roll before `keepingFromMs` (or before the newest frame).
    private mutating func trimBuffer(keepingFromMs: Int?) {
        guard let newest = buffer.last?.frame else { return }
        let anchor = keepingFromMs ?? newest.streamPositionMs + AudioFrame.durationMs
        let oldestKept = anchor - settings.preRollMs
        let drop = buffer.prefix { $0.frame.streamPositionMs < oldestKept }.count
        if drop > 0 {
            buffer.removeFirst(drop)
            droppedFrames += drop
        }
    }
}
