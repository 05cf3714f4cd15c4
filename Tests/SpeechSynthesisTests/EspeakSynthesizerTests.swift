import Foundation
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing

@testable import SpeechSynthesis

/// espeak-ng in process: audio of the right length, rate obeyed, cancellation and barge-in honoured, parallel
/// callers kept apart, clear errors.
@Suite struct EspeakSynthesizerTests {
    static let sentence = "The quick brown fox jumps over the lazy dog."
    static let logger = Logger(label: "test.synthesis")

    private func collect(_ stream: SynthesisStream) async throws -> [SynthesisChunk] {
        var chunks: [SynthesisChunk] = []
        for try await chunk in stream { chunks.append(chunk) }
        return chunks
    }

    @Test func `a sentence becomes streamed audio of plausible length at 22 050 Hz`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let chunks = try await collect(engine.synthesize(Self.sentence, settings: .default))
        #expect(chunks.count > 3, "audio should arrive in several chunks, not one")
        #expect(chunks.allSatisfy { $0.sampleRate == 22_050 && $0.sampleRate == engine.sampleRate })
        let samples = chunks.flatMap(\.samples)
        let seconds = Double(samples.count) / 22_050
        // Nine words at 175 words a minute: about three seconds.
        #expect((1.5...6).contains(seconds), "\(seconds) s")
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        #expect(rms > 500, "the audio should be speech, not silence (rms \(rms))")
    }

    @Test func `a faster rate gives shorter audio`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let slow = try await engine.synthesizeAll(Self.sentence, settings: VoiceSettings(rateWPM: 120))
        let fast = try await engine.synthesizeAll(Self.sentence, settings: VoiceSettings(rateWPM: 320))
        #expect(fast.durationSeconds < slow.durationSeconds * 0.6, "\(fast.durationSeconds) s vs \(slow.durationSeconds) s")
    }

    /// Each name gives the voice it names, whichever voice spoke before: French reads "The year 2024." as
    /// French (its numbers in French words, about 40 % shorter than British English says them; a run's length
    /// varies by up to 5 % with what espeak-ng spoke before), and the female variant speaks about twice as high
    /// (f3's pitch range is 140-240 Hz; about 250 Hz here, 117 Hz for en-gb). A voice switch that did nothing
    /// would give the same length and pitch each time.
    @Test func `a language name selects a voice, as espeak-ng's -v does`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let text = "The year 2024 and 1/2/2024."
        var length: [String: [Int]] = [:]
        var pitch: [String: [Double]] = [:]
        // Twice, in two orders, so each voice follows a different one.
        for voice in ["en-gb", "en+f3", "fr", "en-us", "en-us", "fr", "en+f3", "en-gb"] {
            let audio = try await engine.synthesizeAll(text, settings: VoiceSettings(voice: voice))
            #expect((2...15).contains(audio.durationSeconds), "\(voice): \(audio.durationSeconds) s")
            length[voice, default: []].append(audio.samples.count)
            pitch[voice, default: []].append(try Self.pitchHz(audio.samples))
        }
        let fr = length["fr"] ?? [], gb = length["en-gb"] ?? []
        #expect(fr.count == 2 && gb.count == 2 && Double(fr.max()!) < Double(gb.min()!) * 0.8, "fr \(fr) samples, en-gb \(gb)")
        let f3 = pitch["en+f3"] ?? [], gbPitch = pitch["en-gb"] ?? []
        #expect(f3.count == 2 && gbPitch.count == 2 && f3.min()! > gbPitch.max()! * 1.5, "en+f3 \(f3) Hz, en-gb \(gbPitch) Hz")
    }

    /// A rough fundamental frequency: the autocorrelation peak between 60 and 400 Hz over the loudest 100 ms.
    static func pitchHz(_ samples: [Int16], rate: Double = 22_050) throws -> Double {
        let window = Int(rate / 10)
        try #require(samples.count > window * 2, "too little audio")
        var loudest = 0
        var best = 0.0
        for start in stride(from: 0, to: samples.count - window, by: window / 2) {
            let energy = samples[start..<start + window].reduce(0.0) { $0 + Double($1) * Double($1) }
            if energy > best { (best, loudest) = (energy, start) }
        }
        let part = samples[loudest..<loudest + window].map(Double.init)
        var bestLag = 0
        var bestScore = -Double.infinity
        for lag in Int(rate / 400)...Int(rate / 60) {
            var score = 0.0
            for i in 0..<(part.count - lag) { score += part[i] * part[i + lag] }
            if score > bestScore { (bestScore, bestLag) = (score, lag) }
        }
        return rate / Double(bestLag)
    }

    /// About eighty seconds of speech (a few hundredths of a second of espeak-ng's CPU, 3.5 MB of audio): long
    /// enough that a request stopped after its first chunk visibly stops early, small enough not to weigh on the
    /// memory of the other suites that share this process.
    static let longText = Array(repeating: "This sentence is repeated to make a long piece of speech.", count: 22)
        .joined(separator: " ")
    static let longTextSeconds = 80.0

    /// Seconds of audio espeak-ng made for this synthesizer's requests.
    private func produced(_ engine: EspeakSynthesizer) -> Double {
        Double(EspeakWorker.shared.producedSamples(owner: engine.owner)) / 22_050
    }

    @Test func `a cancelled reader gets no more audio, even what is already made`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let stream = engine.synthesize(Self.longText, settings: .default)
        let heard = Mutex(0.0)
        let reader = Task {
            for try await chunk in stream {
                let seconds = heard.withLock { total in
                    total += chunk.durationSeconds
                    return total
                }
                guard seconds > 0.5 else { continue }
                // Let espeak-ng finish the whole text first, so all of it waits in the stream when the reader stops.
                let deadline = ContinuousClock.now + .seconds(30)
                while produced(engine) < Self.longTextSeconds * 0.75, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(10))
                }
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        await #expect(throws: CancellationError.self) { try await reader.value }
        let total = heard.withLock { $0 }
        #expect(total < 5, "\(total) s read after the reader was cancelled (of \(produced(engine)) s made)")
        let next = try await engine.synthesizeAll("Next.", settings: .default)
        #expect(next.durationSeconds > 0.2)
    }

    @Test func `cancelAll stops espeak-ng in the middle of a text`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let stream = engine.synthesize(Self.longText, settings: .default)
        // Barge-in from a thread of its own, as soon as espeak-ng has made the first chunk: the reader's wake-up
        // on a busy cooperative pool is not what is measured here.
        let started = try await offPool {
            let deadline = ContinuousClock.now + .seconds(30)
            while EspeakWorker.shared.producedSamples(owner: engine.owner) == 0, ContinuousClock.now < deadline {
                usleep(100)
            }
            engine.cancelAll()
            return EspeakWorker.shared.producedSamples(owner: engine.owner) > 0
        }
        #expect(started, "espeak-ng made no audio within 30 s")
        await #expect(throws: CancellationError.self) { for try await _ in stream {} }
        // Served once the cancelled request has ended.
        let after = try await engine.synthesizeAll("Still here.", settings: .default)
        #expect(after.durationSeconds > 0.3)
        let made = produced(engine) - after.durationSeconds
        #expect(made < Self.longTextSeconds / 2, "espeak-ng went on to make \(made) s of the cancelled request's audio")
    }

    @Test func `after cancelAll not one more chunk of the old request is read`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        var iterator = engine.synthesize(Self.longText, settings: .default).makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first != nil)
        // espeak-ng runs far faster than real time, so by now more chunks wait in the stream's buffer.
        try await Task.sleep(for: .milliseconds(100))
        engine.cancelAll()
        await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
        // A new request after barge-in belongs to the new generation and is spoken.
        let after = try await engine.synthesizeAll("Still here.", settings: .default)
        #expect(after.durationSeconds > 0.3)
    }

    @Test func `one caller's cancelAll leaves another caller's speech alone`() async throws {
        let mine = try EspeakSynthesizer(logger: Self.logger)
        let theirs = try EspeakSynthesizer(logger: Self.logger)
        let reference = try await theirs.synthesizeAll(Self.sentence, settings: .default)
        let waiting = theirs.synthesize(Self.sentence, settings: .default)
        mine.cancelAll()
        let samples = try await collect(waiting).flatMap(\.samples)
        // espeak-ng carries some state from one utterance to the next, so renderings differ by a few per cent.
        #expect(abs(samples.count - reference.samples.count) < reference.samples.count / 10,
                "\(samples.count) samples, \(reference.samples.count) alone")
    }

    @Test func `parallel callers are served one at a time, each getting its own audio`() async throws {
        let requests: [(String, VoiceSettings)] = [
            ("One two three four five.", VoiceSettings(voice: "en-us", rateWPM: 150)),
            ("Parallel speech must not mix.", VoiceSettings(voice: "en-gb", rateWPM: 260, pitch: 70)),
            ("Every caller hears only its own words.", VoiceSettings(voice: "en-us", rateWPM: 200, pitch: 20)),
            ("A fourth voice joins in.", VoiceSettings(voice: "en+f3", rateWPM: 180)),
        ]
        let engine = try EspeakSynthesizer(logger: Self.logger)
        var alone: [Int] = []
        for (text, settings) in requests { alone.append(try await engine.synthesizeAll(text, settings: settings).samples.count) }
        let together = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for round in 0..<3 {
                for (index, (text, settings)) in requests.enumerated() {
                    group.addTask {
                        // Each task its own instance too: the state that must not mix is espeak-ng's, process-wide.
                        let own = try EspeakSynthesizer(logger: Self.logger)
                        return (index, try await own.synthesizeAll(text, settings: settings).samples.count)
                    }
                }
                _ = round
            }
            var results: [(Int, Int)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(together.count == 12)
        // espeak-ng carries some state from one utterance to the next (the same request comes out up to about 4 %
        // longer or shorter depending on what was said before), so length within 10 % is the mark of a request
        // that got its own audio; requests whose chunks mixed differ by far more (these run 1.1 to 1.9 s).
        for (index, count) in together {
            #expect(abs(count - alone[index]) < alone[index] / 10, "request \(index): \(count) samples, \(alone[index]) alone")
        }
    }

    @Test func `an unknown voice is a clear error, and the engine keeps working`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        for name in ["xx-nosuchvoice", "../../../etc/passwd", ""] {
            await #expect(throws: SpeechSynthesisError.unknownVoice(name)) {
                _ = try await engine.synthesizeAll("Hello.", settings: VoiceSettings(voice: name))
            }
        }
        #expect(SpeechSynthesisError.unknownVoice("xx").description.contains("espeak-ng --voices"))
        let ok = try await engine.synthesizeAll("Hello.", settings: .default)
        #expect(ok.durationSeconds > 0.2)
    }

    @Test func `missing espeak-ng data is a clear error naming where it looked`() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-espeak-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        for folder in [empty, "/nonexistent/espeak-ng-data"] {
            #expect(throws: SpeechSynthesisError.dataNotFound(searched: [folder])) { try EspeakSynthesizer(dataFolder: folder, logger: Self.logger) }
        }
        // ESPEAK_DATA_PATH, espeak-ng's own variable, comes first; an incomplete folder there is passed over.
        let installed = try EspeakDataLocator.locate()
        #expect(try EspeakDataLocator.locate(environment: ["ESPEAK_DATA_PATH": empty]) == installed)
        #expect(EspeakDataLocator.candidates(environment: ["ESPEAK_DATA_PATH": empty]).first == empty + "/espeak-ng-data")
        #expect(SpeechSynthesisError.dataNotFound(searched: [empty]).description.contains("apt-get install espeak-ng"))
    }

    @Test func `too long a text and empty text are handled without the engine stalling`() async throws {
        let engine = try EspeakSynthesizer(logger: Self.logger)
        let huge = String(repeating: "a", count: EspeakSynthesizer.maximumTextLength + 1)
        await #expect(throws: SpeechSynthesisError.textTooLong(characters: huge.count, limit: EspeakSynthesizer.maximumTextLength)) {
            _ = try await engine.synthesizeAll(huge)
        }
        let silent = try await engine.synthesizeAll("  \n\0 ")
        #expect(silent.samples.isEmpty)
    }
}
