import Foundation
import TalkLogging
import TalkTestSupport
import Testing
import Threading

@testable import SpeechRecognition

/// The live session's decoder runs realtime where the system allows it, so on a busy desktop it keeps up with the
/// microphone and the user's barge-in is heard on time; every other recogniser (file decodes, bench judges, tests)
/// decodes faster than real time and stays in the normal class, where it cannot hold a core from the desktop. On the
/// realtime thread, the calls whose cost grows with the utterance run in the normal class, so no run outlasts the
/// process's `RLIMIT_RTTIME` (rtkit's 200 ms: past it the kernel kills the daemon).
@Suite(.offPool) struct DecodingThreadClassTests {
    static let goForward = TestAudio.testData + "/goforward.raw"

    @Test func `a recogniser for files, bench judges and tests decodes in the normal class`() async throws {
        let recognizer = try await TestAudio.recognizer(.dictation())
        try await recognizer.startUtterance()
        #expect(try await recognizer.processReadingClass(Array(try TestAudio.raw(Self.goForward).prefix(320))) == false)
        #expect(!recognizer.decodesRealtime)
        _ = try await recognizer.endUtterance()
    }

    @Test func `the live session's recogniser decodes realtime where the system allows it, and still hears the words`() async throws {
        let allowed = await realtimeAllowed(priority: DecodingThread.realtimePriority)
        let log = InMemoryLogHandler.Store()
        let logger = Logger(label: "test.live-decoder", handler: InMemoryLogHandler(store: log))
        let recognizer = try await offPool {
            try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: .dictation(), decodingThread: .live), logger: logger)
        }
        let audio = try TestAudio.raw(Self.goForward)
        try await recognizer.startUtterance()
        #expect(try await recognizer.processReadingClass(Array(audio.prefix(320))) == allowed)
        #expect(recognizer.decodesRealtime == allowed)
        for start in stride(from: 320, to: audio.count, by: 320) {
            _ = try await recognizer.process(Array(audio[start..<min(audio.count, start + 320)]))
        }
        // The final pass, on the companion thread where the decoder is realtime.
        #expect(try await recognizer.endUtterance().text == "go forward ten meters")
        #expect((recognizer.longestRealtimeBurst != nil) == allowed)
        // Its longest run, against the limit, where a developer reads it (the daemon's log as the session ends).
        recognizer.logRealtimeRuns()
        let report = log.events.first { "\($0.message)" == "The live decoder's longest realtime run" }
        #expect((report != nil) == allowed)
        if let report, let longest = recognizer.longestRealtimeBurst {
            #expect(report.metadata["speech.longestRealtimeRunMs"].map { "\($0)" } == "\(longest.milliseconds)")
        }
    }

    @Test func `on a realtime decoding thread, frames, partials and starts run in place`() {
        for call in [DecodingThread.Call.frame, .partial, .start] {
            #expect(DecodingThread.runsRealtime(call, utteranceSamples: 60 * 16_000), "\(call)")
        }
    }

    @Test func `the final pass and a grammar run in the normal class, however short the utterance`() {
        for call in [DecodingThread.Call.end, .grammar] {
            #expect(!DecodingThread.runsRealtime(call, utteranceSamples: 0), "\(call)")
            #expect(!DecodingThread.runsRealtime(call, utteranceSamples: 16_000), "\(call)")
        }
    }

    /// An echo start decoded ahead and dropped is short and frequent: it ends in place. A long utterance dropped (the
    /// session stopped mid-sentence) ends in the normal class.
    @Test func `dropping an utterance ends it in place up to 2 s of audio, in the normal class beyond`() {
        #expect(DecodingThread.runsRealtime(.reset, utteranceSamples: 0))
        #expect(DecodingThread.runsRealtime(.reset, utteranceSamples: 2 * 16_000))
        #expect(!DecodingThread.runsRealtime(.reset, utteranceSamples: 2 * 16_000 + 320))
        #expect(!DecodingThread.runsRealtime(.reset, utteranceSamples: 20 * 16_000))
    }
}

extension PocketSphinxRecognizer {
    /// Decodes `samples` (as `process`) and says whether the thread that did it was realtime.
    func processReadingClass(_ samples: [Int16]) throws -> Bool {
        _ = try process(samples)
        return AudioThreadPriority.callingThreadIsRealtime
    }
}
