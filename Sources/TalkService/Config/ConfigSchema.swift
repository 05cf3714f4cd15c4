import Foundation

/// The options a config file, `OPENCLAW_TALK_*` variables and flags may set: the long option names in
/// camelCase, each with the values it accepts. The Talk loop adds its own with `adding`.
package struct ConfigSchema: Sendable {
    package enum Kind: Sendable, Equatable {
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case text
        case flag
        case choice([String])
    }

    package private(set) var kinds: [String: Kind]

    package init(_ kinds: [String: Kind]) { self.kinds = kinds }

    package func adding(_ more: [String: Kind]) -> ConfigSchema {
        ConfigSchema(kinds.merging(more) { $1 })
    }

    /// The service plane's own options and the ones existing commands already take.
    package static let service = ConfigSchema([
        "heartbeatSeconds": .integer(5...3600),
        "staleAfterSeconds": .integer(10...86_400),
        "connectingStaleSeconds": .integer(10...86_400),
        "silenceMs": .integer(100...10_000),
        "voice": .text, "rate": .integer(80...450), "pitch": .integer(0...100),
        "source": .text, "sink": .text,
        "uplink": .choice(["opus", "pcm16", "g711_ulaw"]),
        "modelDir": .text, "recordDir": .text, "grammar": .text, "keyphrase": .text,
        "timeout": .number(1...3600),
        "replyTimeout": .integer(10...3600),
        "pttLimit": .integer(1...3600),
        "lowerReplyDb": .integer(0...40), "bargeInMinChars": .integer(1...40), "bargeInEnergyDb": .number(0...40),
        "bargeInOnsetHoldMs": .integer(100...5_000), "muteTailMs": .integer(0...5_000),
        "logLevel": .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        "logMaxBytes": .integer(65_536...1_073_741_824),
    ])

    /// `silence-ms` → `silenceMs`, as a flag's long name becomes a config key.
    package static func key(forFlag flag: String) -> String {
        let parts = flag.drop { $0 == "-" }.split(separator: "-")
        return parts.enumerated().map { $0 == 0 ? String($1) : $1.prefix(1).uppercased() + $1.dropFirst() }.joined()
    }

    /// `silenceMs` → `OPENCLAW_TALK_SILENCE_MS`.
    package static func environmentName(forKey key: String) -> String {
        var name = "OPENCLAW_TALK_"
        for c in key {
            if c.isUppercase { name += "_" }
            name += c.uppercased()
        }
        return name
    }
}

/// A value that passed its option's check.
package enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case integer(Int)
    case number(Double)
    case text(String)
    case flag(Bool)

    package var description: String {
        switch self {
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .text(let s): s
        case .flag(let b): String(b)
        }
    }
}

/// A config mistake, naming the key and where it was found (the file, variable or flag).
package struct ConfigError: Error, Equatable, CustomStringConvertible {
    package var key: String?
    package var source: String
    package var problem: String

    package var description: String {
        if let key { "\(source): \"\(key)\": \(problem)" } else { "\(source): \(problem)" }
    }
}
