import Foundation
import SessionBridge
import TalkBench
import Testing

/// The conditions `bench talk`'s live half runs in, without the command line: the reply the scripted agent gives
/// and the `talk.config` the reference Gateway sends.
@Suite struct TalkBenchConditionsTests {
    @Test func `without a length the reply is the short one, the file session's`() {
        #expect(TalkBenchConditions().reply == TalkBenchConditions.shortReply)
        #expect(TalkBenchConditions.fileSession.reply == TalkBenchConditions.shortReply)
        #expect(TalkBenchConditions.fileSession.voice == .local && TalkBenchConditions.fileSession.grammar == nil)
    }

    @Test(arguments: [2, 10, 25, 120])
    func `a reply of n seconds has about n seconds of words at the local voice's rate`(seconds: Int) {
        let words = TalkBenchConditions(replySeconds: seconds).reply.split(separator: " ").count
        let wanted = seconds * 175 / 60
        let longest = TalkBenchConditions.sentences.map { $0.split(separator: " ").count }.max() ?? 0
        #expect(words >= wanted && words < wanted + longest, "\(words) words for \(seconds) s (\(wanted) wanted)")
    }

    /// A faster local voice (`--rate`) must still fill the reply's seconds, and the daemon must be told the rate.
    @Test func `at a faster rate the reply has more words, and run is given the rate`() {
        let fast = TalkBenchConditions(replySeconds: 25, rateWPM: 260)
        let words = fast.reply.split(separator: " ").count
        let longest = TalkBenchConditions.sentences.map { $0.split(separator: " ").count }.max() ?? 0
        #expect(words >= 25 * 260 / 60 && words < 25 * 260 / 60 + longest, "\(words) words")
        #expect(fast.runArguments == ["--rate", "260"])
        #expect(fast.json["rateWPM"] == .int(260) && TalkBenchConditions().json["rateWPM"] == .int(175))
        #expect(TalkBenchConditions(replySeconds: 25).runArguments.isEmpty)
        #expect(TalkBenchConditions(grammar: "/x/a.gram", realtime: true).runArguments == ["--grammar", "/x/a.gram", "--mode", "realtime"])
    }

    @Test func `the Gateway's voice speaks only when its condition names it`() throws {
        func talk(_ conditions: TalkBenchConditions) throws -> [String: Any] {
            let data = Data(conditions.talkConfig(silenceMs: 650).utf8)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["cmd"] as? String == "talk-config")
            return try #require((object["config"] as? [String: Any])?["talk"] as? [String: Any])
        }
        let local = try talk(TalkBenchConditions(voice: .local))
        #expect(local["provider"] == nil && local["silenceTimeoutMs"] as? Int == 650 && local["interruptOnSpeech"] as? Bool == true)
        let gateway = try talk(TalkBenchConditions(voice: .gateway))
        #expect(gateway["provider"] as? String == "elevenlabs" && gateway["silenceTimeoutMs"] as? Int == 650)
    }

    @Test func `the report names the voice, the reply's length and how the sessions recognise`() {
        let dictation = TalkBenchConditions(voice: .gateway, replySeconds: 10).json
        #expect(dictation["voice"] == .string("gateway") && dictation["recognition"] == .string("dictation"))
        #expect(dictation["replyWords"] == .int(Int64(TalkBenchConditions(replySeconds: 10).reply.split(separator: " ").count)))
        #expect(TalkBenchConditions(grammar: "/x/answers.gram").json["recognition"] == .string("grammar answers.gram"))
    }

    /// In realtime mode the reference relay speaks the condition's reply, a little faster than real time: slower, the
    /// session's queue runs dry mid-reply and ends the turn; twice as fast (refgw's default), a 25 s reply passes the
    /// queue's 10 s and is cut.
    @Test func `in realtime mode the relay speaks the condition's reply at a pace the session's queue keeps up with`() throws {
        let conditions = TalkBenchConditions(replySeconds: 25, realtime: true)
        let data = Data(conditions.realtimeRelay.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["cmd"] as? String == "talk-relay" && object["reply"] as? String == conditions.reply)
        let pace = try #require(object["audioPace"] as? Double)
        let queuedSeconds = 25 * (1 - pace)   // what piles up while 25 s of reply arrive at 1/pace of real time
        #expect(pace < 1 && queuedSeconds < 10, "pace \(pace): \(queuedSeconds) s queued")
        #expect(conditions.json["mode"] == .string("realtime") && TalkBenchConditions().json["mode"] == .string("talk"))
    }

    /// `--user-gain-db`: the user a metre away is that much quieter over the reply; louder, a sample that would pass
    /// 16 bits is held at full scale instead of wrapping round to the other sign (a click, not a quieter user).
    @Test func `the user's clip over the reply is scaled by its gain and never wraps`() {
        let clip: [Int16] = (0..<1_600).map { Int16(3_000 * sin(Double($0) * 2 * .pi * 440 / 16_000)) }
        func rms(_ samples: [Int16]) -> Double { (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot() }
        #expect(TalkBenchConditions().userOverReply(clip) == clip)
        let quiet = TalkBenchConditions(userGainDb: -12).userOverReply(clip)
        #expect(abs(20 * log10(rms(quiet) / rms(clip)) + 12) < 0.05, "\(20 * log10(rms(quiet) / rms(clip))) dB")
        let loud = TalkBenchConditions(userGainDb: 12).userOverReply([30_000, -30_000, 1_000, -1_000])
        #expect(loud == [Int16.max, Int16.min, 3_981, -3_981])
        #expect(TalkBenchConditions(userGainDb: -6).json["userGainDb"] == .double(-6) && TalkBenchConditions().json["userGainDb"] == .double(0))
    }
}
