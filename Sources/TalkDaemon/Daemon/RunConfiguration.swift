import Foundation
import TalkLogging
import TalkService

/// `run`'s options in layers: `$XDG_CONFIG_HOME/openclaw-talk/config.json`, then `OPENCLAW_TALK_*` variables,
/// then the flags (later wins). The file and variables fill the options the command line left out, before
/// `run` reads them, so each value is checked once by the schema (naming the key and where it came from) and
/// once more by the option it becomes.
struct RunConfiguration: Sendable {
    /// The service plane's keys; `run` adds nothing the schema lacks.
    static let schema = ConfigSchema.service

    /// Config keys that are `run` options, and their flag names.
    static let runOptions: [String: String] = [
        "silenceMs": "silence-ms", "voice": "voice", "rate": "rate", "source": "source", "sink": "sink",
        "modelDir": "model-dir", "grammar": "grammar", "replyTimeout": "reply-timeout",
        "pttLimit": "ptt-limit",
    ].merging(BargeInOptions.configKeys) { $1 }

    var config = ServiceConfig()
    /// Keys set on the command line (a reload does not override them).
    var flagKeys: Set<String> = []

    /// Fills `parsed` from the file and variables; a config mistake is an error naming the key and the file.
    static func layered(_ parsed: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> (ParsedArguments, RunConfiguration)
    {
        let paths = RuntimePaths(environment: environment)
        let config = try ServiceConfig.load(schema: schema, file: paths.configPath, environment: environment, flags: [:])
        var filled = parsed
        var flagKeys: Set<String> = []
        for (key, flag) in runOptions {
            if parsed.option(flag) != nil {
                flagKeys.insert(key)
                continue
            }
            // A configured device gives way to a file given for it on the command line.
            if key == "source", parsed.option("input") != nil { continue }
            if key == "sink", parsed.option("output") != nil { continue }
            if let value = config[key] { filled.options[flag] = [value.description] }
        }
        if let level = config.text("logLevel").flatMap(Logger.Level.init(caseInsensitive:)) {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return (filled, RunConfiguration(config: config, flagKeys: flagKeys))
    }

    /// `run`'s flags back as arguments, for `start` to hand to the detached `run`.
    static func arguments(of parsed: ParsedArguments) -> [String] {
        var argv: [String] = []
        for flag in parsed.flags.sorted() { argv.append("--\(flag)") }
        for (name, values) in parsed.options.sorted(by: { $0.key < $1.key }) {
            for value in values { argv += ["--\(name)", value] }
        }
        return argv
    }
}
