import Foundation

/// The `openclaw-talk` command tree. Each subcommand lives in `Commands/` in a file of its own.
@main
struct OpenClawTalk: ParsableCommand {
    static let version = "openclaw-talk 0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "openclaw-talk",
        abstract: "OpenClaw Talk mode for the Linux desktop: speak to your assistant, hear the answer.",
        subcommands: [
            Play.self,
            Say.self,
            Run.self,
            Setup.self,
            Transcribe.self,
            Listen.self,
            Devices.self,
            Record.self,
            Bench.self,
            Start.self,
            Status.self,
            Stop.self,
            Pause.self,
            Resume.self,
            Reconnect.self,
            Talk.self,
            PushToTalk.self,
            Events.self,
            Approvals.self,
            Approve.self,
            Notify.self,
            Send.self,
            Config.self,
            InstallService.self,
            Completions.self,
        ]
    )

    static func main() async {
        signal(SIGPIPE, SIG_IGN)  // a write to a closed socket (also inside OpenSSL) must not end the process
        let code = await CommandRunner.main(root: OpenClawTalk.self, argv: Array(CommandLine.arguments.dropFirst()))
        exit(code)
    }
}
