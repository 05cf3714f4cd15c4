import Foundation
import TalkTestSupport
import Testing

@testable import TalkDaemon

/// The generated completion scripts, run in the real shells: a line is typed and TAB pressed (bash through its
/// completion variables, zsh on a pseudo-terminal through zpty, fish through `complete -C`), and what the shell
/// offers is compared with what the command tree says.
@Suite struct CompletionScriptTests {
    static let bash = TestInput.program("bash", package: "bash")
    static let zsh = TestInput.program("zsh", package: "zsh")
    static let fish = TestInput.program("fish", package: "fish")

    /// Lines typed before TAB, and exactly what must be offered.
    static let cases: [(line: String, offered: Set<String>)] = [
        ("openclaw-talk st", ["start", "status", "stop"]),
        ("openclaw-talk run --aec ", ["auto", "webrtc", "pulse", "off"]),
        ("openclaw-talk start --aec ", ["auto", "webrtc", "pulse", "off"]),
        ("openclaw-talk run --stt ", ["local", "gateway", "auto"]),
        ("openclaw-talk run --silence-ms 700 --mode ", ["talk", "realtime"]),
        ("openclaw-talk ptt ", ["start", "stop", "once"]),
        ("openclaw-talk talk ", ["start", "stop"]),
        ("openclaw-talk bench t", ["talk"]),
        ("openclaw-talk completions ", ["bash", "zsh", "fish"]),
        ("openclaw-talk run --no-bar", ["--no-barge-in"]),
        ("openclaw-talk status --w", ["--waybar"]),
    ]

    @Test(.requires(bash), arguments: cases.indices)
    func `bash offers what the command tree has`(index: Int) async throws {
        let (line, offered) = Self.cases[index]
        #expect(try await Self.complete(.bash, line) == offered, "\(line)")
    }

    @Test(.requires(zsh), arguments: cases.indices)
    func `zsh offers what the command tree has`(index: Int) async throws {
        let (line, offered) = Self.cases[index]
        #expect(try await Self.complete(.zsh, line) == offered, "\(line)")
    }

    @Test(.requires(fish), arguments: cases.indices)
    func `fish offers what the command tree has`(index: Int) async throws {
        let (line, offered) = Self.cases[index]
        #expect(try await Self.complete(.fish, line) == offered, "\(line)")
    }

    @Test(.requires(bash, zsh, fish))
    func `a path value completes with files in every shell`() async throws {
        let folder = try ScratchFolder()
        FileManager.default.createFile(atPath: folder.path + "/clip-one.wav", contents: Data())
        try FileManager.default.createDirectory(atPath: folder.path + "/models-dir", withIntermediateDirectories: true)
        // zsh's _files hands compadd the last path component; bash and fish offer whole paths.
        func names(_ offered: Set<String>) -> Set<String> {
            Set(offered.map { URL(fileURLWithPath: $0.hasSuffix("/") ? String($0.dropLast()) : $0).lastPathComponent })
        }
        for shell in CompletionScript.Shell.allCases {
            let files = names(try await Self.complete(shell, "openclaw-talk transcribe \(folder.path)/cl"))
            #expect(files.contains("clip-one.wav") && !files.contains("models-dir"), "\(shell): \(files)")
            let folders = names(try await Self.complete(shell, "openclaw-talk run --model-dir \(folder.path)/"))
            #expect(folders.contains("models-dir") && !folders.contains("clip-one.wav"), "\(shell): \(folders)")
        }
        withExtendedLifetime(folder) {}
    }

