import Testing

@testable import AudioIO

@Suite struct FrameAssemblerTests {
    private func append(_ samples: [Int16], to assembler: inout FrameAssembler) {
        samples.withUnsafeBytes { assembler.append($0) }
    }

    @Test func `samples are cut into numbered 20 ms frames dated from the newest sample`() {
        var assembler = FrameAssembler()
        let input = (0..<700).map { Int16($0) }
        append(input, to: &assembler)
        let newest: UInt64 = 10_000_000_000
        let frames = assembler.takeFrames(newestSampleTimeNs: newest)
        #expect(frames.map(\.sequence) == [0, 1])
        #expect(frames.flatMap(\.samples) == Array(input.prefix(640)))
        // 60 samples (3.75 ms) follow frame 1's last sample, 380 follow frame 0's.
        #expect(frames[1].captureTimeNs == newest - 60 * 62_500)
        #expect(frames[0].captureTimeNs == newest - 380 * 62_500)

        append(Array(repeating: 7, count: 260), to: &assembler)
        let next = assembler.takeFrames(newestSampleTimeNs: newest + 16_250_000)
        #expect(next.map(\.sequence) == [2])
        #expect(next[0].samples == Array(input.suffix(60)) + Array(repeating: 7, count: 260))
    }

    @Test func `a restart drops the partial frame and skips the lost time in the sequence`() {
        var assembler = FrameAssembler()
        append(Array(repeating: 1, count: 500), to: &assembler)
        _ = assembler.takeFrames(newestSampleTimeNs: 1_000_000_000)
        assembler.restart(skippedFrames: 25)
        append(Array(repeating: 2, count: 320), to: &assembler)
        let frames = assembler.takeFrames(newestSampleTimeNs: 2_000_000_000)
        #expect(frames.map(\.sequence) == [26])
        #expect(frames[0].samples == Array(repeating: 2, count: 320))
    }

    @Test func `holes in the server buffer become silence so time keeps its place`() {
        var assembler = FrameAssembler()
        assembler.appendSilence(samples: 320)
        #expect(assembler.takeFrames(newestSampleTimeNs: 1).first?.samples == Array(repeating: 0, count: 320))
    }
}
