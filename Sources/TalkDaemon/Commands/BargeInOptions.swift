import Foundation
import TalkSession

/// `run`'s barge-in options, each a field of `BargeInPolicy` (config.json keys: the option names in camelCase,
/// `RunConfiguration.runOptions`).
enum BargeInOptions {
    static let options: [OptionSpec] = [
        .flag("no-barge-in", help: "Do not stop the reply when you speak; the microphone is muted while it plays."),
        .option("lower-reply-db", value: "dB", help: "While you may be cutting in, the reply plays this much quieter (default 25; 0 keeps it)."),
        .option("barge-in-min-chars", value: "n", help: "Letters or digits not in the reply a partial needs to stop it (default 3)."),
        .option("barge-in-energy-db", value: "dB", help: "How far over the noise floor the microphone must be to stop the reply (default 10)."),
        .option("barge-in-onset-hold-ms", value: "ms", help: "Sound over the reply lowers it this long waiting for words (default 800)."),
        .option("mute-tail-ms", value: "ms", help: "With --no-barge-in, the microphone stays muted this long after the reply (default 500)."),
    ]

    /// Config keys that are these options, and their flag names.
    static let configKeys: [String: String] = [
        "lowerReplyDb": "lower-reply-db", "bargeInMinChars": "barge-in-min-chars", "bargeInEnergyDb": "barge-in-energy-db",
        "bargeInOnsetHoldMs": "barge-in-onset-hold-ms", "muteTailMs": "mute-tail-ms",
    ]

    static func policy(_ parsed: ParsedArguments) throws -> BargeInPolicy {
        var policy = BargeInPolicy()
        policy.forcedOff = parsed.flag("no-barge-in")
        if let lower = try parsed.intOption("lower-reply-db", range: 0...40) { policy.lowering.decibels = lower == 0 ? nil : Double(lower) }
        if let chars = try parsed.intOption("barge-in-min-chars", range: 1...40) { policy.text.minimumNewCharacters = chars }
        if let db = try parsed.doubleOption("barge-in-energy-db", range: 0...40) { policy.energy.decibelsOverNoiseFloor = db }
        if let ms = try parsed.intOption("barge-in-onset-hold-ms", range: 100...5_000) { policy.lowering.onsetHold = .milliseconds(ms) }
        if let ms = try parsed.intOption("mute-tail-ms", range: 0...5_000) { policy.muteTail = .milliseconds(ms) }
        return policy
    }
}
