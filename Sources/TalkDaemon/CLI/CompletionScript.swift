/// Shell completion scripts for bash, zsh and fish, generated from the command tree (`CommandNode`), the
/// same tables `--help` prints. Each script walks the words typed so far to find the command they name
/// (skipping option values, descending into a default subcommand as the parser does), then offers that
/// command's subcommands, options, an option's choices, or files and folders where a value is a path.
enum CompletionScript {
    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    static func script(_ shell: Shell, root: any ParsableCommand.Type) -> String {
        let nodes = CommandNode.all(root: root)
        let name = root.configuration.commandName
        switch shell {
        case .bash: return bash(nodes, name: name)
        case .zsh: return zsh(nodes, name: name)
        case .fish: return fish(nodes, name: name)
        }
    }

    static func header(_ shell: Shell, name: String) -> String {
        "# \(shell.rawValue) completion for \(name), generated from its command tree by `\(name) completions \(shell.rawValue)`.\n"
    }

    // MARK: The walk, shared by the three shells (written in each one's syntax)

    /// `node:word` patterns that move to a subcommand.
    static func transitions(_ nodes: [CommandNode]) -> [(pattern: String, to: String)] {
        nodes.flatMap { node in
            node.configuration.subcommands.map { sub in
                let child = CommandNode(path: node.path + [sub.configuration.commandName], command: sub)
                return ("\(node.id):\(sub.configuration.commandName)", child.id)
            }
        }
    }

    /// Options that take a value, as `node:--name` (and `node:-x`) patterns: the next word is their value.
    static func valueOptions(_ nodes: [CommandNode]) -> [String] {
        nodes.flatMap { node in
            node.configuration.options.filter { !$0.isFlag }.flatMap { o in
                ["\(node.id):--\(o.long)"] + (o.short.map { ["\(node.id):-\($0)"] } ?? [])
            }
        }
    }

    static func defaults(_ nodes: [CommandNode]) -> [(from: String, to: String)] {
        nodes.compactMap { node in node.defaultSubcommand.map { (node.id, $0.id) } }
    }

    /// What a positional word at index `npos` of the node is completed with (subcommand nodes: their default's).
    static func positional(_ node: CommandNode) -> [(index: Int, completion: ValueCompletion, rest: Bool)] {
        node.configuration.arguments.enumerated().map { ($0.offset, $0.element.valueCompletion, $0.element.repeated) }
    }

    // MARK: bash

    /// The walk's case arms in sh syntax (bash writes `pattern)`, zsh `(pattern)`): subcommands, default
    /// subcommands, options that take a value, then the start of the value completions, one arm per option.
    static func walk(_ nodes: [CommandNode], arm: (String) -> String, action: (ValueCompletion) -> String?) -> String {
        var s = ""
        for t in transitions(nodes) { s += "            \(arm(t.pattern)) node=\(t.to); npos=0; continue ;;\n" }
        s += "        esac\n        case $node in\n"
        for d in defaults(nodes) { s += "            \(arm(d.from)) node=\(d.to); npos=0 ;;\n" }
        s += "        esac\n        case \"$node:$word\" in\n"
        s += "            \(arm(valueOptions(nodes).joined(separator: "|"))) value=$word ;;\n"
        s += "            \(arm("*:-*")) ;;\n            \(arm("*")) npos=$((npos + 1)) ;;\n        esac\n    done\n"
        s += "    if [[ -n $value ]]; then\n        case \"$node:$value\" in\n"
        for node in nodes {
            for o in node.configuration.options where !o.isFlag {
                guard let a = action(o.valueCompletion) else { continue }
                let patterns = ["\(node.id):--\(o.long)"] + (o.short.map { ["\(node.id):-\($0)"] } ?? [])
                s += "            \(arm(patterns.joined(separator: "|"))) \(a) ;;\n"
            }
        }
        return s
    }

    static func bash(_ nodes: [CommandNode], name: String) -> String {
        func words(_ list: [String]) -> String { list.joined(separator: " ") }
        func reply(_ completion: ValueCompletion) -> String? {
            switch completion {
            case .nothing: return nil
            case .files: return #"_openclaw_talk_reply -f; compopt -o filenames 2>/dev/null"#
            case .directories: return #"_openclaw_talk_reply -d; compopt -o filenames 2>/dev/null"#
            case .choices(let c): return "_openclaw_talk_reply -W \"\(words(c))\""
            }
        }
        var s = header(.bash, name: name)
        s += """
            _openclaw_talk_reply() { mapfile -t COMPREPLY < <(compgen "$@" -- "$cur"); }
            _openclaw_talk() {
                local cur=${COMP_WORDS[COMP_CWORD]} node=root value="" word i npos=0
                for ((i = 1; i < COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]}
                    if [[ -n $value ]]; then value=""; continue; fi
                    case "$node:$word" in

            """
        s += walk(nodes, arm: { "\($0))" }, action: reply)
        s += "        esac\n        return 0\n    fi\n    if [[ $cur == -* ]]; then\n        case $node in\n"
        for node in nodes {
            let opts = node.helpOptions.flatMap { o in ["--\(o.long)"] + (o.short.map { ["-\($0)"] } ?? []) }
            s += "            \(node.id)) _openclaw_talk_reply -W \"\(words(opts))\" ;;\n"
        }
        s += "        esac\n        return 0\n    fi\n    case $node in\n"
        for node in nodes {
            var lines: [String] = []
            let subs = node.subcommandWords.map(\.name)
            if !subs.isEmpty { lines.append("_openclaw_talk_reply -W \"\(words(subs))\"") }
            let target = node.defaultSubcommand ?? node
            var cases: [String] = []
            for p in positional(target) {
                guard let r = reply(p.completion) else { continue }
                cases.append(p.rest ? "*) \(r) ;;" : "\(p.index)) \(r) ;;")
            }
            if !cases.isEmpty {
                if subs.isEmpty {
                    lines.append("case $npos in \(cases.joined(separator: " ")) esac")
                } else {
                    // The default subcommand's argument: files beside the subcommand names.
                    lines.append("local subs=(\"${COMPREPLY[@]}\"); case $npos in \(cases.joined(separator: " ")) esac; COMPREPLY=(\"${subs[@]}\" \"${COMPREPLY[@]}\")")
                }
            }
            guard !lines.isEmpty else { continue }
            s += "        \(node.id)) \(lines.joined(separator: "; ")) ;;\n"
        }
        s += "    esac\n}\ncomplete -F _openclaw_talk \(name)\n"
        return s
    }

