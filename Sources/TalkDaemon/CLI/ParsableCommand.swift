/// A command of the `openclaw-talk` tree, shaped like swift-argument-parser's: a static configuration
/// (name, help, option table, subcommands), an initialiser from parsed arguments, and `run()`.
/// Property wrappers are left out on purpose: each command reads its values from `ParsedArguments`.
protocol ParsableCommand: Sendable {
    static var configuration: CommandConfiguration { get }
    init(_ parsed: ParsedArguments) throws
    func run() async throws
}

extension ParsableCommand {
    /// Group commands (only subcommands) need no initialiser or body of their own.
    init(_ parsed: ParsedArguments) throws { throw ParserError.missingSubcommand }
    func run() async throws { throw ParserError.missingSubcommand }
}

struct CommandConfiguration: Sendable {
    var commandName: String
    var abstract: String
    var discussion: String = ""
    var options: [OptionSpec] = []
    var arguments: [ArgumentSpec] = []
    var subcommands: [any ParsableCommand.Type] = []
    /// Used when the next word is not a subcommand name (`bench MANIFEST.tsv` means `bench speech MANIFEST.tsv`).
    var defaultSubcommand: (any ParsableCommand.Type)? = nil
}

/// One `--long`/`-s` entry of a command's option table. `valueName == nil` makes it a flag.
struct OptionSpec: Sendable, Equatable {
    var long: String
    var short: Character? = nil
    var valueName: String? = nil
    var help: String
    var repeated: Bool = false
    /// The values the option takes, when they are a fixed list (completions offer them).
    var choices: [String] = []

    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: nil, help: help)
    }
    /// A value name listing its choices (`local|gateway|auto`) makes them the option's `choices`.
    static func option(_ long: String, short: Character? = nil, value: String, help: String, repeated: Bool = false) -> OptionSpec {
        let choices = value.contains("|") ? value.split(separator: "|").map(String.init) : []
        return OptionSpec(long: long, short: short, valueName: value, help: help, repeated: repeated, choices: choices)
    }

    var isFlag: Bool { valueName == nil }
    var synopsis: String { isFlag ? "--\(long)" : "--\(long) <\(valueName ?? "value")>" }
}

/// A positional argument; `optional` ones may be left out, a `repeated` one takes the rest.
struct ArgumentSpec: Sendable, Equatable {
    var name: String
    var help: String
    var optional: Bool = false
    var repeated: Bool = false
    /// The values the argument takes, when they are a fixed list (completions offer them).
    var choices: [String] = []
}

/// What the parser bound for the chosen command. Option names are the long names without dashes.
struct ParsedArguments: Sendable, Equatable {
    var commandPath: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]
    var arguments: [String: [String]] = [:]

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func option(_ name: String) -> String? { options[name]?.last }
    func optionValues(_ name: String) -> [String] { options[name] ?? [] }
    func argument(_ name: String) -> String? { arguments[name]?.first }
    func argumentValues(_ name: String) -> [String] { arguments[name] ?? [] }

    /// An integer option, with a usage error naming the option when the value is not a number in range.
    func intOption(_ name: String, range: ClosedRange<Int> = Int.min...Int.max) throws -> Int? {
        guard let text = option(name) else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw ValidationError("Invalid value '\(text)' for '--\(name)': expected a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    func doubleOption(_ name: String, range: ClosedRange<Double> = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) throws -> Double? {
        guard let text = option(name) else { return nil }
        guard let v = Double(text), range.contains(v) else {
            throw ValidationError("Invalid value '\(text)' for '--\(name)': expected a number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }
}
