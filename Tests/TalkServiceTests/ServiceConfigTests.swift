import Foundation
import Testing
@testable import TalkService

@Suite struct ServiceConfigTests {
    private func file(_ text: String) throws -> (TemporaryFolder, String) {
        let folder = try TemporaryFolder()
        let path = folder.path + "/config.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (folder, path)
    }

    @Test func fileThenEnvironmentThenFlagsLaterWins() throws {
        let (folder, path) = try file(#"{"heartbeatSeconds": 240, "staleAfterSeconds": 300, "silenceMs": 700, "voice": "en-us", "uplink": "opus"}"#)
        _ = folder
        let config = try ServiceConfig.load(
            file: path,
            environment: ["OPENCLAW_TALK_SILENCE_MS": "900", "OPENCLAW_TALK_VOICE": "en-gb", "OPENCLAW_TALK_SHARED": "/x"],
            flags: [ConfigSchema.key(forFlag: "--silence-ms"): "1200"])
        #expect(config.integer("heartbeatSeconds") == 240)
        #expect(config.text("voice") == "en-gb")
        #expect(config.integer("silenceMs") == 1200)
        #expect(config.text("uplink") == "opus")
        #expect(config.origins["silenceMs"] == "flag --silenceMs")
        #expect(config.origins["voice"] == "environment variable OPENCLAW_TALK_VOICE")
        #expect(config.origins["heartbeatSeconds"] == path)
        #expect(config["sink"] == nil, "unset keys stay unset for talk.config to fill")
        #expect(StatusPublisher.Settings(config).heartbeatSeconds == 240)
        let none = try ServiceConfig.load(file: folder.path + "/absent.json", environment: [:], flags: [:])
        #expect(none.values.isEmpty)
    }

    @Test(arguments: [
        (#"{"heartbeatSecs": 240}"#, "heartbeatSecs", "unknown option"),
        (#"{"heartbeatSeconds": "240"}"#, "heartbeatSeconds", "expected a whole number in 5...3600, got \"240\""),
        (#"{"heartbeatSeconds": 2.5}"#, "heartbeatSeconds", "expected a whole number in 5...3600, got 2.5"),
        (#"{"heartbeatSeconds": 99999}"#, "heartbeatSeconds", "expected a whole number in 5...3600, got 99999"),
        (#"{"voice": ""}"#, "voice", "expected a non-empty string, got \"\""),
        (#"{"uplink": "mp3"}"#, "uplink", "expected one of opus, pcm16, g711_ulaw, got \"mp3\""),
        (#"{"silenceMs": true}"#, "silenceMs", "expected a whole number in 100...10000, got true"),
        (#"{"silenceMs": null}"#, "silenceMs", "expected a whole number in 100...10000, got null"),
    ])
    func aBadFileNamesTheKeyAndTheFile(text: String, key: String, problem: String) throws {
        let (folder, path) = try file(text)
        _ = folder
        #expect(throws: ConfigError(key: key, source: path, problem: problem)) {
            try ServiceConfig.load(file: path, environment: [:], flags: [:])
        }
    }

    @Test func badEnvironmentFlagsAndFilesAreNamed() throws {
        #expect(throws: ConfigError(key: "silenceMs", source: "environment variable OPENCLAW_TALK_SILENCE_MS",
                                    problem: "expected a whole number in 100...10000, got \"fast\"")) {
            try ServiceConfig.load(file: nil, environment: ["OPENCLAW_TALK_SILENCE_MS": "fast"], flags: [:])
        }
        #expect(throws: ConfigError(key: "colour", source: "flag --colour", problem: "unknown option")) {
            try ServiceConfig.load(file: nil, environment: [:], flags: ["colour": "red"])
        }
        let (folder, path) = try file("[1, 2]")
        _ = folder
        #expect(throws: ConfigError(key: nil, source: path, problem: "is not a JSON object")) {
            try ServiceConfig.load(file: path, environment: [:], flags: [:])
        }
        #expect(ConfigError(key: "voice", source: "/c.json", problem: "unknown option").description
                == "/c.json: \"voice\": unknown option")
    }

    @Test func aBadReloadKeepsTheOldConfig() throws {
        let (folder, path) = try file(#"{"heartbeatSeconds": 240}"#)
        _ = folder
        let store = try ConfigStore { () throws(ConfigError) in try ServiceConfig.load(file: path, environment: [:], flags: [:]) }
        try Data(#"{"heartbeatSeconds": 60}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try store.reload().get().integer("heartbeatSeconds") == 60)
        try Data(#"{"heartbeatSeconds": 60, "bogus": 1}"#.utf8).write(to: URL(fileURLWithPath: path))
        guard case .failure(let error) = store.reload() else { Issue.record("bad reload accepted"); return }
        #expect(error.key == "bogus")
        #expect(store.config.integer("heartbeatSeconds") == 60)
    }

    @Test func namesFollowTheLongOptions() {
        #expect(ConfigSchema.key(forFlag: "--stale-after-seconds") == "staleAfterSeconds")
        #expect(ConfigSchema.environmentName(forKey: "staleAfterSeconds") == "OPENCLAW_TALK_STALE_AFTER_SECONDS")
    }
}
