import Foundation
import TalkService

extension OpenClawTalk {
    /// `run` detached: its own session (no terminal), stdio to the log file, and this command returns once the
    /// daemon serves (its pid) or with the error it stopped on.
    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start",
            abstract: "Start the daemon in the background ('run' detached); returns once it is ready.",
            discussion: "Takes run's options. Prints the daemon's pid once it serves its control socket, or the error "
                + "it stopped on (exit 1). One daemon per user: with one running it says so. Logs go to "
                + "$XDG_STATE_HOME/openclaw-talk/daemon.log.",
            options: Run.configuration.options)

        var arguments: [String]
        /// The Gateway's token and password, read here (a `-` file from our standard input, which the daemon does not
        /// have) and handed to the daemon in its environment, which only its own user can read: never in its argv,
        /// which every user sees for as long as it runs.
        var secrets: [String: String] = [:]

        init(_ parsed: ParsedArguments) throws {
            // The options are run's: checked here (and the config file with them) so a mistake fails in front of the user.
            let run = try Run(parsed)
            var forDaemon = parsed
            for option in ["token", "password", "token-file", "password-file"] { forDaemon.options[option] = nil }
            arguments = RunConfiguration.arguments(of: forDaemon)
            if let token = run.token { secrets[SecretOptions.tokenVariable] = token }
            if let password = run.password { secrets[SecretOptions.passwordVariable] = password }
        }

        func run() async throws {
            let paths = RuntimePaths()
            if let pid = InstanceLock.holder(path: paths.lockPath), StatusReading.processExists(pid) {
                throw StartFailure(description: "openclaw-talk is already running (pid \(pid))")
            }
            try RuntimePaths.ensurePrivateDirectory(paths.stateDirectory)
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            let arguments = ["run"] + self.arguments
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "NOTIFY_SOCKET")  // systemd's notifications belong to a unit's own process
            environment.merge(secrets) { $1 }
            let childEnvironment = environment
            let outcome = try await onThread {
                try DetachedLaunch.spawn(executable: executable, arguments: arguments, environment: childEnvironment,
                                         logPath: paths.logPath)
            }
            switch outcome {
            case .ready(let pid):
                print("Started openclaw-talk (pid \(pid)); logging to \(paths.logPath)")
            case .failed(let message):
                throw StartFailure(description: message)
            case .exited(let status):
                throw StartFailure(description: "the daemon exited" + (status.map { " with status \($0)" } ?? "")
                    + " before it was ready; see \(paths.logPath)")
            case .timedOut(let pid):
                throw StartFailure(description: "the daemon (pid \(pid)) did not report ready within 60 s; see \(paths.logPath)")
            }
        }
    }

    /// `config show`: what the running daemon's configuration is, and where each value came from.
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config", abstract: "The daemon's configuration.", subcommands: [Show.self])

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show",
                abstract: "Print the running daemon's configuration: each key, its value, and the file or variable it came from.",
                options: [.flag("json", help: "Print it as one JSON object.")])
            var json: Bool
            init(_ parsed: ParsedArguments) throws { json = parsed.flag("json") }
            func run() async throws {
                let paths = RuntimePaths()
                let outcome: Result<ControlJSON, ControlError>
                do throws(ControlClientError) {
                    outcome = try ControlClient(path: paths.socketPath).call("config").outcome
                } catch {
                    return try ClientOutcome(stderr: "\(error)\n", exitCode: error.exitCode).emit()
                }
                let value: ControlJSON
                switch outcome {
                case .success(let v): value = v
                case .failure(let e): return try ClientOutcome(stderr: "Error: \(e.message)\n", exitCode: 1).emit()
                }
                if json { return print(String(decoding: value.line().dropLast(), as: UTF8.self)) }
                let entries = value.objectValue ?? [:]
                if entries.isEmpty { print("(nothing set: every option has its default)") }
                for key in entries.keys.sorted() {
                    let entry = entries[key]
                    let shown = entry?["value"].map { v in v.stringValue ?? String(decoding: v.line().dropLast(), as: UTF8.self) } ?? "?"
                    print("\(key) = \(shown)    (\(entry?["from"]?.stringValue ?? "?"))")
                }
            }
        }
    }
}

struct StartFailure: Error, CustomStringConvertible {
    let description: String
}

/// Waiting for the detached daemon blocks on a pipe: not on the cooperative pool.
private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in Thread { c.resume(with: Result { try body() }) }.start() }
}
