import Foundation
import TalkBench
import Testing

/// Where `bench talk` puts the start of the user's speech over the reply: when the sink played the clip's first
/// voiced sample, not when the bench handed the clip to its sound server.
@Suite struct UserSpeechStartTests {
    static let handed = Date(timeIntervalSinceReferenceDate: 1000)

    @Test func `the user's first word is in the room when the sink plays it, after the bench's own playback buffer`() {
        // A 3 s clip with 0.4 s of silence first, played out 180 ms after it was handed over.
        let start = UserSpeechStart(
            handedOver: Self.handed, heardToEnd: Self.handed.addingTimeInterval(3.18), onsetSeconds: 0.4, clipSeconds: 3)
        #expect(abs(start.handedOver.timeIntervalSince(Self.handed) - 0.4) < 1e-9)
        #expect(abs(start.inTheRoom.timeIntervalSince(Self.handed) - 0.58) < 1e-9)
    }

    @Test func `a completion that seems early never puts the sound before the clip was handed over`() {
        let start = UserSpeechStart(
            handedOver: Self.handed, heardToEnd: Self.handed.addingTimeInterval(2.9), onsetSeconds: 0.4, clipSeconds: 3)
        #expect(start.inTheRoom == start.handedOver)
    }

    @Test func `a barge-in decided before the user's first word was handed over is the reply's own echo, not the user`() {
        let start = UserSpeechStart(
            handedOver: Self.handed, heardToEnd: Self.handed.addingTimeInterval(3.18), onsetSeconds: 0.4, clipSeconds: 3)
        #expect(start.precedes(Self.handed.addingTimeInterval(-0.896)))
        #expect(start.precedes(Self.handed.addingTimeInterval(0.39)))
        #expect(!start.precedes(Self.handed.addingTimeInterval(0.4)))
        #expect(!start.precedes(Self.handed.addingTimeInterval(0.9)))
    }
}
