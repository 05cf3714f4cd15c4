import Foundation
import TalkBench
import Testing

@testable import TalkDaemon

/// `bench talk --stt`: whose words its file session sends, local by default so the figures are this client's;
/// `--grammar` and `--server`, the live conditions.
@Suite struct BenchTalkCommandLineTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `the file session sends the local recogniser's words unless --stt says otherwise`() throws {
        let plain = try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.stt == "local")
        let relayed = try #require(try parser.command(["bench", "talk", "--stt", "auto"]) as? OpenClawTalk.Bench.Talk)
        #expect(relayed.stt == "auto")
        #expect(throws: ValidationError("Invalid value 'cloud' for '--stt': expected local, gateway or auto")) {
            _ = try parser.command(["bench", "talk", "--stt", "cloud"])
        }
    }

    @Test func `the live sessions recognise by dictation unless --grammar names a grammar file`() throws {
        let plain = try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.conditions.grammar == nil)
        #expect(plain.conditions.json["recognition"]?.stringValue == "dictation")
        let path = FileManager.default.temporaryDirectory.path + "/bench-talk-\(getpid()).gram"
        try "#JSGF V1.0;\ngrammar g;\npublic <s> = go forward;\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let grammar = try #require(try parser.command(["bench", "talk", "--grammar", path]) as? OpenClawTalk.Bench.Talk)
        #expect(grammar.conditions.grammar == path)
        #expect(grammar.conditions.json["recognition"]?.stringValue == "grammar \((path as NSString).lastPathComponent)")
        #expect(throws: ValidationError("Invalid value '/nonexistent.gram' for '--grammar': no readable file there")) {
            _ = try parser.command(["bench", "talk", "--grammar", "/nonexistent.gram"])
        }
    }

    @Test func `--rejudge names a kept folder and prints its figures, so --report is refused with it`() throws {
        let rejudge = try #require(try parser.command(["bench", "talk", "--rejudge", "/tmp/kept", "--json"]) as? OpenClawTalk.Bench.Talk)
        #expect(rejudge.rejudge == "/tmp/kept" && rejudge.reporting.json)
        #expect(try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk).rejudge == nil)
        #expect(throws: ValidationError("'--rejudge' prints its figures; '--report' goes with a bench run")) {
            _ = try parser.command(["bench", "talk", "--rejudge", "/tmp/kept", "--report", "/tmp/report"])
        }
    }

    @Test func `--rate speeds the local voice up, and is refused where the Gateway speaks`() throws {
        let fast = try #require(try parser.command(["bench", "talk", "--rate", "260"]) as? OpenClawTalk.Bench.Talk)
        #expect(fast.conditions.rateWPM == 260 && fast.conditions.runArguments == ["--rate", "260"])
        #expect(throws: ValidationError("'--rate' is the local voice's speed; with '--voice gateway' the Gateway speaks")) {
            _ = try parser.command(["bench", "talk", "--rate", "260", "--voice", "gateway"])
        }
        #expect(throws: ValidationError("'--rate' is the local voice's speed; with '--mode realtime' the Gateway speaks")) {
            _ = try parser.command(["bench", "talk", "--rate", "260", "--mode", "realtime"])
        }
        #expect(throws: (any Error).self) { _ = try parser.command(["bench", "talk", "--rate", "500"]) }
    }

    @Test(arguments: [["bench", "talk"], ["bench", "soak"]])
    func `bench talk and bench soak take the same --server`(command: [String]) throws {
        #expect(throws: ValidationError("Invalid value 'alsa' for '--server': expected pulse or pipewire")) {
            _ = try parser.command(command + ["--server", "alsa"])
        }
        let parsed = try parser.command(command + ["--server", "pipewire"])
        let server = (parsed as? OpenClawTalk.Bench.Talk)?.conditions.server ?? (parsed as? OpenClawTalk.Bench.Soak)?.server
        #expect(server == .pipewire)
    }

    @Test func `--user-gain-db sets the barge-in user's level, negative values included, within its range`() throws {
        let plain = try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.conditions.userGainDb == 0)
        let quiet = try #require(try parser.command(["bench", "talk", "--user-gain-db", "-12"]) as? OpenClawTalk.Bench.Talk)
        #expect(quiet.conditions.userGainDb == -12)
        let realtime = try #require(try parser.command(["bench", "talk", "--mode", "realtime", "--user-gain-db", "-6.5"]) as? OpenClawTalk.Bench.Talk)
        #expect(realtime.conditions.userGainDb == -6.5 && realtime.conditions.realtime)
        #expect(throws: ValidationError("Invalid value '-60' for '--user-gain-db': expected a number in -40.0...12.0")) {
            _ = try parser.command(["bench", "talk", "--user-gain-db", "-60"])
        }
        #expect(throws: ValidationError("Invalid value 'quiet' for '--user-gain-db': expected a number in -40.0...12.0")) {
            _ = try parser.command(["bench", "talk", "--user-gain-db", "quiet"])
        }
    }

    @Test func `--live-stt local runs the sessions with their own recogniser's words; relay by default; not in realtime mode`() throws {
        let plain = try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.conditions.liveSTT == .relay && !plain.conditions.runArguments.contains("--stt"))
        let local = try #require(try parser.command(["bench", "talk", "--live-stt", "local"]) as? OpenClawTalk.Bench.Talk)
        #expect(local.conditions.liveSTT == .local && local.conditions.runArguments == ["--stt", "local"])
        #expect(throws: ValidationError("Invalid value 'gateway' for '--live-stt': expected relay or local")) {
            _ = try parser.command(["bench", "talk", "--live-stt", "gateway"])
        }
        #expect(throws: ValidationError("'--live-stt' goes with '--mode talk'; in realtime mode the Gateway's relay hears")) {
            _ = try parser.command(["bench", "talk", "--mode", "realtime", "--live-stt", "local"])
        }
    }

    @Test func `--user-at-seconds pins the barge-in user's start; without it the trials walk across the reply`() throws {
        let plain = try #require(try parser.command(["bench", "talk", "--reply-seconds", "25"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.conditions.userAtSeconds == nil && plain.conditions.userStart.seconds(trial: 1, clipSeconds: 2.79) == 1.35)
        let pinned = try #require(try parser.command(["bench", "talk", "--user-at-seconds", "1.5"]) as? OpenClawTalk.Bench.Talk)
        #expect(pinned.conditions.userStart.seconds(trial: 7, clipSeconds: 2.79) == 1.5)
        #expect(throws: ValidationError("Invalid value '-1' for '--user-at-seconds': expected a number in 0.0...60.0")) {
            _ = try parser.command(["bench", "talk", "--user-at-seconds", "-1"])
        }
    }
}
