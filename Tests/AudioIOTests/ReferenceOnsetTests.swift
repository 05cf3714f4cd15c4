import Foundation
import Testing

@testable import AudioIO

/// A sentence's first second after the silence between sentences, where both cancellers leak on the loopback:
/// only digital silence of 200 ms or more makes a pause, not a recording's quiet between words.
@Suite struct ReferenceOnsetTests {
    static func frame(_ rms: Double) -> [Int16] {
        (0..<AudioFrame.samplesPerFrame).map { i in Int16(rms * 1.414 * sin(Double(i) * 0.9)) }
    }

    /// How many of `count` frames at `rms` the tracker calls settling.
    static func settling(_ onset: inout ReferenceOnset, rms: Double, count: Int) -> Int {
        (0..<count).filter { _ in onset.add(far: frame(rms)) }.count
    }

    @Test func `the first second after a 200 ms pause is settling, the rest of the sentence is not`() {
        var onset = ReferenceOnset()
        // A session's first sound counts as an onset too.
        #expect(Self.settling(&onset, rms: 3_000, count: 100) == 49)
        #expect(Self.settling(&onset, rms: 0, count: 15) == 0)
        #expect(Self.settling(&onset, rms: 3_000, count: 100) == 49)
    }

    @Test func `a shorter gap, or quiet that is not silence, is no pause`() {
        var onset = ReferenceOnset()
        _ = Self.settling(&onset, rms: 3_000, count: 60)
        #expect(Self.settling(&onset, rms: 0, count: 9) == 0)
        #expect(Self.settling(&onset, rms: 3_000, count: 60) == 0, "a 180 ms gap made an onset")
        #expect(Self.settling(&onset, rms: 50, count: 30) == 0)
        #expect(Self.settling(&onset, rms: 3_000, count: 60) == 0, "quiet at -56 dBFS made an onset")
    }
}
