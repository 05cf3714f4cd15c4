import Foundation
import SessionBridge
import TalkLogging

/// `bench gateway`'s measurements against a reference Gateway each one starts itself: connect time to hello-ok (ws
/// and wss on loopback), reconnect time after a Gateway restart, memory per connection, `talk.speak` decode cost per
/// format (+Speak) and `chat.send` to ack / first delta (+Chat). The command only parses, calls `measure` and prints.
package enum GatewayBenchmark {
    /// Every figure of one run.
    package struct Figures: Sendable {
        package var rounds: Int
        package var connections: Int
        package var ws: (connect: Stats, kibPerConnection: Double)
        package var wss: (connect: Stats, kibPerConnection: Double)
        package var reconnect: (sinceRestart: Stats, afterBack: Stats)
        package var speak: [SpeakDecodeFigure]
        package var chat: (toAck: Stats, toFirstDelta: Stats)

        /// The report `--json` prints (the README's figures, `BenchCommandLineTests`).
        package var json: JSONValue {
            [
                "connectToHelloOkMs": ["ws": ws.connect.json, "wss": wss.connect.json],
                "reconnectAfterRestartMs": [
                    "gatewayDownMs": .int(Int64(restartDownMs)),
                    "sinceRestart": reconnect.sinceRestart.json,
                    "afterGatewayBack": reconnect.afterBack.json,
                ],
                "memoryPerConnectionKiB": ["ws": .double((ws.kibPerConnection * 10).rounded() / 10), "wss": .double((wss.kibPerConnection * 10).rounded() / 10)],
                "rounds": .int(Int64(rounds)), "connectionsHeld": .int(Int64(connections)),
                "talkSpeakDecode": .object(Dictionary(uniqueKeysWithValues: speak.map { ($0.format, $0.json) })),
                "chatSendMs": ["toAck": chat.toAck.percentilesJSON, "toFirstDelta": chat.toFirstDelta.percentilesJSON],
            ]
        }

        /// The report in words, a line a figure.
        package var lines: [String] {
            [
                "Connect to hello-ok (loopback, \(rounds) rounds): ws \(ws.connect.text), wss \(wss.connect.text)",
                "Reconnect after a Gateway restart (down \(restartDownMs) ms): \(reconnect.sinceRestart.text) since the restart, "
                    + "\(reconnect.afterBack.text) after it came back",
                String(format: "Memory per connection (%d held): ws %.0f KiB, wss %.0f KiB", connections, ws.kibPerConnection, wss.kibPerConnection),
                "talk.speak decode CPU per second of audio (median): " + speak.map(\.text).joined(separator: ", "),
                "chat.send (\(rounds) rounds): to ack \(chat.toAck.percentilesText); to first delta \(chat.toFirstDelta.percentilesText)",
            ]
        }
    }

    /// Runs every measurement: `rounds` connects per scheme and `chat.send` rounds, `connections` held open at once.
    package static func measure(rounds: Int, connections: Int, repository: String, logger: Logger) async throws -> Figures {
        let ws = try await measureConnects(tls: false, rounds: rounds, connections: connections, repository: repository, logger: logger)
        let wss = try await measureConnects(tls: true, rounds: rounds, connections: connections, repository: repository, logger: logger)
        let reconnect = try await measureReconnect(repository: repository, logger: logger)
        let speak = try await measureSpeakDecode(rounds: 10, repository: repository, logger: logger)
        let chat = try await measureChat(rounds: rounds, repository: repository, logger: logger)
        return Figures(rounds: rounds, connections: connections, ws: ws, wss: wss, reconnect: reconnect, speak: speak, chat: chat)
    }

    /// How long the Gateway stays down in each restart of the reconnect figure.
    package static let restartDownMs = 500

    /// Times of one kind; percentiles as every benchmark computes them (`BenchStatistics`), 0 for none.
    package struct Stats: Sendable {
        package var values: [Double]
        package init(values: [Double]) { self.values = values }
        package func percentile(_ p: Double) -> Double { BenchStatistics.percentile(values, p) ?? 0 }
        package var median: Double { percentile(0.5) }
        package var p90: Double { percentile(0.9) }
        package var minimum: Double { values.min() ?? 0 }
        package var json: JSONValue { ["median": .double(round1(median)), "p90": .double(round1(p90)), "min": .double(round1(minimum))] }
        package var text: String { String(format: "median %.1f ms (p90 %.1f, min %.1f)", median, p90, minimum) }
        func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
    }

    /// Pairs a throwaway identity (kept under `root`) with the Gateway from its setup code.
    package static func pair(with gateway: ReferenceGatewayProcess, under root: String, logger: Logger) async throws -> StoragePaths {
        let paths = StoragePaths.under(root)
        _ = try await GatewaySetup(paths: paths, version: "bench", logger: logger)
            .run(GatewaySetup.Request(code: try SetupCode.parse(gateway.startup.setupCode ?? "")),
                 hooks: .init(confirmTrust: { _, _ in false }, progress: { _ in }))
        return paths
    }

    /// Pairs once, then times fresh connects with the stored device token and holds `connections` open.
    package static func measureConnects(tls: Bool, rounds: Int, connections: Int, repository: String, logger: Logger) async throws
        -> (connect: Stats, kibPerConnection: Double)
    {
        let gateway = try await ReferenceGatewayProcess.forBenchmark(
            repositoryRoot: repository, arguments: ["--print-setup-code", "--auto-approve"] + (tls ? ["--tls"] : []))
        defer { gateway.stop() }
        let root = try BenchFolder.temporary()
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
    package static func measureReconnect(repository: String, logger: Logger) async throws -> (sinceRestart: Stats, afterBack: Stats) {
        let gateway = try await ReferenceGatewayProcess.forBenchmark(
            repositoryRoot: repository, arguments: ["--print-setup-code", "--auto-approve", "--tick-interval-ms", "1000"])
        defer { gateway.stop() }
        let root = try BenchFolder.temporary()
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

    package static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    static func residentKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    package enum BenchError: Error, CustomStringConvertible {
        case sessionEnded
        case chatFailed(String)
        package var description: String {
            switch self {
            case .sessionEnded: "The Gateway session ended during the benchmark; run setup against refgw by hand to see why."
            case .chatFailed(let why): "A benchmark transcript got no reply: \(why)"
            }
        }
    }
}