    @Test func `every command and option of the tree is in each script`() {
        let nodes = CommandNode.all(root: OpenClawTalk.self)
        for shell in CompletionScript.Shell.allCases {
            let script = CompletionScript.script(shell, root: OpenClawTalk.self)
            for node in nodes {
                for option in node.helpOptions {
                    #expect(script.contains("--\(option.long)") || script.contains("-l \(option.long)"), "\(shell): \(node.path) --\(option.long)")
                }
                if let name = node.path.last, !node.isRoot { #expect(script.contains(name), "\(shell): \(node.path)") }
            }
        }
    }

    @Test(.requires(.builtBinary)) func `the completions command prints the generated script`() async throws {
        for shell in CompletionScript.Shell.allCases {
            let out = try await BuiltCommand.run(["completions", shell.rawValue])
            #expect(out.status == 0)
            #expect(out.stdout == CompletionScript.script(shell, root: OpenClawTalk.self))
        }
        let bad = try await BuiltCommand.run(["completions", "tcsh"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("'tcsh' is not a shell this knows"))
    }

    // MARK: Driving the shells

    /// What `shell` offers when `line` is typed and TAB pressed, with this tree's generated script loaded.
    static func complete(_ shell: CompletionScript.Shell, _ line: String) async throws -> Set<String> {
        let folder = try ScratchFolder()
        defer { withExtendedLifetime(folder) {} }
        let script = CompletionScript.script(shell, root: OpenClawTalk.self)
        let scriptPath = folder.path + (shell == .zsh ? "/_openclaw-talk" : "/completion")
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let out: String
        switch shell {
        case .bash:
            var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if line.hasSuffix(" ") { words.append("") }
            let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
            out = try await run(try bash.path(), ["--norc", "--noprofile", "-c", """
                source '\(scriptPath)'
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
                _openclaw_talk
                printf '%s\\n' "${COMPREPLY[@]}"
                """])
        case .fish:
            out = try await run(try fish.path(), ["--no-config", "-c", "source '\(scriptPath)'; complete -C '\(line)'"])
                .split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" }.joined(separator: "\n")
        case .zsh:
            let driver = folder.path + "/driver.zsh"
            try zshDriver.write(toFile: driver, atomically: true, encoding: .utf8)
            out = try await run(try zsh.path(), ["-f", driver, folder.path, line])
        }
        return Set(out.split(separator: "\n").map(String.init).filter { !$0.isEmpty })
    }

    /// An interactive zsh on a pseudo-terminal (zsh/zpty) with compinit and the script on fpath; `compadd`
    /// prints each candidate it is given as `<hit>word`, and a function the completion system calls when it
    /// is done (`comppostfuncs`) marks the end. Each step waits for its marker, not for time.
    static let zshDriver = #"""
        zmodload zsh/zpty
        zpty z zsh -f -i
        zpty -w z "PS1='>'; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
        zpty -w z 'compadd() { local -a __hits; builtin compadd -O __hits "$@"; print -rl -- "<hit>"${^__hits}; builtin compadd "$@"; }'
        zpty -w z "octdone() { print '<do''ne>' }; comppostfuncs=(octdone); print '<rea''dy>'"
        zpty -r z out '*<ready>*'
        zpty -w -n z "$2"$'\t'
        zpty -r z out '*<done>*'
        zpty -d z
        print -r -- ${out//$'\r'/} | grep -ao '<hit>[^<]*$' | sed 's/^<hit>//'
        """#

    /// Runs a shell in an empty folder (so what it offers does not depend on the files where the tests run; coreutils'
    /// `env -C` enters it). Through `ChildProcess`, not Foundation's `Process`: the output pipe Foundation makes is not
    /// close-on-exec, and a server another test started meanwhile held its write end, so the read of the shell's output
    /// never ended (CI10's pass 1, "bash offers what the command tree has", stopped by the pass's time limit). A shell
    /// that has not ended after 30 s fails the case, naming it.
    static func run(_ program: String, _ arguments: [String]) async throws -> String {
        let empty = try ScratchFolder()
        defer { withExtendedLifetime(empty) {} }
        var environment = TestInputs.environment
        environment["HOME"] = NSTemporaryDirectory()
        environment["XDG_CONFIG_HOME"] = nil
        let (_, output) = try await ChildProcess.output("/usr/bin/env", ["-C", empty.path, program] + arguments,
                                                        environment: environment, timeout: .seconds(30))
        return output
    }
}

/// A private folder under /tmp, removed afterwards.
private final class ScratchFolder: Sendable {
    let path: String
    init() throws {
        var template = Array("/tmp/oct-comp-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
