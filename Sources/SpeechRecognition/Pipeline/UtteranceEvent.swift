import AudioIO

/// One recognised utterance with where it lies in the audio and how long its result took.
package struct UtteranceResult: Sendable, Equatable {
    /// The pipeline generation that produced it; results of an older generation are never delivered.
    package var generation: Int
    package var hypothesis: Hypothesis
    /// First voiced frame, in stream milliseconds.
    package var startMs: Int
    /// Where the audio handed to the recogniser begins (the pre-roll's start): word times in the
    /// hypothesis count from here.
    package var audioStartMs: Int
    /// End of the last voiced frame, as the endpointer placed it.
    package var endMs: Int
    /// End of the frame on which the endpointer closed the utterance.
    package var closedAtMs: Int
    package var reason: EndpointReason
    /// Frames handed to the recogniser for this utterance (pre-roll and trailing silence included).
    package var frameCount: Int
    /// Wall-clock time from the endpoint closing to the final hypothesis.
    package var finalizeMs: Double
    /// From the end of the last voiced frame to the final hypothesis: wall time when capture runs in real
    /// time, stream time (`closedAtMs - endMs + finalizeMs`) when it runs faster.
    package var endToFinalMs: Double
    /// CPU time spent decoding this utterance (feeding frames and finishing the search).
    package var decodeCPUSeconds: Double
    /// The utterance's audio file, when the pipeline records.
    package var recording: String? = nil
}

/// What the pipeline reports to the Talk loop, the transcriber and the benchmark, in order.
package enum UtteranceEvent: Sendable, Equatable {
    case speechStarted(positionMs: Int)
    /// The recogniser's best guess so far; sent when it changes. `endMs`: where the audio it was decoded from ends,
    /// in stream milliseconds (the recogniser may lag the microphone by seconds on a loaded machine, so what the
    /// microphone hears when the partial arrives may be later audio); nil when not known.
    case partial(String, endMs: Int? = nil)
    case speechEnded(lastSpeechEndMs: Int, closedAtMs: Int)
    case final(UtteranceResult)
    /// The capture device was lost; an utterance in progress was closed at that point and its final sent first.
    case interrupted(reason: String)
    case resumed(device: String)
    /// The source ended (a file) and every utterance in it has been reported.
    case finished(PipelineSummary)
    /// The recogniser failed; the pipeline has stopped.
    case failed(String)
}

/// Totals for a finished source: every captured frame is in exactly one utterance or counted as silence.
package struct PipelineSummary: Sendable, Equatable {
    package var framesIn: Int
    package var framesInUtterances: Int
    package var silentFrames: Int
    package var decodeCPUSeconds: Double

    package init(framesIn: Int = 0, framesInUtterances: Int = 0, silentFrames: Int = 0, decodeCPUSeconds: Double = 0) {
        self.framesIn = framesIn
        self.framesInUtterances = framesInUtterances
        self.silentFrames = silentFrames
        self.decodeCPUSeconds = decodeCPUSeconds
    }
}
