/// Help and usage text for a command, in argument-parser's layout.
enum UsageText {
    static func resolve(_ path: [String], root: any ParsableCommand.Type) -> any ParsableCommand.Type {
        var command = root
        for name in path.dropFirst() {
            guard let sub = command.configuration.subcommands.first(where: { $0.configuration.commandName == name }) else { break }
            command = sub
        }
        return command
    }

    static func synopsis(_ command: any ParsableCommand.Type, path: [String]) -> String {
        let c = command.configuration
        var parts = [path.joined(separator: " ")]
        if !c.subcommands.isEmpty { parts.append("<subcommand>") }
        parts += c.options.map { o in "[\(o.synopsis)]" + (o.repeated ? " ..." : "") }
        parts += c.arguments.map { a in
            let n = "<\(a.name)>" + (a.repeated ? " ..." : "")
            return a.optional ? "[\(n)]" : n
        }
        return parts.joined(separator: " ")
    }

    static func help(_ command: any ParsableCommand.Type, path: [String]) -> String {
        let c = command.configuration
        var out = "OVERVIEW: \(c.abstract)\n"
        if !c.discussion.isEmpty { out += "\n\(c.discussion)\n" }
        out += "\nUSAGE: \(synopsis(command, path: path))\n"
        if !c.arguments.isEmpty {
            out += "\nARGUMENTS:\n" + table(c.arguments.map { ("<\($0.name)>", $0.help) })
        }
        let options = CommandNode(path: path, command: command).helpOptions.map { o in
            ((o.short.map { "-\($0), " } ?? "") + o.synopsis, o.help)
        }
        out += "\nOPTIONS:\n" + table(options)
        if !c.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n" + table(c.subcommands.map { s in
                let name = s.configuration.commandName
                let isDefault = c.defaultSubcommand.map { $0.configuration.commandName == name } ?? false
                return (name + (isDefault ? " (default)" : ""), s.configuration.abstract)
            })
            let helpPath = ([path.first ?? "openclaw-talk", "help"] + path.dropFirst()).joined(separator: " ")
            out += "\n  See '\(helpPath) <subcommand>' for detailed help.\n"
        }
        return out
    }

    private static func table(_ rows: [(String, String)]) -> String {
        let width = min(28, (rows.map(\.0.count).max() ?? 0) + 2)
        return rows.map { left, right in
            let pad = left.count < width ? String(repeating: " ", count: width - left.count) : "\n" + String(repeating: " ", count: width + 2)
            return "  \(left)\(pad)\(right)\n"
        }.joined()
    }
}
