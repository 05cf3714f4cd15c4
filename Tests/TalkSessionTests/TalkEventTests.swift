import Foundation
import Testing

@testable import TalkSession

/// `--json`: every event is one line of JSON with its name, an ISO 8601 time and the session's milliseconds.
@Suite struct TalkEventTests {
    static let kinds: [TalkEvent.Kind] = [
        .stateChanged(from: .listening, to: .thinking, reason: "transcript sent"), .speechStarted(positionMs: 500),
        .speechEnded(lastSpeechEndMs: 2660, closedAtMs: 3360), .partialTranscript("go\nforward"),
        .finalTranscript(text: "go forward", engine: "pocketsphinx", startMs: 500, endMs: 2660, endToFinalMs: 700.25),
        .transcriptIgnored(text: "", reason: "empty transcript"), .transcriptSent(text: "go", interruptedAtSeconds: 2.456),
        .transcriptSent(text: "go", interruptedAtSeconds: nil), .transcriptAcknowledged(runId: nil, status: "started"),
        .replyDelta("echo: \"go\""), .replyFinal("echo: go"), .replyFailed("no reply"),
        .speakingStarted(sentence: "Hi.", voice: "gateway"), .speakingStopped(sentence: "Hi.", completed: false),
        .bargeIn(offsetSeconds: 1.234, detectionLatencyMs: 398.06, partial: "go forward"), .voiceFallback(reason: "x"),
        .connectionChanged("connected"), .microphone("lost"), .error("boom"),
        .modeChanged(from: nil, to: .wakePhrase, reason: "started"), .wakePhrase(phrase: "computer", command: "lights on"),
        .pushToTalk(command: "stop", captureId: "c1", status: "queued", transcript: "lights on"),
        .transcriptSource(engine: "gateway-relay", relayMs: -12.34, fallbackReason: nil),
        .relayUplink(mode: "transcription", uplink: "opus 16 kHz", bytesPerSecond: 5389), .relayNote("output cleared"),
        .replyLevel(gain: 0.17783, reason: "sound over the reply"), .turnEnded(reason: .bargeIn),
    ]

    @Test func `each event is one JSON line with its name, time and milliseconds`() throws {
        let when = Date(timeIntervalSince1970: 1_780_000_000.25)
        for kind in Self.kinds {
            let line = TalkEvent(wallTime: when, monotonicMs: 1234, kind: kind).jsonLine
            #expect(!line.contains("\n"), "\(line)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["event"] as? String == TalkEvent(wallTime: when, monotonicMs: 0, kind: kind).name)
            #expect(object["monotonicMs"] as? Int == 1234)
            let time = try #require(object["time"] as? String)
            let parser = ISO8601DateFormatter()
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            #expect(parser.date(from: time).map { abs($0.timeIntervalSince(when)) < 0.001 } == true, "\(time)")
        }
    }

    @Test func `the fields a reader needs are there`() throws {
        func object(_ kind: TalkEvent.Kind) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(TalkEvent(wallTime: Date(), monotonicMs: 0, kind: kind).jsonLine.utf8)) as? [String: Any])
        }
        let bargeIn = try object(.bargeIn(offsetSeconds: 1.234, detectionLatencyMs: 398.06, partial: "go forward"))
        #expect(bargeIn["offsetSeconds"] as? Double == 1.23 && bargeIn["detectionLatencyMs"] as? Double == 398.1)
        let level = try object(.replyLevel(gain: 0.17783, reason: "sound over the reply"))
        #expect(level["gain"] as? Double == 0.178 && level["reason"] as? String == "sound over the reply")
        let state = try object(.stateChanged(from: .speaking, to: .listening, reason: "barge-in"))
        #expect(state["from"] as? String == "speaking" && state["to"] as? String == "listening" && state["reason"] as? String == "barge-in")
        #expect(try object(.transcriptSent(text: "go", interruptedAtSeconds: nil))["interruptedAtSeconds"] is NSNull)
        #expect(try object(.speakingStopped(sentence: "Hi.", completed: false))["completed"] as? Bool == false)
        let ended = try object(.turnEnded(reason: .noReply))
        #expect(ended["event"] as? String == "turnEnded" && ended["reason"] as? String == "no reply")
        #expect(try object(.replyDelta("a \"quoted\" delta"))["text"] as? String == "a \"quoted\" delta")
        let mode = try object(.modeChanged(from: .alwaysListening, to: .wakePhrase, reason: "no interaction for 30 s"))
        #expect(mode["event"] as? String == "mode" && mode["from"] as? String == "always" && mode["to"] as? String == "wake")
        #expect(try object(.modeChanged(from: nil, to: .pushToTalk, reason: "started"))["from"] is NSNull)
        let ptt = try object(.pushToTalk(command: "start", captureId: "c1", status: nil, transcript: nil))
        #expect(ptt["captureId"] as? String == "c1" && ptt["status"] is NSNull && ptt["transcript"] is NSNull)
        let wake = try object(.wakePhrase(phrase: "computer", command: "lights on"))
        #expect(wake["phrase"] as? String == "computer" && wake["command"] as? String == "lights on")
        let relayed = try object(.transcriptSource(engine: "gateway-relay", relayMs: -12.34, fallbackReason: nil))
        #expect(relayed["engine"] as? String == "gateway-relay" && relayed["relayMs"] as? Double == -12.3 && relayed["fallbackReason"] is NSNull)
        let local = try object(.transcriptSource(engine: "pocketsphinx", relayMs: nil, fallbackReason: "input fell behind"))
        #expect(local["relayMs"] is NSNull && local["fallbackReason"] as? String == "input fell behind")
        let uplink = try object(.relayUplink(mode: "realtime", uplink: "pcm16 24 kHz", bytesPerSecond: 65_200))
        #expect(uplink["uplink"] as? String == "pcm16 24 kHz" && uplink["bytesPerSecond"] as? Int == 65_200 && uplink["mode"] as? String == "realtime")
    }

    /// Scripts and `--max-turns` read these words: the reasons are typed in code, and their JSON stays as it was.
    @Test func `a turn's end and Talk going off keep their reasons' words`() {
        let epoch = Date(timeIntervalSince1970: 0)
        let turnEnds: [TurnEndReason: String] = [
            .replyDone: "reply done", .noReply: "no reply", .bargeIn: "barge-in", .wakePhrase: "wake phrase", .pushToTalk: "push-to-talk",
        ]
        #expect(Set(turnEnds.keys) == Set(TurnEndReason.allCases))
        for (reason, words) in turnEnds {
            #expect(TalkEvent(wallTime: epoch, monotonicMs: 0, kind: .turnEnded(reason: reason)).jsonLine
                == #"{"event":"turnEnded","monotonicMs":0,"reason":"\#(words)","time":"1970-01-01T00:00:00.000Z"}"#)
        }
        let talkOffs: [TalkOffReason: String] = [.stopped: "stopped", .talkStop: "talk stop"]
        #expect(Set(talkOffs.keys) == Set(TalkOffReason.allCases))
        for (reason, words) in talkOffs {
            var machine = TurnTaking()
            _ = machine.handle(.control(.activate))
            let lines = machine.handle(.control(.deactivate(reason))).compactMap { action -> String? in
                guard case .emit(let kind) = action else { return nil }
                return TalkEvent(wallTime: epoch, monotonicMs: 0, kind: kind).jsonLine
            }
            #expect(lines.contains(#"{"event":"state","from":"listening","monotonicMs":0,"reason":"\#(words)","time":"1970-01-01T00:00:00.000Z","to":"idle"}"#),
                    "\(lines)")
        }
    }
}
