import Foundation
import Synchronization

/// The layered configuration: config.json, then `OPENCLAW_TALK_*` variables, then flags; later wins.
/// What none of them set stays unset, so the Gateway's `talk.config` can fill it in.
package struct ServiceConfig: Sendable, Equatable {
    package private(set) var values: [String: ConfigValue] = [:]
    /// Which layer set each key (for `config show`).
    package private(set) var origins: [String: String] = [:]

    package init() {}

    package subscript(key: String) -> ConfigValue? { values[key] }

    package func integer(_ key: String) -> Int? { if case .integer(let i)? = values[key] { i } else { nil } }
    package func number(_ key: String) -> Double? {
        switch values[key] {
        case .number(let d)?: d
        case .integer(let i)?: Double(i)
        default: nil
        }
    }
    package func text(_ key: String) -> String? { if case .text(let s)? = values[key] { s } else { nil } }

    /// Reads all three layers. A missing file is an empty layer; anything wrong is an error naming it.
    package static func load(
        schema: ConfigSchema = .service, file: String?, environment: [String: String], flags: [String: String]
    ) throws(ConfigError) -> ServiceConfig {
        var config = ServiceConfig()
        if let file, FileManager.default.fileExists(atPath: file) {
            try config.apply(fileAt: file, schema: schema)
        }
        for key in schema.kinds.keys.sorted() {
            let name = ConfigSchema.environmentName(forKey: key)
            if let raw = environment[name] {
                try config.set(key, raw: .string(raw), textual: true, schema: schema, source: "environment variable \(name)")
            }
        }
        for (key, raw) in flags.sorted(by: { $0.key < $1.key }) {
            try config.set(key, raw: .string(raw), textual: true, schema: schema, source: "flag --\(key)")
        }
        return config
    }

    private mutating func apply(fileAt path: String, schema: ConfigSchema) throws(ConfigError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigError(key: nil, source: path, problem: "cannot be read (\(error.localizedDescription))")
        }
        guard let value = try? JSONDecoder().decode(ControlJSON.self, from: data), case .object(let object) = value else {
            throw ConfigError(key: nil, source: path, problem: "is not a JSON object")
        }
        for (key, raw) in object.sorted(by: { $0.key < $1.key }) {
            try set(key, raw: raw, textual: false, schema: schema, source: path)
        }
    }

    /// Checks one value against its option. Variables and flags are text (`textual`), so their numbers
    /// are parsed; a JSON file's number or boolean must already be one.
    private mutating func set(_ key: String, raw: ControlJSON, textual: Bool, schema: ConfigSchema,
                              source: String) throws(ConfigError) {
        guard let kind = schema.kinds[key] else {
            throw ConfigError(key: key, source: source, problem: "unknown option")
        }
        func bad(_ expected: String) -> ConfigError {
            ConfigError(key: key, source: source, problem: "expected \(expected), got \(Self.shown(raw))")
        }
        let value: ConfigValue
        switch (kind, raw) {
        case (.integer(let range), .number(let n)) where n.rounded() == n && range.contains(Int(exactly: n) ?? .min):
            value = .integer(Int(n))
        case (.integer(let range), .string(let s)) where textual && Int(s).map(range.contains) == true:
            value = .integer(Int(s)!)
        case (.integer(let range), _): throw bad("a whole number in \(range.lowerBound)...\(range.upperBound)")
        case (.number(let range), .number(let n)) where range.contains(n): value = .number(n)
        case (.number(let range), .string(let s)) where textual && Double(s).map(range.contains) == true: value = .number(Double(s)!)
        case (.number(let range), _): throw bad("a number in \(range.lowerBound)...\(range.upperBound)")
        case (.text, .string(let s)) where !s.isEmpty && s.utf8.count <= 4096: value = .text(s)
        case (.text, _): throw bad("a non-empty string")
        case (.flag, .bool(let b)): value = .flag(b)
        case (.flag, .string(let s)) where textual && ["true", "false", "1", "0", "yes", "no"].contains(s.lowercased()):
            value = .flag(["true", "1", "yes"].contains(s.lowercased()))
        case (.flag, _): throw bad("true or false")
        case (.choice(let options), .string(let s)) where options.contains(s): value = .text(s)
        case (.choice(let options), _): throw bad("one of \(options.joined(separator: ", "))")
        }
        values[key] = value
        origins[key] = source
    }

    private static func shown(_ raw: ControlJSON) -> String {
        let line = String(decoding: raw.line().dropLast(), as: UTF8.self)
        return line.count > 60 ? line.prefix(57) + "..." : line
    }
}

/// The daemon's current configuration; a reload that fails keeps the previous one.
package final class ConfigStore: Sendable {
    package typealias Loader = @Sendable () throws(ConfigError) -> ServiceConfig
    private let loader: Loader
    private let current: Synchronization.Mutex<ServiceConfig>

    package init(loader: @escaping Loader) throws(ConfigError) {
        self.loader = loader
        current = Synchronization.Mutex(try loader())
    }

    package var config: ServiceConfig { current.withLock { $0 } }

    /// Reads the layers again (SIGHUP in detached mode). On an error the old config stays in force.
    @discardableResult
    package func reload() -> Result<ServiceConfig, ConfigError> {
        do {
            let fresh = try loader()
            current.withLock { $0 = fresh }
            return .success(fresh)
        } catch {
            return .failure(error)
        }
    }
}

extension StatusPublisher.Settings {
    package init(_ config: ServiceConfig) {
        self.init()
        if let v = config.number("heartbeatSeconds") { heartbeatSeconds = v }
        if let v = config.number("staleAfterSeconds") { staleAfterSeconds = v }
        if let v = config.number("connectingStaleSeconds") { connectingStaleSeconds = v }
    }
}

extension ServiceConfig {
    /// `config show`'s document: each key's value and the layer that set it. The schema holds no secrets.
    package var json: ControlJSON {
        var shown: [String: ControlJSON] = [:]
        for (key, value) in values {
            let v: ControlJSON = switch value {
            case .integer(let i): .number(Double(i))
            case .number(let d): .number(d)
            case .text(let s): .string(s)
            case .flag(let b): .bool(b)
            }
            shown[key] = .object(["value": v, "from": .string(origins[key] ?? "?")])
        }
        return .object(shown)
    }
}
