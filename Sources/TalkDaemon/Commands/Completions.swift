import Foundation

extension OpenClawTalk {
    /// `completions bash|zsh|fish`: the shell's completion script, generated from the command tree.
    struct Completions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "completions",
            abstract: "Print the completion script for bash, zsh or fish (installed by 'make install' and the package).",
            discussion: """
                Without installing: bash: source <(openclaw-talk completions bash); zsh: source <(openclaw-talk completions zsh) \
                after compinit; fish: openclaw-talk completions fish | source.
                """,
            arguments: [ArgumentSpec(name: "shell", help: "bash, zsh or fish", choices: CompletionScript.Shell.allCases.map(\.rawValue))])

        var shell: CompletionScript.Shell
        init(_ parsed: ParsedArguments) throws {
            let word = parsed.argument("shell") ?? ""
            guard let shell = CompletionScript.Shell(rawValue: word) else {
                throw ValidationError("'\(word)' is not a shell this knows; use bash, zsh or fish")
            }
            self.shell = shell
        }

        func run() async throws {
            FileHandle.standardOutput.write(Data(CompletionScript.script(shell, root: OpenClawTalk.self).utf8))
        }
    }
}
