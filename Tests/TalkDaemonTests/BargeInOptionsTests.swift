import Foundation
import Testing

@testable import TalkDaemon
@testable import TalkSession

/// `run`'s barge-in flags and config.json keys fill `BargeInPolicy`; a flag beats the file; bad values are usage
/// errors naming the option.
@Suite struct BargeInOptionsTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `the flags set the policy's thresholds`() throws {
        let run = try #require(try parser.command([
            "run", "--barge-in-min-chars", "5", "--barge-in-energy-db", "14.5", "--barge-in-onset-hold-ms", "600",
            "--mute-tail-ms", "900", "--lower-reply-db", "20", "--no-barge-in",
        ]) as? OpenClawTalk.Run)
        let policy = run.settings.bargeIn
        #expect(policy.text.minimumNewCharacters == 5 && policy.energy.decibelsOverNoiseFloor == 14.5)
        #expect(policy.lowering.onsetHold == .milliseconds(600) && policy.muteTail == .milliseconds(900))
        #expect(policy.lowering.decibels == 20 && policy.forcedOff)
        let plain = try #require(try parser.command(["run"]) as? OpenClawTalk.Run)
        #expect(plain.settings.bargeIn == BargeInPolicy())
    }

    @Test func `config.json and OPENCLAW_TALK_ variables feed the policy, and a flag beats them`() throws {
        let home = NSTemporaryDirectory() + "/oct-bargein-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home + "/openclaw-talk", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try #"{"bargeInMinChars": 6, "muteTailMs": 1200, "bargeInEnergyDb": 12}"#
            .write(toFile: home + "/openclaw-talk/config.json", atomically: true, encoding: .utf8)
        let environment = ["XDG_CONFIG_HOME": home, "OPENCLAW_TALK_BARGE_IN_ONSET_HOLD_MS": "300"]
        var flags = ParsedArguments()
        flags.options["barge-in-energy-db"] = ["18"]
        let (filled, configuration) = try RunConfiguration.layered(flags, environment: environment)
        let policy = try BargeInOptions.policy(filled)
        #expect(policy.text.minimumNewCharacters == 6 && policy.muteTail == .milliseconds(1200))
        #expect(policy.lowering.onsetHold == .milliseconds(300))
        #expect(policy.energy.decibelsOverNoiseFloor == 18 && configuration.flagKeys == ["bargeInEnergyDb"])
    }

    @Test(arguments: [
        (["run", "--barge-in-min-chars", "0"], "Invalid value '0' for '--barge-in-min-chars': expected a whole number in 1...40"),
        (["run", "--barge-in-energy-db", "loud"], "Invalid value 'loud' for '--barge-in-energy-db': expected a number in 0.0...40.0"),
        (["run", "--mute-tail-ms", "9000"], "Invalid value '9000' for '--mute-tail-ms': expected a whole number in 0...5000"),
    ])
    func `bad barge-in values are usage errors`(argv: [String], message: String) {
        #expect(throws: ValidationError(message)) { _ = try parser.command(argv) }
    }
}
