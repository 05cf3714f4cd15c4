import AudioIO
import Foundation
import SessionBridge
import Synchronization
import Testing

@testable import TalkSession

/// Stop means stop: `pause`, `talk stop` and the session's end (`run`'s SIGTERM) close the microphone first, so
/// nothing said after them becomes a turn, and cancel the reply's outstanding `talk.speak` requests instead of
/// waiting for them (a provider may take up to the client's 125 s).
@Suite struct TalkSessionStopTests {
    /// The Gateway's voice as a slow provider is: each `talk.speak` answers after 125 s, or ends when its request
    /// is cancelled (as `GatewayConnection.request` does).
    actor SlowGatewayVoice: GatewayVoice {
        private(set) var asked: [String] = []
        private(set) var cancelled = 0

        func speak(_ text: String, voice: TalkVoiceSettings) async -> GatewaySpeech {
            asked.append(text)
            do { try await Task.sleep(for: .seconds(125)) } catch {
                cancelled += 1
                return .useLocalVoice(reason: "the Gateway's voice failed: cancelled")
            }
            return .audio(PCMBuffer(sampleRate: 24_000, samples: [Int16](repeating: 500, count: 12_000)))
        }
    }

    @Test(arguments: ["pause", "talk stop", "stop"])
    func `stopping closes the microphone first and cancels the reply's talk.speak requests`(command: String) async throws {
        let voice = SlowGatewayVoice()
        var settings = TalkSession.Settings()
        settings.useGatewayVoice = true
        let rig = try await Rig(agent: .reply("The first sentence. The second one."), settings: settings, gatewayVoice: voice)
        await rig.listener.utterance("tell me")
        #expect(await rig.eventually { await voice.asked.count >= 1 }, "talk.speak was never asked")
        let done = Mutex(false)
        let session = rig.session
        Task {
            switch command {
            case "pause": try? await session.pause()
            case "talk stop": await session.deactivate()
            default: await session.stop()
            }
            done.withLock { $0 = true }
        }
        // The speaker is stopped after the microphone closed: the user says more, which must not become a turn.
        #expect(await rig.eventually { await rig.speaker.stops >= 1 })
        await rig.listener.utterance("and another thing")
        #expect(await rig.eventually { done.withLock { $0 } }, "\(command) still waits for the reply's talk.speak")
        #expect(await rig.agent.sent.map(\.transcript) == ["tell me"], "a turn began after \(command)")
        #expect(await rig.eventually { await voice.cancelled == voice.asked.count }, "talk.speak requests left running")
        #expect(rig.synthesizer.synthesised.isEmpty, "the local voice took over a cancelled sentence")
        if command != "stop" { await rig.session.stop() }
    }
}
