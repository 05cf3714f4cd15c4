import Foundation
import Testing

@testable import TalkDaemon
@testable import TalkSession

/// `run`'s hands-free options bound into the loop's settings, and bad ones refused with a clear message.
@Suite struct RunModesCommandLineTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `--wake, --ptt and --idle-timeout set the mode and the timeout`() throws {
        let wake = try #require(try parser.command(["run", "--wake", "--idle-timeout", "90"]) as? OpenClawTalk.Run)
        #expect(wake.settings.mode == .wakePhrase)
        #expect(wake.settings.idleTimeout == .seconds(90) && wake.settings.idleTimeoutFixed)
        #expect(wake.settings.wakePhrases == ["hey open claw", "okay claw"], "the project's models/keyphrases/wake.kws")
        let ptt = try #require(try parser.command(["run", "--ptt"]) as? OpenClawTalk.Run)
        #expect(ptt.settings.mode == .pushToTalk && ptt.settings.idleTimeout == nil && !ptt.settings.idleTimeoutFixed)
        let plain = try #require(try parser.command(["run"]) as? OpenClawTalk.Run)
        #expect(plain.settings.mode == .alwaysListening)
    }

    @Test func `--ptt-limit sets how long a push-to-talk capture may stay open, 60 s by default`() throws {
        let plain = try #require(try parser.command(["run"]) as? OpenClawTalk.Run)
        #expect(plain.settings.pushToTalkCaptureLimit == .seconds(60))
        let limited = try #require(try parser.command(["run", "--ptt", "--ptt-limit", "20"]) as? OpenClawTalk.Run)
        #expect(limited.settings.pushToTalkCaptureLimit == .seconds(20))
        #expect(throws: ValidationError("Invalid value '0' for '--ptt-limit': expected a whole number in 1...3600")) {
            _ = try parser.command(["run", "--ptt-limit", "0"])
        }
    }

    @Test func `--lower-reply-db sets how much quieter the reply plays while the user may be cutting in, 0 keeps it`() throws {
        let plain = try #require(try parser.command(["run"]) as? OpenClawTalk.Run)
        #expect(plain.settings.bargeIn.lowering.gain.map { abs($0 - 0.056) < 0.001 } == true, "25 dB by default")
        let twenty = try #require(try parser.command(["run", "--lower-reply-db", "20"]) as? OpenClawTalk.Run)
        #expect(twenty.settings.bargeIn.lowering.gain.map { abs($0 - 0.1) < 0.001 } == true)
        let kept = try #require(try parser.command(["run", "--lower-reply-db", "0"]) as? OpenClawTalk.Run)
        #expect(kept.settings.bargeIn.lowering.gain == nil)
        #expect(throws: ValidationError("Invalid value '50' for '--lower-reply-db': expected a whole number in 0...40")) {
            _ = try parser.command(["run", "--lower-reply-db", "50"])
        }
    }

    @Test(arguments: [
        (["run", "--wake", "--ptt"], "'--wake' and '--ptt' cannot be used together; choose one mode"),
        (["run", "--idle-timeout", "0.5"], "Invalid value '0.5' for '--idle-timeout': expected a number in 1.0...86400.0"),
        (["run", "--mode", "realtime", "--wake"], "'--wake' goes with '--mode talk'; the realtime relay hears everything the microphone does"),
        (["run", "--mode", "realtime", "--ptt"], "'--ptt' goes with '--mode talk'; the realtime relay hears everything the microphone does"),
        (["run", "--mode", "realtime", "--idle-timeout", "30"],
         "'--idle-timeout' goes with '--mode talk'; the realtime relay hears everything the microphone does"),
    ])
    func `bad hands-free options are usage errors`(argv: [String], message: String) {
        #expect(throws: ValidationError(message)) { _ = try parser.command(argv) }
    }
}
