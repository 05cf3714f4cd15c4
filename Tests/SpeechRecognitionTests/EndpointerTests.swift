import AudioIO
import Foundation
import Testing

@testable import SpeechRecognition

/// What the endpointer found in a clip.
private struct Found {
    var startMs: Int
    var endMs: Int
    var reason: EndpointReason
    var frames: Int
}

private func endpoint(_ samples: [Int16], settings: EndpointerSettings = .default) -> (utterances: [Found], dropped: Int, framesIn: Int) {
    var ep = Endpointer(settings: settings)
    var found: [Found] = []
    var open: Found?
    let frames = SpeechTestAudio.frames(samples)
    for frame in frames {
        if ep.isInSpeech { open?.frames += 1 }
        for event in ep.process(frame) {
            switch event {
            case .speechStarted(let position, let buffered):
                open = Found(startMs: position, endMs: 0, reason: .silence, frames: buffered.count)
            case .speechEnded(let end, _, _, let reason):
                if var u = open { u.endMs = end; u.reason = reason; found.append(u) }
                open = nil
            }
        }
    }
    let end = frames.count * AudioFrame.durationMs
    if case .speechEnded(let lastEnd, _, _, let reason) = ep.finish(atMs: end), var u = open {
        u.endMs = lastEnd; u.reason = reason; found.append(u)
    }
    return (found, ep.droppedFrames, frames.count)
}

