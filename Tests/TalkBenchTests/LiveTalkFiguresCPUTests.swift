import SessionBridge
import TalkBench
import Testing

/// What `bench talk` reports of a live session's CPU: each trial's figure beside the median, since a trial reads
/// about 4 % of a core unless the recogniser decoded something over the reply, and the median of three trials lands
/// on either; and the whole reply beside its first 3 s.
@Suite struct LiveTalkFiguresCPUTests {
    @Test func `each trial's CPU while speaking and over the whole reply is reported beside the median`() {
        var figures = LiveTalkFigures(sink: "vsink", source: "vsink.monitor")
        figures.idleCPUPercent = [1.3, 2.0, 1.7]
        figures.speakingCPUPercent = [4.9, 19.1, 28.24]
        figures.wholeReplyCPUPercent = [4.5, 11.4, 15.2]
        let cpu = figures.json["cpuPercent"]
        #expect(cpu?["speaking"]?["p50"] == .double(19.1))
        #expect(cpu?["wholeReply"]?["p50"] == .double(11.4))
        #expect(cpu?["byTrial"]?["speaking"] == .array([.double(4.9), .double(19.1), .double(28.2)]))
        #expect(cpu?["byTrial"]?["wholeReply"] == .array([.double(4.5), .double(11.4), .double(15.2)]))
        #expect(cpu?["byTrial"]?["idle"]?.arrayValue?.count == 3)
        let text = figures.text.joined(separator: "\n")
        #expect(text.contains("idle 1.7 %, speaking 19.1 % of a core"))
        #expect(text.contains("by trial: speaking (the reply's first 3 s) 4.9 19.1 28.2; over the whole reply 4.5 11.4 15.2 (median 11.4 %)"))
    }

    @Test func `without a finished reply there is no whole-reply line`() {
        var figures = LiveTalkFigures(sink: "vsink", source: "vsink.monitor")
        figures.speakingCPUPercent = [4.9]
        #expect(figures.json["cpuPercent"]?["wholeReply"]?["count"]?.intValue == 0)
        #expect(!figures.text.joined(separator: "\n").contains("by trial"))
    }
}
