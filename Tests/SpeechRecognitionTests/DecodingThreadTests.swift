import Foundation
import Synchronization
import TalkTestSupport
import Testing
import Threading

@testable import SpeechRecognition

/// The decoder runs on a thread of its own, never on the threads its callers' tasks run on: on the cooperative pool
/// (two threads here) a decode beside the echo canceller, the session and the sockets held one of them for tens of
/// milliseconds a frame, and the pipeline reported the user's speech start and partials late.
@Suite(.offPool) struct DecodingThreadTests {
    static let librivox = TestAudio.testData + "/librivox/sense_and_sensibility_01_austen_64kb-"

    @Test func `the decoder's calls run on a thread named pocketsphinx, as the system lists it`() async throws {
        let recognizer = try await TestAudio.recognizer(.dictation())
        let audio = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        try await recognizer.startUtterance()
        // /proc/thread-self/comm: what the system lists for the thread reading it (`/proc/<pid>/task/<tid>/comm`).
        let decodedOn = try await recognizer.processNamingThread(Array(audio.prefix(320)))
        let finishedOn = try await recognizer.endUtteranceNamingThread()
        #expect(decodedOn == "pocketsphinx\n")
        #expect(finishedOn == "pocketsphinx\n")
    }

    /// The test's own serial executor stands in for the cooperative pool: a default actor's code runs on its caller's
    /// task executor, so without a thread of its own the decode held it and the other task waited for the decode.
    @Test func `a task on the callers' threads completes while a long decode runs`() async throws {
        let recognizer = try await TestAudio.recognizer(.dictation())
        // 13 s of read speech in one call: about a second of decoding at least.
        let audio = try TestAudio.wav(Self.librivox + "0870.wav") + TestAudio.wav(Self.librivox + "0920.wav")
        try await recognizer.startUtterance()
        let callers = OffPoolExecutor()
        let order = Order()
        let decoding = Task(executorPreference: callers) {
            _ = try await recognizer.process(audio)
            order.note("decoded")
        }
        let other = Task(executorPreference: callers) {
            // Queued again behind what the decoding task queued meanwhile: the call into the recogniser.
            await Task.yield()
            order.note("other task done")
        }
        await other.value
        try await decoding.value
        #expect(order.events == ["other task done", "decoded"])
        #expect(try await recognizer.endUtterance().text.isEmpty == false)
    }

    @Test func `each recogniser's thread ends when it is released`() async throws {
        let audio = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        var ends: [ThreadSerialExecutor.End] = []
        for _ in 0..<3 {
            let recognizer = try await TestAudio.recognizer(.dictation())
            #expect(try await TestAudio.decode(audio, with: recognizer).text == "go forward ten meters")
            ends.append(recognizer.decodingThreadEnd)
        }
        // The last reference to each went with its loop pass. An end that never comes hangs the test: the pass's time
        // limit (`scripts/swift-test-pass.sh`) fails it with the stacks.
        for end in ends { await end.wait() }
        #expect(ends.allSatisfy { $0.hasEnded })
    }
}

/// What happened, in the order it did, from any thread.
private final class Order: Sendable {
    private let noted = Mutex<[String]>([])
    func note(_ event: String) { noted.withLock { $0.append(event) } }
    var events: [String] { noted.withLock { $0 } }
}

extension PocketSphinxRecognizer {
    /// Decodes `samples` (as `process`) and names the thread that did it.
    func processNamingThread(_ samples: [Int16]) throws -> String {
        _ = try process(samples)
        return try currentThreadName()
    }

    /// Ends the utterance (as `endUtterance`, the final pass) and names the thread it ran on.
    func endUtteranceNamingThread() throws -> String {
        _ = try endUtterance()
        return try currentThreadName()
    }
}

/// The calling thread's name as the system lists it.
private func currentThreadName() throws -> String {
    try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
}
