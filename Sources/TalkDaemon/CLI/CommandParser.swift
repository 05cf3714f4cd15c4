/// Second parsing pass (as in argument-parser's `CommandParser`): walk the command tree by subcommand
/// names, then bind the remaining elements against the chosen command's option and argument tables.
struct CommandParser {
    let root: any ParsableCommand.Type

    struct Result {
        var command: any ParsableCommand.Type
        var parsed: ParsedArguments
    }

    func parse(_ argv: [String]) throws -> Result {
        var elements = ArgumentSplitter.split(argv)[...]
        var command = root
        var path = [root.configuration.commandName]

        // Built-ins before any subcommand: `--version`, `--help`/`-h`, and `help [sub...]`.
        if command == root, let first = elements.first {
            if first == .long("version", value: nil) { throw CleanExit.message(VersionText.describe()) }
            if case .value("help") = first {
                var target = root
                var helpPath = path
                for case .value(let name) in elements.dropFirst() {
                    guard let sub = target.configuration.subcommands.first(where: { $0.configuration.commandName == name }) else {
                        throw CommandError(commandPath: helpPath, underlying: ParserError.unknownCommand(name, suggestion: nil))
                    }
                    target = sub
                    helpPath.append(name)
                }
                throw CleanExit.helpRequest(commandPath: helpPath)
            }
        }

        // Descend while the next word names a subcommand (or a default subcommand takes over).
        while !command.configuration.subcommands.isEmpty {
            if elements.contains(.long("help", value: nil)) || elements.contains(.short("h")),
               elements.first.map({ if case .value = $0 { return false } else { return true } }) ?? true
            {
                throw CleanExit.helpRequest(commandPath: path)
            }
            if case .value(let name) = elements.first,
               let sub = command.configuration.subcommands.first(where: { $0.configuration.commandName == name })
            {
                elements = elements.dropFirst()
                command = sub
                path.append(name)
            } else if let def = command.configuration.defaultSubcommand {
                command = def
                path.append(def.configuration.commandName)
            } else if case .value(let name) = elements.first {
                let names = command.configuration.subcommands.map { $0.configuration.commandName }
                throw CommandError(commandPath: path, underlying: ParserError.unknownCommand(name, suggestion: nearest(name, in: names)))
            } else if let first = elements.first {
                throw CommandError(commandPath: path, underlying: ParserError.unknownOption(describe(first), suggestion: nil))
            } else {
                throw CommandError(commandPath: path, underlying: ParserError.missingSubcommand)
            }
        }

        do {
            var parsed = try bind(Array(elements), to: command.configuration)
            parsed.commandPath = path
            return Result(command: command, parsed: parsed)
        } catch let exit as CleanExit {
            if case .helpRequest = exit { throw CleanExit.helpRequest(commandPath: path) }
            throw exit
        } catch {
            throw CommandError(commandPath: path, underlying: error)
        }
    }

    private func bind(_ elements: [ArgumentElement], to config: CommandConfiguration) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var values: [String] = []
        var i = 0
        while i < elements.count {
            let element = elements[i]
            i += 1
            let spec: OptionSpec
            var inline: String?
            switch element {
            case .value(let v):
                values.append(v)
                continue
            case .long(let name, let value):
                if name == "help" { throw CleanExit.helpRequest(commandPath: []) }
                guard let s = config.options.first(where: { $0.long == name }) else {
                    throw ParserError.unknownOption("--\(name)", suggestion: nearest(name, in: config.options.map(\.long)).map { "--\($0)" })
                }
                spec = s
                inline = value
            case .short(let c):
                if c == "h" { throw CleanExit.helpRequest(commandPath: []) }
                guard let s = config.options.first(where: { $0.short == c }) else {
                    throw ParserError.unknownOption("-\(c)", suggestion: nil)
                }
                spec = s
            }
            if spec.isFlag {
                if inline != nil { throw ParserError.flagTakesNoValue("--\(spec.long)") }
                parsed.flags.insert(spec.long)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else if i < elements.count, case .value(let v) = elements[i] {
                value = v
                i += 1
            } else {
                throw ParserError.missingValueForOption(spec.synopsis)
            }
            if !spec.repeated, parsed.options[spec.long] != nil { throw ParserError.duplicateOption("--\(spec.long)") }
            parsed.options[spec.long, default: []].append(value)
        }
        for arg in config.arguments {
            if arg.repeated {
                if values.isEmpty, !arg.optional { throw ParserError.missingArgument(arg.name) }
                parsed.arguments[arg.name] = values
                values = []
            } else if !values.isEmpty {
                parsed.arguments[arg.name] = [values.removeFirst()]
            } else if !arg.optional {
                throw ParserError.missingArgument(arg.name)
            }
        }
        if !values.isEmpty { throw ParserError.unexpectedExtraValues(values) }
        return parsed
    }

    private func describe(_ e: ArgumentElement) -> String {
        switch e {
        case .long(let n, _): return "--\(n)"
        case .short(let c): return "-\(c)"
        case .value(let v): return v
        }
    }
}

/// The closest candidate within two edits, for "Did you mean ...?".
func nearest(_ word: String, in candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }
    return scored.min { $0.1 < $1.1 }?.0
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    var row = Array(0...b.count)
    for i in 1...a.count {
        var prev = row[0]
        row[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            let cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
            prev = cur
        }
    }
    return row[b.count]
}
