import Testing

@testable import AudioIO

/// When the residual echo suppressor is told a new sound is coming: ahead of the cursor as before, and also
/// for a sound scheduled after the cursor had read past its start (a reply's next sentence, once the aligner
/// has moved the cursor ahead of the capture's clock), which a look ahead alone never saw.
@Suite struct SoundOnsetWatchTests {
    static let ms: UInt64 = 1_000_000
    static let lookAhead = 300 * ms

    @Test func `a sound scheduled ahead is announced from 300 ms before its start until the cursor passes it`() {
        var watch = SoundOnsetWatch()
        let reference = EchoReference()
        reference.schedule([Int16](repeating: 1_000, count: 16_000), at: 10_000 * Self.ms)
        var said: [UInt64] = []
        for start in stride(from: 9_000 * Self.ms, through: 10_100 * Self.ms, by: Int(20 * Self.ms))
        where watch.soundStarting(near: start, latest: reference.latestSound(), lookAheadNs: Self.lookAhead) {
            said.append(start)
        }
        #expect(said.first == 9_700 * Self.ms && said.last == 10_000 * Self.ms && said.count == 16, "\(said.map { $0 / Self.ms })")
    }

    @Test func `a sound scheduled where the cursor has already read is still announced, once`() {
        var watch = SoundOnsetWatch()
        let reference = EchoReference()
        // The cursor reads at 10.5 s when a sound starting at 10.2 s is scheduled.
        let said1 = watch.soundStarting(near: 10_480 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        #expect(!said1)
        reference.schedule([Int16](repeating: 1_000, count: 16_000), at: 10_200 * Self.ms)
        let said2 = watch.soundStarting(near: 10_500 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        #expect(said2)
        let said3 = watch.soundStarting(near: 10_520 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        #expect(!said3)
    }

    @Test func `placing the playing sound again is not a new sound`() {
        var watch = SoundOnsetWatch()
        let reference = EchoReference()
        let sound = [Int16](repeating: 1_000, count: 16_000)
        reference.schedule(sound, at: 10_000 * Self.ms)
        _ = watch.soundStarting(near: 10_000 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        reference.cut(at: 10_000 * Self.ms)
        reference.schedule(sound, at: 10_004 * Self.ms, newSound: false)
        let said4 = watch.soundStarting(near: 10_020 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        #expect(!said4)
        reference.schedule(sound, at: 11_000 * Self.ms)
        let said5 = watch.soundStarting(near: 10_720 * Self.ms, latest: reference.latestSound(), lookAheadNs: Self.lookAhead)
        #expect(said5)
    }
}
