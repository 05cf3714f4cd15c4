import TalkBench
import TalkLogging

extension OpenClawTalk {
    /// `bench gateway`: connect and reconnect times, memory per connection, `talk.speak` decode cost per format and
    /// `chat.send` latency against a reference Gateway (TalkBench's `GatewayBenchmark` measures them).
    struct GatewayBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gateway",
            abstract: "Measure Gateway connect and reconnect times, memory per connection and chat.send latency.",
            discussion: "Starts the reference Gateway (tools/reference-gateway/refgw.py, python3) on loopback.",
            options: BenchReportOptions.options + [
                .option("rounds", value: "n", help: "Connects to time per scheme (default 30)."),
                .option("connections", value: "n", help: "Connections held open for the memory figure (default 50)."),
                RepositoryOption.spec,
            ]
        )

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        /// `--rounds`: connects timed per scheme, and `chat.send` rounds.
        var rounds: Int
        /// `--connections`: held open at once for the memory figure.
        var connections: Int
        /// `--repository`: where the reference Gateway is.
        var repository: String

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            rounds = try parsed.intOption("rounds", range: 1...1000) ?? 30
            connections = try parsed.intOption("connections", range: 1...500) ?? 50
            repository = RepositoryOption.folder(parsed)
        }

        func run() async throws {
            var logger = Logger(label: "openclaw-talk.bench")
            logger.logLevel = .warning
            let figures = try await GatewayBenchmark.measure(rounds: rounds, connections: connections, repository: repository, logger: logger)
            if !(try await reporting.publish(name: "gateway", json: { figures.json.jsonText })) { figures.lines.forEach { print($0) } }
        }
    }
}
