import Foundation
import TalkBench

extension OpenClawTalk.Bench {
    /// `bench soak`: the real daemon against a private sound server and the reference Gateway for minutes or hours
    /// with faults in rotation (TalkBench's `SoakRun`); this command parses, catches stop signals, and prints.
    struct Soak: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "soak",
            abstract: "Run the daemon for minutes with a fault every 30 s; count lost, duplicated and wrong requests, recovery, growth.",
            discussion: "Starts its own headless sound server and the reference Gateway (tools/reference-gateway, python3), "
                + "runs `openclaw-talk run` against them, speaks \"go forward ten meters\" into the virtual microphone every "
                + "20 s (the daemon recognises with a one-sentence grammar), and strikes in rotation: the Gateway drops every "
                + "connection; the Gateway is killed and started again at the same address; the sound server is killed and "
                + "started again; the microphone disappears and returns; SIGHUP; the control socket flooded. The daemon's "
                + "RSS, CPU and open descriptors are sampled every 10 s.",
            options: [
                .option("minutes", value: "n", help: "How long to run (default 10; fractions allowed)."),
                .option("fault-every", value: "seconds", help: "Seconds between faults (default 30)."),
                SoundServerOption.spec(help: "The sound server to start (default pulse)."),
            ] + BenchReportOptions.options + [RepositoryOption.spec]
        )

        var minutes: Double
        var faultEvery: Double
        var server: SoundServerKind
        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        var repository: String

        init(_ parsed: ParsedArguments) throws {
            minutes = try parsed.doubleOption("minutes", range: 0.1...10_000) ?? 10
            faultEvery = try parsed.doubleOption("fault-every", range: 3...3600) ?? 30
            server = try SoundServerOption.kind(parsed) ?? .pulse
            reporting = BenchReportOptions(parsed)
            repository = RepositoryOption.folder(parsed)
        }

        func run() async throws {
            let root = try BenchFolder.temporary()
            let keep = ProcessInfo.processInfo.environment["OPENCLAW_TALK_BENCH_KEEP"] != nil
            defer { if keep { Self.say("run kept in \(root)") } else { try? FileManager.default.removeItem(atPath: root) } }
            // Before anything starts: a stop signal stops what this run started, then the soak.
            let children = SoakChildren()
            let signalWatch = children.stopOnSignals(root: root, keep: keep)
            defer { signalWatch.cancel() }
            let soak = SoakRun(
                minutes: minutes, faultEvery: faultEvery, server: server, repository: repository, root: root,
                loseRequests: ProcessInfo.processInfo.environment["OPENCLAW_TALK_SOAK_LOSE_REQUESTS"].flatMap(Int.init),
                progress: Self.say)
            let report: SoakReport
            do { report = try await soak.run(children: children) } catch {
                // A stop signal ended the parts: its exit, not this error, is the way out.
                await children.holdIfStopping()
                throw error
            }
            await children.holdIfStopping()
            if try await !reporting.publish(name: "soak", json: { report.json.jsonText }) {
                print(report.text.joined(separator: "\n"))
            }
            // The figures up to its end are printed; a run whose daemon died is still a failed run.
            if let status = report.daemonExitStatus {
                throw BenchSoakError.daemonExited(status: status, atSeconds: report.daemonExitedAt, log: report.daemonLog ?? "")
            }
        }

        @Sendable static func say(_ line: String) { FileHandle.standardError.write(Data("bench soak: \(line)\n".utf8)) }
    }
}
