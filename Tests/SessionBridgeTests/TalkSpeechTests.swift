import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

/// `talk.speak` / `tts.speak` against the reference Gateway: which method, the voice settings sent, when
/// the local voice speaks instead, and hostile replies. Decoding the clips is AudioIO's (TalkDaemonTests).
@Suite(.serialized) struct TalkSpeechTests {
    @Test func `a reply's voice directive is sent with talk.speak and the clip comes back whole`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        try await h.gateway.control("talk-speak wav")
        // What a reply's directive asks for (parsed by SpeechSynthesis's VoiceDirective), over the config's voice.
        let directive = TalkVoiceSettings(voiceId: "abc", modelId: "eleven_v3", speed: 1.2, rateWpm: 9999, stability: 3,
                                          seed: 7, language: "en", latencyTier: 2)
        let voice = TalkVoiceSettings(voiceId: "config-voice", outputFormat: "wav_22050", similarity: 0.5)
            .overridden(by: directive)
        let outcome = try await TalkSpeechClient(gateway: op.connection, logger: h.logger).speak("four two", voice: voice)
        guard case .clip(let clip) = outcome else {
            Issue.record("expected a clip, got \(outcome)")
            return
        }
        #expect(clip.format == .wav && clip.method == "talk.speak" && clip.mimeType == "audio/wav")
        #expect(clip.audio.starts(with: Array("RIFF".utf8)))
        let sent = try #require(try await h.gateway.control("speak-log")["speaks"]?.arrayValue?.last?["params"])
        // Out-of-range stability and rate are dropped, the rest is sent as the schema names it.
        #expect(sent == ["text": "four two", "voiceId": "abc", "modelId": "eleven_v3", "outputFormat": "wav_22050",
                         "speed": .double(1.2), "similarity": .double(0.5), "language": "en", "latencyTier": 2, "seed": 7])
        try h.gateway.expectNoViolations()
    }

    @Test func `tts.speak is used when hello-ok does not list talk.speak`() async throws {
        let h = try await TalkGatewayHarness.start()
        try await h.gateway.control("hide-method talk.speak")
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        let outcome = try await TalkSpeechClient(gateway: op.connection, logger: h.logger)
            .speak("one seven nine", voice: TalkVoiceSettings(voiceId: "ignored"))
        guard case .clip(let clip) = outcome else {
            Issue.record("expected a clip, got \(outcome)")
            return
        }
        #expect(clip.method == "tts.speak" && clip.format == .pcm(rate: 24_000))
        let last = try #require(try await h.gateway.control("speak-log")["speaks"]?.arrayValue?.last)
        #expect(last["method"] == "tts.speak" && last["params"] == ["text": "one seven nine"])
        try h.gateway.expectNoViolations()
    }

    @Test func `UNAVAILABLE that allows a fallback gives the local voice; one that does not is an error`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        let client = TalkSpeechClient(gateway: op.connection, logger: h.logger)
        try await h.gateway.control(#"{"cmd":"talk-speak","unavailable":"talk_unconfigured"}"#)
        let outcome = try await client.speak("hello")
        guard case .useLocalVoice(.unavailable(let reason, _)) = outcome else {
            Issue.record("expected the local voice, got \(outcome)")
            return
        }
        #expect(reason == "talk_unconfigured")
        try await h.gateway.control(#"{"cmd":"talk-speak","unavailable":"synthesis_failed"}"#)
        await #expect(throws: TalkSpeechError.self) { _ = try await client.speak("hello") }
        await #expect(throws: TalkSpeechError.emptyText) { _ = try await client.speak("  \n") }
        try h.gateway.expectNoViolations()
    }

    @Test(arguments: [
        (#"{"audioBase64":"AAAA","provider":"p","outputFormat":"ulaw_8000"}"#, "ulaw_8000"),
        (#"{"audioBase64":"AAAA","provider":"p","outputFormat":"pcm"}"#, "pcm"),
        (#"{"audioBase64":"AAAA","provider":"p","mimeType":"audio/flac"}"#, "audio/flac"),
        (#"{"audioBase64":"AAAA","provider":"p"}"#, "an unnamed format"),
    ])
    func `clips this client cannot play give the local voice`(payload: String, name: String) async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd":"talk-speak","payload":\#(payload)}"#)
        let outcome = try await TalkSpeechClient(gateway: op.connection, logger: h.logger).speak("hello")
        #expect(outcome == .useLocalVoice(.unsupportedFormat(name)))
    }

    @Test(arguments: [
        // outputFormat first: a provider's own name (ElevenLabs, Microsoft/Azure) or a MIME string.
        ("audio-24khz-48kbitrate-mono-mp3", "audio/mpeg", ".mp3", TalkClipFormat.mp3),
        ("audio-24khz-48kbitrate-mono-mp3", nil, nil, .mp3),
        ("riff-24khz-16bit-mono-pcm", nil, nil, .wav),
        ("raw-24khz-16bit-mono-pcm", nil, nil, .pcm(rate: 24_000)),
        ("raw-16khz-16bit-mono-pcm", "audio/L16", nil, .pcm(rate: 16_000)),
        ("ogg-48khz-16bit-mono-opus", nil, nil, .oggOpus),
        ("audio/mpeg", nil, nil, .mp3),
        ("mp3_44100_128", "audio/wav", ".wav", .mp3),
        // Then mimeType, then fileExtension, when the label before says nothing this client knows.
        ("some-new-label", "audio/ogg; codecs=opus", nil, .oggOpus),
        (nil, "application/octet-stream", ".wav", .wav),
    ] as [(String?, String?, String?, TalkClipFormat)])
    func `the container is read from outputFormat, then mimeType, then fileExtension`(
        outputFormat: String?, mimeType: String?, fileExtension: String?, format: TalkClipFormat
    ) {
        #expect(TalkClipFormat.classify(outputFormat: outputFormat, mimeType: mimeType, fileExtension: fileExtension, audio: [0, 0, 0, 0])
            == .success(format))
    }

    @Test func `then the bytes' magic, and a label known unplayable gives the local voice`() {
        let unknown = ("new-label", "audio/x-unknown", ".bin")
        for (magic, format) in [(Array("OggS".utf8), TalkClipFormat.oggOpus), (Array("RIFF".utf8), .wav), (Array("ID3".utf8), .mp3),
                                ([0xFF, 0xFB, 0x90], .mp3)] {
            #expect(TalkClipFormat.classify(outputFormat: unknown.0, mimeType: unknown.1, fileExtension: unknown.2, audio: magic + [0, 0])
                == .success(format))
        }
        #expect(TalkClipFormat.classify(outputFormat: "raw-8khz-8bit-mono-mulaw", mimeType: "audio/wav", fileExtension: nil, audio: Array("RIFF".utf8))
            == .failure(UnsupportedClipFormat(name: "raw-8khz-8bit-mono-mulaw")))
        #expect(TalkClipFormat.classify(outputFormat: "webm-24khz-16bit-mono-opus", mimeType: nil, fileExtension: nil, audio: [])
            == .failure(UnsupportedClipFormat(name: "webm-24khz-16bit-mono-opus")))
        #expect(TalkClipFormat.classify(outputFormat: "new-label", mimeType: nil, fileExtension: nil, audio: [1, 2, 3])
            == .failure(UnsupportedClipFormat(name: "new-label")))
    }

    static let hostileReplies: [String] = [
        #"{"provider":"p","outputFormat":"pcm_24000"}"#,
        #"{"audioBase64":12,"provider":"p"}"#,
        #"{"audioBase64":"%%%not base64%%%","provider":"p","outputFormat":"pcm_24000"}"#,
        #"{"audioBase64":"","provider":"p","outputFormat":"pcm_24000"}"#,
        #"{"audioBase64":"AAAA","provider":"p","outputFormat":24000}"#,
        #"{"audioBase64":"AAAA","provider":"p"},"padAudioBase64":2000000"#,
        #"["audioBase64"]"#,
        #""just a string""#,
    ]

    @Test func `malformed talk.speak replies are logged errors, and the socket keeps working`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        let client = TalkSpeechClient(gateway: op.connection, logger: h.logger)
        for (n, payload) in Self.hostileReplies.enumerated() {
            try await h.gateway.control(#"{"cmd":"talk-speak","payload":\#(payload)}"#)
            do {
                let outcome = try await client.speak("hello")
                Issue.record("reply \(n) was accepted: \(outcome)")
            } catch {
                guard case .malformedReply = error else {
                    Issue.record("reply \(n) failed otherwise: \(error)")
                    continue
                }
            }
            #expect(h.logged(atLeast: .error).count == n + 1, "reply \(n) was not logged as an error")
        }
        try await h.gateway.control("talk-speak pcm_24000")
        let outcome = try await client.speak("four two")
        guard case .clip(let clip) = outcome else {
            Issue.record("the socket did not recover: \(outcome)")
            return
        }
        #expect(clip.format == .pcm(rate: 24_000) && clip.audio.count > 10_000)
        try h.gateway.expectNoViolations()
    }
}