@Suite struct EndpointerTests {
    static func threeUtterances() throws -> PaddedClip {
        var clip = PaddedClip()
        clip.addSilence(ms: 1500)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.goForward))
        clip.addSilence(ms: 2000)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.cards(5)))
        clip.addSilence(ms: 1800)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.librivox0930))
        clip.addSilence(ms: 2000)
        return clip
    }

    /// Background levels: digital silence, a quiet room, a noisy room (about 20 dB below the speech).
    @Test(arguments: [-100.0, -70.0, -45.0])
    func `speech padded with known silences gives one utterance per piece within 150 ms of its boundaries`(noiseDbfs: Double) throws {
        let clip = try Self.threeUtterances()
        let found = endpoint(clip.withNoise(dbfs: noiseDbfs)).utterances
        try #require(found.count == clip.speech.count, "found \(found.map { ($0.startMs, $0.endMs) }), expected \(clip.speech)")
        for (u, known) in zip(found, clip.speech) {
            #expect(abs(u.startMs - known.startMs) <= 150, "start \(u.startMs) ms, speech starts at \(known.startMs) ms")
            #expect(abs(u.endMs - known.endMs) <= 150, "end \(u.endMs) ms, speech ends at \(known.endMs) ms")
            #expect(u.reason == .silence)
        }
    }

    @Test func `the first word is not clipped: the pre-roll reaches back before the speech start`() throws {
        let clip = try Self.threeUtterances()
        var ep = Endpointer()
        for frame in SpeechTestAudio.frames(clip.withNoise(dbfs: -70)) {
            for case .speechStarted(let position, let frames) in ep.process(frame) {
                let first = try #require(frames.first)
                #expect(position - first.streamPositionMs >= 300, "pre-roll only \(position - first.streamPositionMs) ms")
                return
            }
        }
        Issue.record("no speech found")
    }

    @Test(arguments: [-70.0, -50.0, -38.0])
    func `background noise alone, with its level drifting and a few clicks, starts no utterance`(noiseDbfs: Double) {
        var samples = SpeechTestAudio.noise(ms: 20_000, dbfs: noiseDbfs, seed: 3)
        // The level wanders by +-4 dB over seconds, as a fan or traffic does.
        for i in samples.indices {
            let gain = pow(10, 4 * sin(Double(i) / 16_000 * 0.7) / 20)
            samples[i] = Int16(max(-32768, min(32767, Double(samples[i]) * gain)))
        }
        // A door knock: 60 ms of loud noise every 4 s.
        for second in stride(from: 2, to: 20, by: 4) {
            let burst = SpeechTestAudio.noise(ms: 60, dbfs: -12, seed: UInt64(second))
            samples.replaceSubrange(second * 16_000..<second * 16_000 + burst.count, with: burst)
        }
        #expect(endpoint(samples).utterances.isEmpty)
    }

    @Test func `speech in a noisy room is found once, with no phantom utterances around it`() throws {
        var clip = PaddedClip()
        clip.addSilence(ms: 6000)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.librivox0870))
        clip.addSilence(ms: 6000)
        let found = endpoint(clip.withNoise(dbfs: -40)).utterances
        #expect(found.count == 1, "found \(found.map { ($0.startMs, $0.endMs) })")
    }

    @Test(arguments: [(1.0, 6000), (12.0, 0), (6.0, -9000)])
    func `clipped and DC-offset speech is still found once per piece`(gain: Double, offset: Int) throws {
        let clip = try Self.threeUtterances()
        let distorted = SpeechTestAudio.distort(clip.withNoise(dbfs: -70), gain: gain, offset: offset)
        #expect(endpoint(distorted).utterances.count == clip.speech.count)
    }

    @Test func `a 40 s monologue is cut at the maximum length and no frame is lost`() throws {
        let piece = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        var clip = PaddedClip()
        clip.addSilence(ms: 1000)
        var monologue: [Int16] = []
        while monologue.count < 40 * 16_000 { monologue += SpeechTestAudio.noise(ms: 200, dbfs: -70) + piece }
        clip.addSpeech(monologue)
        clip.addSilence(ms: 1500)
        let settings = EndpointerSettings.default
        let result = endpoint(clip.withNoise(dbfs: -70), settings: settings)
        try #require(result.utterances.count == 2, "found \(result.utterances.map { ($0.startMs, $0.endMs, $0.reason) })")
        #expect(result.utterances[0].reason == .maximumLength)
        #expect(result.utterances[0].frames * AudioFrame.durationMs == settings.maxUtteranceMs)
        #expect(result.utterances[1].reason == .silence)
        #expect(abs(result.utterances[1].endMs - clip.speech[0].endMs) <= 150)
        let accounted = result.utterances.reduce(0) { $0 + $1.frames } + result.dropped
        #expect(accounted == result.framesIn)
    }

    @Test func `the recogniser's voice signal keeps an utterance open through soft speech when enabled`() {
        // Loud speech, then soft voiced sound below the energy keep threshold but well above the floor.
        let samples = SpeechTestAudio.noise(ms: 1000, dbfs: -70) + SpeechTestAudio.noise(ms: 1000, dbfs: -30, seed: 2)
            + SpeechTestAudio.noise(ms: 1500, dbfs: -63, seed: 3) + SpeechTestAudio.noise(ms: 1500, dbfs: -70, seed: 4)
        func lastSpeechEnd(useVoice: Bool) -> Int? {
            var ep = Endpointer(settings: EndpointerSettings(useRecognizerVoiceActivity: useVoice))
            for frame in SpeechTestAudio.frames(samples) {
                let voice = frame.streamPositionMs < 3500  // the engine hears voice until 3.5 s
                for case .speechEnded(let end, _, _, _) in ep.process(frame, voiceActivity: ep.isInSpeech ? voice : nil) {
                    return end
                }
            }
            return nil
        }
        #expect(lastSpeechEnd(useVoice: false) == 2000)
        #expect(lastSpeechEnd(useVoice: true) == 3500)
    }

    @Test func `a pure-silence stream gives no utterance and counts every frame as silence`() {
        let result = endpoint([Int16](repeating: 0, count: 16_000 * 5))
        #expect(result.utterances.isEmpty)
        #expect(result.dropped == result.framesIn)
    }

    @Test func `settings that cannot work are refused with the setting named`() {
        #expect(throws: EndpointerError.self) { try EndpointerSettings(silenceMs: 10).validated() }
        do {
            _ = try EndpointerSettings(hysteresisDb: 20).validated()
            Issue.record("accepted a hysteresis larger than the start margin")
        } catch {
            #expect(String(describing: error).contains("hysteresisDb"))
        }
    }
}
