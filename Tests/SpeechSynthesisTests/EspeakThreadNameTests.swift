import TalkLogging
import TalkTestSupport
import Testing

@testable import SpeechSynthesis

/// espeak-ng's one worker thread is listed by the system under its name, so thread sampling of a live session tells
/// synthesis from the cooperative pool (a name set through Foundation's `Thread.name` before `start()` never reached it).
@Suite struct EspeakThreadNameTests {
    @Test func `espeak-ng's worker is listed by the system as espeak-ng`() async throws {
        let engine = try EspeakSynthesizer(logger: Logger(label: "test.espeak.thread"))
        let chunk = try await engine.synthesizeAll("Hello there.")
        #expect(!chunk.samples.isEmpty)
        #expect(ThreadList.names.contains("espeak-ng"))
    }
}
