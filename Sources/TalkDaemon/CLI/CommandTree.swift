/// The command tree as a list of nodes, one per command path: what `--help`, the shell completions and the
/// manual's test read, so the three cannot disagree about a command or an option.
struct CommandNode {
    /// `["openclaw-talk", "bench", "talk"]`.
    var path: [String]
    var command: any ParsableCommand.Type

    var configuration: CommandConfiguration { command.configuration }
    var isRoot: Bool { path.count == 1 }
    /// A shell-safe name for the node: `root`, `run`, `bench_talk`.
    var id: String { isRoot ? "root" : path.dropFirst().map { $0.replacingOccurrences(of: "-", with: "_") }.joined(separator: "_") }

    /// Every node under `root`, depth first, the root first.
    static func all(root: any ParsableCommand.Type) -> [CommandNode] {
        var nodes: [CommandNode] = []
        func visit(_ command: any ParsableCommand.Type, _ path: [String]) {
            nodes.append(CommandNode(path: path, command: command))
            for sub in command.configuration.subcommands { visit(sub, path + [sub.configuration.commandName]) }
        }
        visit(root, [root.configuration.commandName])
        return nodes
    }

    /// The options `--help` lists for this command, the built-ins included.
    var helpOptions: [OptionSpec] {
        var options = configuration.options
        if isRoot { options.append(.flag("version", help: "Show the version, the build and where the models are.")) }
        options.append(.flag("help", short: "h", help: "Show help information."))
        return options
    }

    /// The words that pick a subcommand here (the root also takes `help`).
    var subcommandWords: [(name: String, abstract: String)] {
        var words = configuration.subcommands.map { ($0.configuration.commandName, $0.configuration.abstract) }
        if isRoot, !configuration.subcommands.isEmpty { words.append(("help", "Show help for a command.")) }
        return words
    }

    var defaultSubcommand: CommandNode? {
        configuration.defaultSubcommand.map { CommandNode(path: path + [$0.configuration.commandName], command: $0) }
    }
}

/// What a shell offers for an option's value or a positional argument.
enum ValueCompletion: Equatable {
    case nothing
    case files
    case directories
    case choices([String])
}

extension OptionSpec {
    var valueCompletion: ValueCompletion {
        guard let name = valueName?.lowercased() else { return .nothing }
        if !choices.isEmpty { return .choices(choices) }
        if name == "dir" { return .directories }
        if name.contains("file") || name.contains(".") { return .files }
        return .nothing
    }
}

extension ArgumentSpec {
    var valueCompletion: ValueCompletion {
        if !choices.isEmpty { return .choices(choices) }
        if name.contains("file") || name == "manifest" { return .files }
        return .nothing
    }
}
