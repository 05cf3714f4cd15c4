import SessionBridge
import TalkBench
import Testing

/// What `bench talk` reports of its ERLE measurement: the whole window's figure, which one lost second decides, beside
/// the seconds' median and how many seconds were under the goal, so a sound server's glitch reads as one.
@Suite struct LiveTalkFiguresERLETests {
    /// Eleven seconds near 60 dB and one at 15 (the canceller lost a second): the whole window read 28.9 dB.
    static func glitched() -> LiveTalkFigures {
        var figures = LiveTalkFigures(sink: "vsink", source: "vsink.monitor")
        figures.erleDb = 28.9
        figures.erleSecondsDb = [58.2, 61.0, 59.4, 15.3, 60.1, 62.7, 57.9, 60.4, 61.8, 59.0, 60.6, 58.8]
        figures.erleMedianSecondDb = 60.0
        figures.erleAlignedLagMs = 27.3
        return figures
    }

    @Test func `one lost second shows as one second under the goal beside the median, in the JSON and the text`() {
        let figures = Self.glitched()
        #expect(figures.json["erleDb"] == .double(28.9))
        #expect(figures.json["erleMedianSecondDb"] == .double(60))
        #expect(figures.json["erleSecondsUnderGoal"]?.intValue == 1)
        #expect(figures.json["erleSecondsDb"]?.arrayValue?.count == 12)
        #expect(figures.json["erleAlignedLagMs"] == .double(27.3))
        #expect(figures.text.joined(separator: "\n").contains("ERLE of the reply's voice, vsink -> vsink.monitor: 28.9 dB (by second: median 60.0 dB, 1 of 12 seconds under 40 dB)"))
    }

    @Test func `a measurement that failed claims no seconds`() {
        var figures = LiveTalkFigures(sink: "vsink", source: "vsink.monitor")
        figures.erleUnavailable = "no echo"
        #expect(figures.json["erleMedianSecondDb"] == nil)
        #expect(figures.text.joined(separator: "\n").contains("not measured: no echo"))
        #expect(!figures.text.joined(separator: "\n").contains("by second"))
    }
}
