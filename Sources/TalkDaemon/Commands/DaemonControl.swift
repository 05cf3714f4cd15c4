import Foundation
import TalkService

/// The commands that only ask a running daemon for something, over its control socket. With no daemon
/// they say so and exit with status 3.
extension OpenClawTalk {
    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pause", abstract: "Close the microphone stream until 'resume' (nothing records while paused).")
        init(_ parsed: ParsedArguments) throws {}
        func run() async throws { try DaemonQuery.command("pause", paths: RuntimePaths(), done: "Paused.").emit() }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Reopen the microphone after 'pause'.")
        init(_ parsed: ParsedArguments) throws {}
        func run() async throws { try DaemonQuery.command("resume", paths: RuntimePaths(), done: "Resumed.").emit() }
    }

    struct Reconnect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reconnect", abstract: "Drop the Gateway connection and connect again now.")
        init(_ parsed: ParsedArguments) throws {}
        func run() async throws {
            try DaemonQuery.command("reconnect", paths: RuntimePaths(), done: "Reconnecting.").emit()
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop the running daemon.")
        init(_ parsed: ParsedArguments) throws {}
        func run() async throws { try DaemonQuery.command("stop", paths: RuntimePaths(), done: "Stopping.").emit() }
    }

    struct Talk: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "talk", abstract: "Start or stop the daemon's Talk session.", subcommands: [Start.self, End.self])

        struct Start: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "start", abstract: "Start listening and answering.")
            init(_ parsed: ParsedArguments) throws {}
            func run() async throws {
                try DaemonQuery.command("talk.start", paths: RuntimePaths(), done: "Talk started.").emit()
            }
        }

        struct End: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "stop", abstract: "End the Talk session.")
            init(_ parsed: ParsedArguments) throws {}
            func run() async throws {
                try DaemonQuery.command("talk.stop", paths: RuntimePaths(), done: "Talk stopped.").emit()
            }
        }
    }

    struct PushToTalk: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ptt", abstract: "Push-to-talk on the daemon: start holds the microphone open, stop ends the turn.",
            arguments: [ArgumentSpec(name: "action", help: "start, stop or once", choices: ["start", "stop", "once"])])
        var action: PushToTalkAction
        init(_ parsed: ParsedArguments) throws {
            let word = parsed.arguments["action"]?.first ?? ""
            guard let action = PushToTalkAction(rawValue: word) else {
                throw ValidationError("'\(word)' is not a push-to-talk action; use start, stop or once")
            }
            self.action = action
        }
        func run() async throws {
            try DaemonQuery.command("ptt", args: ["action": .string(action.rawValue)], paths: RuntimePaths(),
                                    done: "Push-to-talk \(action.rawValue).").emit()
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show the daemon's state; stale when its heartbeat stopped, 'not running' when it died.",
            options: [.flag("json", help: "Print the status document as JSON."),
                      .flag("waybar", help: "Print one line of JSON (text, tooltip, class) for waybar and similar bars.")])
        var format: DaemonQuery.StatusFormat
        init(_ parsed: ParsedArguments) throws {
            if parsed.flag("json") && parsed.flag("waybar") {
                throw ValidationError("'--json' and '--waybar' cannot be used together")
            }
            format = parsed.flag("json") ? .json : parsed.flag("waybar") ? .waybar : .text
        }
        func run() async throws { try DaemonQuery.status(paths: RuntimePaths(), format: format).emit() }
    }

    struct Events: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "events", abstract: "Print the daemon's status and, with --follow, its events as JSON lines.",
            options: [.flag("follow", short: "f", help: "Keep printing events until the daemon stops.")])
        var follow: Bool
        init(_ parsed: ParsedArguments) throws { follow = parsed.flag("follow") }
        func run() async throws {
            let follow = self.follow
            let outcome = try await onOwnThread {
                DaemonQuery.events(paths: RuntimePaths(), follow: follow) { line in
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                }
            }
            try outcome.emit()
        }
    }

    struct InstallService: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install-service",
            abstract: "Write the systemd user unit and the file managers' \"Send to OpenClaw\" action, and print how to enable the unit.",
            discussion: """
                The unit starts an installed openclaw-talk: this binary when it is installed, else the one on PATH \
                (a unit pointing into a build folder breaks at the next 'make clean'). When the package or \
                'make install' already installed a unit for that binary, nothing is written: it says how to enable it. \
                Otherwise the unit goes to ~/.config/systemd/user/ and the "Send to OpenClaw" action, naming the same \
                binary, to ~/.local/share/ (file-manager/actions, kio/servicemenus, nemo/actions).
                """,
            options: [
                .option("binary", value: "file", help: "The binary the unit starts (default: this one if installed, else the one on PATH)."),
                .flag("print", help: "Print the unit instead of writing it."),
            ])

        var binary: String?
        var printOnly: Bool
        init(_ parsed: ParsedArguments) throws {
            binary = parsed.option("binary").map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            printOnly = parsed.flag("print")
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let running = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
            let this = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? running
            var notes: [String] = []
            let target: String
            if let binary {
                target = binary
            } else if !InstalledService.isBuildFolderBinary(this) {
                target = this
            } else if let installed = InstalledService.installedBinary(environment: environment) {
                target = installed
                notes.append("Using the installed \(installed) (this one is in a build folder).")
            } else {
                target = this
                notes.append("Warning: \(this) is in a build folder; the unit breaks when it is rebuilt or cleaned ('make install' puts it in place).")
            }
            if printOnly {
                print(UserServiceInstaller.unit(binary: target), terminator: "")
                return
            }
            notes.forEach { print($0) }
            func resolved(_ path: String?) -> String? { path.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } }
            if binary == nil, let installed = InstalledService.installedUnit(environment: environment),
               resolved(installed.binary) == resolved(target) {
                print("The unit is already installed: \(installed.path) (it starts \(target)).")
                let own = UserServiceInstaller.unitDirectory(environment: environment) + "/" + UserServiceInstaller.unitName
                if FileManager.default.fileExists(atPath: own) {
                    print("Note: \(own) overrides it; remove that file to use the installed unit.")
                }
                print("Start it now and at every login:  systemctl --user daemon-reload && systemctl --user enable --now openclaw-talk")
                print("Keep it running while you are logged out:  loginctl enable-linger \(environment["USER"] ?? "$USER")")
                return
            }
            let actions = try FileManagerActions.install(binary: target, environment: environment)
            var lines = try UserServiceInstaller.install(binary: target, environment: environment)
            lines.insert(contentsOf: actions.map { "Wrote \($0)" }, at: 1)
            lines.forEach { print($0) }
        }
    }
}

/// Following events blocks on a socket read for as long as the daemon runs: not on the cooperative pool.
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
    await withCheckedContinuation { c in Thread { c.resume(returning: body()) }.start() }
}

extension ClientOutcome {
    /// Prints what the command produced and ends with its exit status.
    func emit() throws {
        if !stdout.isEmpty { FileHandle.standardOutput.write(Data(stdout.utf8)) }
        if !stderr.isEmpty { FileHandle.standardError.write(Data(stderr.utf8)) }
        if exitCode != 0 { throw ExitCode(rawValue: exitCode) }
    }
}