    // MARK: zsh

    static func zsh(_ nodes: [CommandNode], name: String) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        func described(_ word: String, _ help: String) -> String {
            quoted(word.replacingOccurrences(of: ":", with: "\\:") + ":" + help)
        }
        func action(_ completion: ValueCompletion) -> String? {
            switch completion {
            case .nothing: return nil
            case .files: return "_files"
            case .directories: return "_files -/"
            case .choices(let c): return "compadd -- \(c.joined(separator: " "))"
            }
        }
        var s = "#compdef \(name)\n" + header(.zsh, name: name)
        s += """
            _openclaw-talk() {
                local node=root value= word i npos=0
                local -a described
                for ((i = 2; i < CURRENT; i++)); do
                    word=${words[i]}
                    if [[ -n $value ]]; then value=; continue; fi
                    case "$node:$word" in

            """
        s += walk(nodes, arm: { "(\($0))" }, action: action)
        s += "            (*) _message \"${value#--}\" ;;\n        esac\n        return\n    fi\n"
        s += "    if [[ ${words[CURRENT]} == -* ]]; then\n        case $node in\n"
        for node in nodes {
            let opts = node.helpOptions.map { described("--\($0.long)", $0.help) }
            s += "            (\(node.id)) described=(\(opts.joined(separator: " "))) ;;\n"
        }
        s += "        esac\n        _describe -t options option described\n        return\n    fi\n    case $node in\n"
        for node in nodes {
            var lines: [String] = []
            let subs = node.subcommandWords.map { described($0.name, $0.abstract) }
            if !subs.isEmpty { lines.append("described=(\(subs.joined(separator: " "))); _describe -t commands command described") }
            let target = node.defaultSubcommand ?? node
            var cases: [String] = []
            for p in positional(target) {
                guard let a = action(p.completion) else { continue }
                cases.append(p.rest ? "(*) \(a) ;;" : "(\(p.index)) \(a) ;;")
            }
            if !cases.isEmpty { lines.append("case $npos in \(cases.joined(separator: " ")) esac") }
            guard !lines.isEmpty else { continue }
            s += "        (\(node.id)) \(lines.joined(separator: "; ")) ;;\n"
        }
        s += """
                esac
            }
            if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
                _openclaw-talk "$@"
            else
                compdef _openclaw-talk \(name)
            fi

            """
        return s
    }

    // MARK: fish

    static func fish(_ nodes: [CommandNode], name: String) -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        var s = header(.fish, name: name)
        s += """
            function __openclaw_talk_node
                set -l words (commandline -opc)
                set -e words[1]
                set -l node root
                set -l value 0
                for word in $words
                    if test $value = 1
                        set value 0
                        continue
                    end
                    switch "$node:$word"

            """
        for t in transitions(nodes) { s += "            case \(t.pattern)\n                set node \(t.to)\n                continue\n" }
        s += "        end\n        switch $node\n"
        for d in defaults(nodes) { s += "            case \(d.from)\n                set node \(d.to)\n" }
        s += "        end\n        switch \"$node:$word\"\n"
        s += "            case \(valueOptions(nodes).joined(separator: " "))\n                set value 1\n"
        s += """
                    end
                end
                echo $node
            end
            function __openclaw_talk_at
                test (__openclaw_talk_node) = $argv[1]
            end
            complete -c \(name) -f

            """
        for node in nodes {
            let at = "-n '__openclaw_talk_at \(node.id)'"
            for sub in node.subcommandWords {
                s += "complete -c \(name) \(at) -a \(sub.name) -d \(quoted(sub.abstract))\n"
            }
            for o in node.helpOptions {
                var line = "complete -c \(name) \(at) -l \(o.long)"
                if let short = o.short { line += " -s \(short)" }
                switch (o.isFlag, o.valueCompletion) {
                case (true, _): break
                case (false, .files): line += " -r -F"
                case (false, .directories): line += " -x -a '(__fish_complete_directories)'"
                case (false, .choices(let c)): line += " -x -a \(quoted(c.joined(separator: " ")))"
                case (false, .nothing): line += " -x"
                }
                s += line + " -d \(quoted(o.help))\n"
            }
            let target = node.defaultSubcommand ?? node
            for p in positional(target) {
                switch p.completion {
                case .files: s += "complete -c \(name) \(at) -F\n"
                case .directories: s += "complete -c \(name) \(at) -a '(__fish_complete_directories)'\n"
                case .choices(let c): s += "complete -c \(name) \(at) -a \(quoted(c.joined(separator: " ")))\n"
                case .nothing: break
                }
            }
        }
        return s
    }
}
