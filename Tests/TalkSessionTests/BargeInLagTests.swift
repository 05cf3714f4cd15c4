import AudioIO
import Foundation
import SpeechRecognition
import Testing

@testable import TalkSession

/// The recogniser lags the microphone: by seconds on a loaded machine. Barge-in's guards must judge the audio a
/// partial was decoded from, not what the microphone hears when the partial arrives.
@Suite struct BargeInLagTests {
    /// Frames of `amplitude` into the rig's microphone, and waits until the listener has read them; returns the
    /// stream position (ms) where they start.
    static func push(_ rig: Rig, amplitude: Int16, count: Int) async throws -> Int {
        let before = await rig.listener.peaks.count
        await rig.microphone.push(amplitude: amplitude, count: count)
        let deadline = ContinuousClock.now + .seconds(10)
        while await rig.listener.peaks.count < before + count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return before * AudioFrame.durationMs
    }

    /// On the loopback under load, the user spoke "go forward ten meters" as the reply paused between sentences; the
    /// partials came 2 s after their audio, when the microphone had gone quiet, and were held as "not loud enough
    /// over the noise floor"; the final, heard right, was then ignored as heard over the reply.
    @Test func `new words interrupt when their own audio was loud, though the microphone has gone quiet since`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        _ = try await Self.push(rig, amplitude: 0, count: 10)
        let spoken = try await Self.push(rig, amplitude: 8000, count: 20)
        _ = try await Self.push(rig, amplitude: 30, count: 30)
        await rig.listener.hear(.speechStarted(positionMs: spoken))
        await rig.listener.hear(.partial("stop right there", endMs: spoken + 20 * AudioFrame.durationMs))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        await rig.session.stop()
    }

    /// On a loaded machine (1-minute load 17) the recogniser reported an utterance of the reply's echo 12 s after its
    /// audio, as a new sentence of the reply had just started, and its word ("but") cut it off. Words whose audio ends
    /// far behind the microphone's newest frame do not stop the reply, however loud their audio was.
    @Test func `words whose audio ended seconds before the microphone's newest frame do not interrupt`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        _ = try await Self.push(rig, amplitude: 0, count: 10)
        let spoken = try await Self.push(rig, amplitude: 8000, count: 20)
        _ = try await Self.push(rig, amplitude: 30, count: 100)
        await rig.listener.hear(.speechStarted(positionMs: spoken))
        await rig.listener.hear(.partial("but then", endMs: spoken + 20 * AudioFrame.durationMs))
        await rig.listener.hear(.final(ScriptedListener.result("but then")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored("but then", _) = $0 { true } else { false } })
        #expect(await rig.log.count(TalkSessionBargeInTests.isBargeIn) == 0)
        await rig.session.stop()
    }

    /// The other way round: words decoded from quiet audio (the reply's residual echo) do not interrupt because the
    /// microphone happens to be loud when their partial arrives.
    @Test func `new words whose own audio was quiet do not interrupt, though the microphone is loud when they arrive`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        let heard = try await Self.push(rig, amplitude: 30, count: 20)
        _ = try await Self.push(rig, amplitude: 8000, count: 5)
        await rig.listener.hear(.speechStarted(positionMs: heard))
        await rig.listener.hear(.partial("stop right there", endMs: heard + 20 * AudioFrame.durationMs))
        await rig.listener.hear(.final(ScriptedListener.result("stop right there")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored("stop right there", _) = $0 { true } else { false } })
        #expect(await rig.log.count(TalkSessionBargeInTests.isBargeIn) == 0)
        await rig.session.stop()
    }
}
