import Foundation
import Testing

@testable import AudioIO

/// Which frames of an utterance's opening take the linear stage's output (`AudioFrame.lookingBack`): the run that
/// ends at the utterance's first voiced frame, as the recogniser's pre-roll and the relay's backlog both take it.
@Suite struct LookBackTests {
    static func frames(_ marked: Set<Int>, count: Int = 30) -> [AudioFrame] {
        (0..<count).map { i in
            var f = AudioFrame(sequence: UInt64(i), captureTimeNs: 0, samples: [Int16](repeating: 1, count: AudioFrame.samplesPerFrame))
            if marked.contains(i) { f.onsetAlternative = [Int16](repeating: 1000, count: AudioFrame.samplesPerFrame) }
            return f
        }
    }

    static func taken(_ frames: [AudioFrame], before ms: Int) -> [Int] {
        AudioFrame.lookingBack(frames, before: ms).enumerated().filter { $0.element.samples.first == 1000 }.map(\.offset)
    }

    @Test func `the frames just before the start take their alternative; a frame without one ends the run`() {
        // Frame 20 is the first voiced one; 17-19 the user's onset, 12-13 the echo's, 21 after the start.
        #expect(Self.taken(Self.frames([12, 13, 17, 18, 19, 21]), before: 400) == [17, 18, 19])
    }

    @Test func `no more than 200 ms are taken, and a start whose frame before has none takes nothing`() {
        #expect(Self.taken(Self.frames(Set(0..<20)), before: 400) == Array(10..<20))
        #expect(Self.taken(Self.frames([15, 16, 17, 18]), before: 400).isEmpty)
    }

    @Test func `frames from a later position (the relay's backlog starts mid-stream) are found by their position`() {
        let tail = Array(Self.frames([27, 28, 29], count: 40)[25...])
        #expect(Self.taken(tail, before: 600) == [2, 3, 4])
    }
}
