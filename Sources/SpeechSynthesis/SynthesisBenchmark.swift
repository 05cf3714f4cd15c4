import Foundation

/// `bench synth`: how soon a sentence is heard, and what synthesis costs. First audio is timed from the moment the
/// delta completing a sentence reaches `SpokenReply` to the first chunk of its audio reaching the caller: the
/// Talk loop's target is 150 ms. The real-time factor is espeak-ng's CPU time (and the wall time) per second of
/// speech over a paragraph.
package struct SynthesisBenchmark: Sendable {
    package struct Percentiles: Encodable, Sendable, Equatable {
        package var p50: Double
        package var p95: Double
        package var max: Double

        init(_ values: [Double]) {
            let sorted = values.sorted()
            func rank(_ p: Double) -> Double {
                sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
            }
            p50 = rank(0.5)
            p95 = rank(0.95)
            max = sorted.last ?? 0
        }
    }

    package struct Report: Encodable, Sendable {
        package var engine = "espeak-ng"
        package var voice: String
        package var rateWPM: Int
        package var sampleRate: Int
        package var sentence: String
        package var trials: Int
        /// The first request of the process: espeak-ng starts and loads its voice.
        package var coldFirstAudioMs: Double
        /// To the first chunk: playback can start (espeak-ng begins with a little silence).
        package var firstAudioMs: Percentiles
        /// To the first chunk holding speech (a sample above -30 dBFS).
        package var firstVoicedAudioMs: Percentiles
        package var targetFirstAudioMs = 150.0
        package var paragraphAudioSeconds: Double
        /// espeak-ng CPU seconds per second of speech.
        package var rtf: Double
        /// Wall-clock seconds per second of speech (includes waiting for a core on a busy machine).
        package var wallRtf: Double
    }

    package var sentence = "Sure, I can help with that."
    package var paragraph = """
        The weather today is mild, with a light breeze from the west and a few clouds in the afternoon. \
        Tomorrow looks warmer. If you are going out in the evening, take a jacket, because it cools down \
        quickly after sunset. Would you like me to set a reminder for the morning?
        """
    package var settings = VoiceSettings.default
    package var trials = 50
    package var paragraphRounds = 5

    package init() {}

    package func run(with synthesizer: EspeakSynthesizer) async throws -> Report {
        let cold = try await firstAudio(synthesizer).chunk
        var warm: [(chunk: Double, voiced: Double)] = []
        for _ in 0..<trials { warm.append(try await firstAudio(synthesizer)) }

        var audioSeconds = 0.0
        let cpuBefore = EspeakSynthesizer.synthesisCPUSeconds
        let started = ContinuousClock.now
        for _ in 0..<paragraphRounds {
            audioSeconds += try await synthesizer.synthesizeAll(paragraph, settings: settings).durationSeconds
        }
        let wall = ContinuousClock.now - started
        let cpu = EspeakSynthesizer.synthesisCPUSeconds - cpuBefore
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        return Report(
            voice: settings.voice, rateWPM: settings.rateWPM, sampleRate: synthesizer.sampleRate, sentence: sentence,
            trials: trials, coldFirstAudioMs: cold, firstAudioMs: Percentiles(warm.map(\.chunk)),
            firstVoicedAudioMs: Percentiles(warm.map(\.voiced)),
            paragraphAudioSeconds: audioSeconds / Double(paragraphRounds),
            rtf: audioSeconds > 0 ? cpu / audioSeconds : 0, wallRtf: audioSeconds > 0 ? wallSeconds / audioSeconds : 0)
    }

    /// Milliseconds from the sentence's last delta to its first audio chunk, and to its first chunk with speech.
    private func firstAudio(_ synthesizer: EspeakSynthesizer) async throws -> (chunk: Double, voiced: Double) {
        var reply = SpokenReply()
        let words = sentence.split(separator: " ", omittingEmptySubsequences: false)
        for word in words.dropLast() { _ = reply.append(word + " ") }
        let arrived = ContinuousClock.now
        var sentences = reply.append((words.last.map(String.init) ?? "") + " ")
        if sentences.isEmpty { sentences = reply.finish() }  // a sentence without a closing mark
        guard let text = sentences.first else { return (0, 0) }
        var first: Duration?
        var voiced: Duration?
        for try await chunk in synthesizer.synthesize(text, settings: settings) {
            if first == nil { first = ContinuousClock.now - arrived }
            if voiced == nil, chunk.samples.contains(where: { abs(Int($0)) > 1000 }) { voiced = ContinuousClock.now - arrived }
        }
        func ms(_ d: Duration?) -> Double {
            guard let d else { return 0 }
            return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        }
        return (ms(first), ms(voiced))
    }
}
