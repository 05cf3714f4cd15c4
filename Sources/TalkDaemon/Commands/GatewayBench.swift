import Foundation
import SessionBridge
import TalkBench
import TalkLogging

extension OpenClawTalk {
    /// `bench gateway`: connect time to hello-ok (ws and wss on loopback), reconnect time after a Gateway
    /// restart, memory per connection, `talk.speak` decode cost per format (GatewayBench+Speak) and `chat.send`
    /// to ack / first delta (GatewayBench+Chat), against a reference Gateway this command starts itself.
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
            let ws = try await Self.measureConnects(tls: false, rounds: rounds, connections: connections, repository: repository, logger: logger)
            let wss = try await Self.measureConnects(tls: true, rounds: rounds, connections: connections, repository: repository, logger: logger)
            let reconnect = try await Self.measureReconnect(repository: repository, logger: logger)
            let speak = try await Self.measureSpeakDecode(rounds: 10, repository: repository, logger: logger)
            let chat = try await Self.measureChat(rounds: rounds, repository: repository, logger: logger)
            let printed = try await reporting.publish(name: "gateway") {
                let out: JSONValue = [
                    "connectToHelloOkMs": ["ws": ws.connect.json, "wss": wss.connect.json],
                    "reconnectAfterRestartMs": [
                        "gatewayDownMs": .int(Int64(Self.restartDownMs)),
                        "sinceRestart": reconnect.sinceRestart.json,
                        "afterGatewayBack": reconnect.afterBack.json,
                    ],
                    "memoryPerConnectionKiB": ["ws": .double((ws.kibPerConnection * 10).rounded() / 10), "wss": .double((wss.kibPerConnection * 10).rounded() / 10)],
                    "rounds": .int(Int64(rounds)), "connectionsHeld": .int(Int64(connections)),
                    "talkSpeakDecode": .object(Dictionary(uniqueKeysWithValues: speak.map { ($0.format, $0.json) })),
                    "chatSendMs": ["toAck": chat.toAck.percentilesJSON, "toFirstDelta": chat.toFirstDelta.percentilesJSON],
                ]
                return out.jsonText
            }
            if !printed {
                print("Connect to hello-ok (loopback, \(rounds) rounds): ws \(ws.connect.text), wss \(wss.connect.text)")
                print("Reconnect after a Gateway restart (down \(Self.restartDownMs) ms): \(reconnect.sinceRestart.text) since the restart, "
                      + "\(reconnect.afterBack.text) after it came back")
                print(String(format: "Memory per connection (%d held): ws %.0f KiB, wss %.0f KiB", connections, ws.kibPerConnection, wss.kibPerConnection))
                print("talk.speak decode CPU per second of audio (median): " + speak.map(\.text).joined(separator: ", "))
                print("chat.send (\(rounds) rounds): to ack \(chat.toAck.percentilesText); to first delta \(chat.toFirstDelta.percentilesText)")
            }
        }

        static let restartDownMs = 500

        /// Times of one kind; percentiles as every benchmark computes them (`BenchStatistics`), 0 for none.
        struct Stats {
            var values: [Double]
            func percentile(_ p: Double) -> Double { BenchStatistics.percentile(values, p) ?? 0 }
            var median: Double { percentile(0.5) }
            var p90: Double { percentile(0.9) }
            var minimum: Double { values.min() ?? 0 }
            var json: JSONValue { ["median": .double(round1(median)), "p90": .double(round1(p90)), "min": .double(round1(minimum))] }
            var text: String { String(format: "median %.1f ms (p90 %.1f, min %.1f)", median, p90, minimum) }
            func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        }

        /// Pairs a throwaway identity (kept under `root`) with the Gateway from its setup code.
        static func pair(with gateway: ReferenceGatewayProcess, under root: String, logger: Logger) async throws -> StoragePaths {
            let paths = StoragePaths.under(root)
            _ = try await GatewaySetup(paths: paths, version: "bench", logger: logger)
                .run(GatewaySetup.Request(code: try SetupCode.parse(gateway.startup.setupCode ?? "")),
                     hooks: .init(confirmTrust: { _, _ in false }, progress: { _ in }))
            return paths
        }

        /// Pairs once, then times fresh connects with the stored device token and holds `connections` open.
        static func measureConnects(tls: Bool, rounds: Int, connections: Int, repository: String, logger: Logger) async throws
            -> (connect: Stats, kibPerConnection: Double)
        {
            let gateway = try await ReferenceGatewayProcess.forBenchmark(
                repositoryRoot: repository, arguments: ["--print-setup-code", "--auto-approve"] + (tls ? ["--tls"] : []))
            defer { gateway.stop() }
            let root = try temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let paths = try await pair(with: gateway, under: root, logger: logger)
            let identity = try DeviceIdentity.loadOrCreate(paths: paths)
            let auth = await (try CredentialStore(paths: paths)).auth(for: .node)
            let open = WebSocketTransport.opener(
                endpoint: try GatewayEndpoint(parsing: gateway.startup.url), pin: gateway.startup.tlsFingerprint, logger: logger)
            let handshake = ConnectHandshake(profile: .node(displayName: "bench", version: "bench"), auth: auth, identity: identity)
            let sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

            var times: [Double] = []
            for _ in 0..<rounds {
                let start = ContinuousClock.now
                let transport = try await open()
                _ = try await handshake.perform(on: transport, sleep: sleep, logger: logger)
                times.append(milliseconds(ContinuousClock.now - start))
                await transport.close()
            }
            let before = residentKiB()
            var held: [any GatewayTransport] = []
            for _ in 0..<connections {
                let transport = try await open()
                _ = try await handshake.perform(on: transport, sleep: sleep, logger: logger)
                held.append(transport)
            }
            let after = residentKiB()
            for t in held { await t.close() }
            return (Stats(values: times), Double(after - before) / Double(connections))
        }

        /// Restarts the Gateway three times under a connected session and times the way back.
        static func measureReconnect(repository: String, logger: Logger) async throws -> (sinceRestart: Stats, afterBack: Stats) {
            let gateway = try await ReferenceGatewayProcess.forBenchmark(
                repositoryRoot: repository, arguments: ["--print-setup-code", "--auto-approve", "--tick-interval-ms", "1000"])
            defer { gateway.stop() }
            let root = try temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let paths = try await pair(with: gateway, under: root, logger: logger)
            let session = try GatewaySession.fromStoredSetup(paths: paths, version: "bench", logger: logger)
            return try await withThrowingTaskGroup(of: (Stats, Stats)?.self) { group in
                group.addTask {
                    await session.run()
                    return nil
                }
                group.addTask {
                    var since: [Double] = []
                    for _ in 0..<3 {
                        try await waitConnected(session.node)
                        try gateway.control("restart \(restartDownMs)")
                        let start = ContinuousClock.now
                        try await waitState(session.node) { if case .connected = $0 { false } else { true } }
                        try await waitConnected(session.node)
                        since.append(milliseconds(ContinuousClock.now - start))
                    }
                    return (Stats(values: since), Stats(values: since.map { max(0, $0 - Double(restartDownMs)) }))
                }
                defer { group.cancelAll() }
                while let r = try await group.next() { if let r { return r } }
                throw BenchError.sessionEnded
            }
        }

        static func waitConnected(_ c: GatewayConnection) async throws {
            try await waitState(c) { if case .connected = $0 { true } else { false } }
        }

        static func waitState(_ c: GatewayConnection, _ predicate: @Sendable (ConnectionState) -> Bool) async throws {
            for await s in await c.stateUpdates() where predicate(s) { return }
            throw BenchError.sessionEnded
        }

        static func milliseconds(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        }

        static func residentKiB() -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = text.split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
        }

        static func temporaryFolder() throws -> String {
            var template = Array((NSTemporaryDirectory() + "/openclaw-talk-bench-XXXXXX").utf8CString)
            guard let p = mkdtemp(&template) else { throw BenchError.noTemporaryFolder }
            return String(cString: p)
        }

        enum BenchError: Error, CustomStringConvertible {
            case sessionEnded
            case noTemporaryFolder
            case chatFailed(String)
            var description: String {
                switch self {
                case .sessionEnded: "The Gateway session ended during the benchmark; run setup against refgw by hand to see why."
                case .noTemporaryFolder: "Could not make a temporary folder for the benchmark's device identity."
                case .chatFailed(let why): "A benchmark transcript got no reply: \(why)"
                }
            }
        }
    }
}
