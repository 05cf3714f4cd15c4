import Synchronization
import TalkLogging

/// A `SpeechSynthesizer` on espeak-ng, in process through libespeak-ng. Every instance shares the one espeak-ng
/// thread (`EspeakWorker`); each has its own cancellation scope, so one caller's barge-in never cuts another's
/// speech.
package final class EspeakSynthesizer: SpeechSynthesizer {
    /// espeak-ng's output rate, fixed by its data.
    package static let nativeSampleRate = 22_050
    /// Longer text is refused: the Talk loop sends sentences, and a runaway reply must not hold the engine.
    package static let maximumTextLength = 20_000

    package var sampleRate: Int { Self.nativeSampleRate }
    /// The espeak-ng data folder in use.
    package let dataFolder: String
    /// This instance's cancellation scope in the shared worker.
    let owner: UInt64
    private let logger: Logger

    private static let owners = Mutex<UInt64>(0)

    /// Finds espeak-ng's data (in `dataFolder` only, when given). espeak-ng itself starts on the first request.
    /// - Throws: `SpeechSynthesisError.dataNotFound` naming every folder looked at.
    package init(dataFolder: String? = nil, logger: Logger) throws {
        self.dataFolder = try EspeakDataLocator.locate(explicit: dataFolder)
        self.logger = logger
        owner = Self.owners.withLock { next in
            next &+= 1
            return next
        }
    }

    package func synthesize(_ text: String, settings: VoiceSettings) -> SynthesisStream {
        guard text.count <= Self.maximumTextLength else {
            return SynthesisStream(
                failure: SpeechSynthesisError.textTooLong(characters: text.count, limit: Self.maximumTextLength))
        }
        let worker = EspeakWorker.shared
        let owner = owner
        let (chunks, id, generation) = worker.submit(
            text: text, settings: settings, dataFolder: dataFolder, owner: owner, logger: logger)
        return SynthesisStream(
            chunks: chunks, isCurrent: { worker.isCurrent(owner: owner, generation: generation) },
            cancel: { worker.cancel(request: id) })
    }

    /// Dropping the synthesizer stops what it still has waiting or running, and frees its bookkeeping.
    deinit {
        EspeakWorker.shared.cancelAll(owner: owner)
        EspeakWorker.shared.forget(owner: owner)
    }

    package func cancelAll() {
        EspeakWorker.shared.cancelAll(owner: owner)
    }

    /// The voices espeak-ng lists (starting it if it has not started): the ones a reply's directive may choose.
    package func listVoices() async throws -> EspeakVoices {
        for try await _ in synthesize("", settings: .default) {}
        return EspeakWorker.shared.voices ?? EspeakVoices(voices: [], variants: [])
    }

    /// CPU time espeak-ng has spent synthesising in this process (all instances), for the real-time factor.
    package static var synthesisCPUSeconds: Double { EspeakWorker.shared.cpuSeconds }
}
