import AudioIO
import Foundation

/// At a barge-in, the open utterance decoded again from the user's onset (`UtterancePipeline.decodeAgain`): its words
/// are then the user's as they said them, not the live decode's.
///
/// Why: an utterance that opens over the reply opens on its echo as often as on the user (the endpointer cannot tell
/// them apart), so the live decode has the echo's last words in front of the user's ("it's pretty go forward ten
/// meters"), and for the user's first 150 to 200 ms the canceller's later stages took their onset down with the echo
/// still at full level ("forward ten meters"). After the barge-in the utterance is known to be the user's, and the
/// audio the transcription relay is sent (`HeldUtteranceRelease` in the session: from a margin before the user's
/// onset, the linear stage's output around it) gives the words back; decoding that same audio gives them to the local
/// words path (`run --stt local`, or a relay that fails) too.
///
/// The utterance is restarted in the live recogniser rather than decoded a second time beside it: the decision is
/// taken by then, so nothing the live decode still has to say is lost, and the restart costs one catch-up decode of
/// the audio since the margin (0.5 to 1 s, decoded a frame per call so the decoding thread's runs stay bounded) where a
/// second decoder would cost a second model in memory, a second decode of the rest of the utterance, and a cepstral
/// mean that has not heard this speaker and microphone (the live one has, since the session's first utterance).
package enum UtteranceRedecode {
    /// What an utterance keeps of its audio for a decode again: its latest frames as they came (the linear stage's
    /// output with them), at most `keptFrames`.
    package struct KeptFrames: Sendable {
        package private(set) var frames: [AudioFrame] = []

        mutating func append(_ more: [AudioFrame]) {
            frames += more
            if frames.count > UtteranceRedecode.keptFrames { frames.removeFirst(frames.count - UtteranceRedecode.keptFrames) }
        }
    }

    /// 6 s of frames (300): as much as the transcription relay's ring holds for a release. A barge-in comes 0.3 to
    /// 1 s into the user's speech and the release starts at most 200 ms before their onset; an utterance the echo kept
    /// open for longer before them keeps its latest 6 s, from which the decode again starts if the onset lies before.
    package static let keptFrames = 300
}

extension UtteranceRedecode {
    /// A decode again asked for (`UtterancePipeline.decodeAgain`), carried out before the utterance's next frame.
    package struct Request: Sendable {
        var fromMs: Int
        var samples: @Sendable (AudioFrame) -> [Int16]
    }
}

extension UtterancePipeline {
    /// Decodes the open utterance again from `fromMs` (stream ms; never before its own start): its frames from there,
    /// each as `samples` gives it (the release's choice of the linear stage's output), then the frames that follow as
    /// they come; its partials and its final are the new decode's, its words timed from `fromMs`. Carried out before
    /// the utterance's next frame is fed, in the order of its frames (one decoded ahead of its start stays so); nothing
    /// happens without an open utterance, or when `fromMs` is at or before its start and no frame's samples change (the
    /// decode would be the same).
    package func decodeAgain(fromMs: Int, samples: @escaping @Sendable (AudioFrame) -> [Int16]) {
        utterance?.decodeAgain = UtteranceRedecode.Request(fromMs: fromMs, samples: samples)
    }

    /// Carries out the utterance's `decodeAgain` request (from `handle`, before the next frame, so no frame comes
    /// between the ones decoded again).
    func decodeAgain(_ request: UtteranceRedecode.Request, generation gen: Int) async throws {
        guard let open = utterance else { return }
        utterance?.decodeAgain = nil
        let frames = open.kept.frames.filter { $0.streamPositionMs >= request.fromMs }.map { frame in
            var sent = frame
            sent.samples = request.samples(frame)
            sent.linearSamples = nil
            return sent
        }
        let changed = zip(frames, open.kept.frames.suffix(frames.count)).contains { $0.samples != $1.samples }
        guard let first = frames.first, first.streamPositionMs > open.audioStartMs || changed else { return }
        try await recognizer.startUtterance()
        await recorder?.cancel()
        try await recorder?.begin(name: String(format: "utterance-%09.2f", Double(first.streamPositionMs) / 1000))
        guard gen == generation else { return }
        var again = OpenUtterance(startMs: open.startMs, audioStartMs: first.streamPositionMs)
        again.ahead = open.ahead
        again.cpuSeconds = open.cpuSeconds
        // The first partial of the new decode is taken at once.
        again.framesSincePartial = partialsAskedEveryFrames ?? partialEveryFrames
        // The frames the first decode heard before `fromMs` still count as heard in an utterance.
        summary.framesInUtterances += open.frames - frames.count
        utterance = again
        lastPartial = ""
        logger.debug("the utterance is decoded again from the user's onset", metadata: [
            "speech.from_ms": "\(first.streamPositionMs)", "speech.audio_start_ms": "\(open.audioStartMs)",
            "speech.frames": "\(frames.count)", "speech.samples_changed": "\(changed)"])
        // In one call: the recogniser feeds them a frame at a time, so the live decoding thread's runs stay bounded
        // (`DecodingThread`).
        _ = try await feed(frames)
    }
}
