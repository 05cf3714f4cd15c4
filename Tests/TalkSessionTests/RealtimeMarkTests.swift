import AudioIO
import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// The relay's playback marks as upstream sends them: one behind each audio delta (openclaw/openclaw
/// src/gateway/talk/relay/session-create.ts, `markStrategy: "transport"`), each to be acknowledged once the audio
/// before it has been heard. The provider keeps every mark not acknowledged (xAI's bridge ends the session at 1 024
/// of them; OpenAI's takes one as audio still playing when the user cuts in), so none may be dropped; and the
/// answer plays as one sound, not one piece per delta with the Gateway's round trip between.
@Suite struct RealtimeMarkTests {
    /// 40 ms of the answer's audio (PCM16 at 24 kHz, a quiet tone).
    static let delta: [UInt8] = (0..<960).flatMap { i -> [UInt8] in
        let sample = UInt16(bitPattern: i % 48 < 24 ? Int16(1_000) : Int16(-1_000))
        return [UInt8(sample & 0xFF), UInt8(sample >> 8)]
    }

    @Test func `an answer with a mark behind each of its deltas plays whole, in one piece, every mark acknowledged after it`() async throws {
        let rig = try await RealtimeRig()
        // The answer's first second starts playing; the rest comes while it plays: 200 deltas of 40 ms (8 s, under
        // the 10 s the output holds), each with its mark behind it.
        await rig.relay.sendAudio(seconds: 1, turnId: "turn-1")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        let names = (1...200).map { "audio-\($0)" }
        for name in names {
            await rig.relay.send(.audio(Self.delta, itemId: "item-1"), turnId: "turn-1")
            await rig.relay.send(.mark(name), turnId: "turn-1")
        }
        await rig.relay.send(.audioDone(itemId: "item-1"), turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await rig.speaker.playedSamples == 24_000 + 200 * 960, "the answer did not play whole")
        // The first second, then the rest as it had queued: a few pieces, not one per delta (200).
        let pieces = await rig.speaker.played.count
        #expect(pieces < 10, "the answer played in \(pieces) pieces, not as one sound")
        let allAcknowledged = await rig.eventually { await rig.relay.acknowledged.count >= names.count }
        let acknowledged = await rig.relay.acknowledged.map(\.name)
        #expect(allAcknowledged, "\(acknowledged.count) of \(names.count) marks acknowledged")
        #expect(acknowledged == names)
        let finished = try #require(await rig.speaker.lastFinished)
        let last = try #require(await rig.relay.acknowledged.last)
        #expect(last.at >= finished, "the last mark was acknowledged \(finished.timeIntervalSince(last.at)) s before playback ended")
        let errors = await rig.log.events.filter { if case .error = $0.kind { true } else { false } }
        #expect(errors.isEmpty, "\(errors)")
        await rig.session.stop()
    }
}
