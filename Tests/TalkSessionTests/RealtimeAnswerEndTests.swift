import Testing

@testable import TalkSession

/// When the realtime answer is over (`RealtimeAnswerEnd`): an empty queue before the relay's `audioDone` is an
/// underrun, not the end; `audioDone` of the audio queued last ends it; the wait for a relay that never says so ends
/// it only while the output is still dry.
@Suite struct RealtimeAnswerEndTests {
    @Test func `an empty queue before the relay's audioDone is an underrun, said once, and the answer ends at audioDone`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: "item-1", turnId: "turn-1")
        let first = end.ranDry(atNs: 1_000)
        let again = end.ranDry(atNs: 2_000)
        let done = end.audioDone(itemId: "item-1", turnId: "turn-1")
        let last = end.ranDry(atNs: 3_000)
        #expect([first, again] == [.underrun, .waiting])
        #expect(done)
        #expect(last == .ended)
    }

    @Test func `audioDone of another item or turn leaves the answer playing; one naming neither ends it`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: "item-2", turnId: "turn-2")
        let cutItem = end.audioDone(itemId: "item-1", turnId: nil)   // a cut item's late audioDone
        let otherTurn = end.audioDone(itemId: nil, turnId: "turn-1")
        let dry = end.ranDry(atNs: 1_000)
        let unnamed = end.audioDone(itemId: nil, turnId: nil)   // upstream's response.done names no item
        let last = end.ranDry(atNs: 2_000)
        #expect(!cutItem && !otherTurn)
        #expect(dry == .underrun)
        #expect(unnamed)
        #expect(last == .ended)
    }

    @Test func `audio queued after the relay's audioDone is more to wait for`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: "item-1", turnId: "turn-1")
        let done = end.audioDone(itemId: "item-1", turnId: "turn-1")
        end.audioQueued(itemId: "item-2", turnId: "turn-1")
        let dry = end.ranDry(atNs: 1_000)
        #expect(done)
        #expect(dry == .underrun)
    }

    @Test func `the underrun's length is given once when the output plays again`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: nil, turnId: nil)
        let before = end.resumed(atNs: 500)
        let dry = end.ranDry(atNs: 1_000_000_000)
        let length = end.resumed(atNs: 1_400_000_000)
        let twice = end.resumed(atNs: 1_500_000_000)
        let second = end.ranDry(atNs: 2_000_000_000)
        #expect(before == nil, "no underrun yet")
        #expect(dry == .underrun)
        #expect(length == 400_000_000)
        #expect(twice == nil)
        #expect(second == .underrun, "a second underrun is said again")
    }

    @Test func `the wait for a relay that never says its audio is done ends the answer only while the output is dry`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: "item-1", turnId: "turn-1")
        let playing = end.noAudioDoneWaitRanOut()
        let dry = end.ranDry(atNs: 1_000)
        let ranOut = end.noAudioDoneWaitRanOut()
        _ = end.resumed(atNs: 2_000)   // the rest came as the wait ran out: it plays, and the wait starts again
        let dryAgain = end.ranDry(atNs: 3_000)
        let ranOutAgain = end.noAudioDoneWaitRanOut()
        let last = end.ranDry(atNs: 4_000)
        end.answerStopped()
        end.audioQueued(itemId: "item-2", turnId: "turn-2")
        let next = end.ranDry(atNs: 5_000)
        #expect(!playing, "no underrun to end")
        #expect([dry, dryAgain] == [.underrun, .underrun])
        #expect(ranOut && ranOutAgain)
        #expect(last == .endedWithoutAudioDone)
        #expect(next == .underrun, "the next answer waits afresh")
    }

    @Test func `a cut answer ends when the queue is dry`() {
        var end = RealtimeAnswerEnd()
        end.audioQueued(itemId: "item-1", turnId: "turn-1")
        end.cut()
        let dry = end.ranDry(atNs: 1_000)
        #expect(dry == .ended)
    }
}
