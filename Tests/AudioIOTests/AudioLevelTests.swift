import AudioIO
import Testing

/// The one way every stage measures a frame's loudness.
@Suite struct AudioLevelTests {
    @Test func `a square wave's RMS is its amplitude, and silence is 0`() {
        let square = (0..<320).map { $0 % 2 == 0 ? Int16(1000) : Int16(-1000) }
        #expect(AudioLevel.rms(square) == 1000)
        #expect(AudioLevel.meanSquare(square) == 1_000_000)
        #expect(AudioLevel.sumOfSquares(square[0..<10]) == 10_000_000)
        #expect(AudioLevel.rms([Int16]()) == 0 && AudioLevel.meanSquare([Int16]()) == 0)
    }

    @Test func `the loudest frame is found wherever it lies in a stretch`() {
        var stretch = [Int16](repeating: 100, count: 5 * AudioFrame.samplesPerFrame)
        for i in 3 * AudioFrame.samplesPerFrame..<4 * AudioFrame.samplesPerFrame { stretch[i] = 3000 }
        #expect(AudioLevel.loudestFrameRMS(stretch) == 3000)
    }

    /// A cheap sound card's DC offset is not sound to the endpointer; the same offset with a tone reads as the tone.
    @Test func `a constant offset reads as silence, a tone on it as the tone`() {
        #expect(AudioLevel.dbfsWithoutOffset([Int16](repeating: 5000, count: 320)) == AudioLevel.silenceDbfs)
        let tone = (0..<320).map { Int16(5000 + ($0 % 2 == 0 ? 3277 : -3277)) }
        #expect(abs(AudioLevel.dbfsWithoutOffset(tone) - (-20)) < 0.05)
        #expect(AudioLevel.dbfsWithoutOffset([]) == AudioLevel.silenceDbfs)
    }
}
