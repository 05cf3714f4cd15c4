import Foundation
import Synchronization
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Against the reference Gateway over real sockets (ws:// and wss:// on loopback).
@Suite(.serialized) struct GatewayIntegrationTests {
    static let fastTiming: GatewayConnection.Timing = {
        var t = GatewayConnection.Timing()
        t.backoff = Backoff(initial: 0.1, maximum: 1)
        t.challengeTimeout = .seconds(3)
        return t
    }()

    struct Harness {
        let gateway: ReferenceGatewayProcess
        let root: TempDir
        let logs = InMemoryLogHandler.Store()
        var paths: StoragePaths { StoragePaths.under(root.path) }
        var logger: Logger { Logger(label: "test", handler: InMemoryLogHandler(store: logs)) }

        init(_ args: [String]) throws {
            gateway = try ReferenceGatewayProcess(args)
            root = try TempDir()
        }

        /// Starts refgw off the cooperative pool (its start-up blocks on Python's imports).
        static func start(_ args: [String]) async throws -> Harness {
            let gateway = try await offPool { try ReferenceGatewayProcess(args) }
            return try Harness(gateway: gateway)
        }

        private init(gateway: ReferenceGatewayProcess) throws {
            self.gateway = gateway
            root = try TempDir()
        }

        func setup(code: SetupCode, trust: @escaping @Sendable (String, String) async -> Bool? = { _, _ in nil },
                   assumeYes: Bool = false) async throws -> GatewaySetup.Outcome {
            var s = GatewaySetup(paths: paths, version: "0.1.0-test", logger: logger)
            s.timing = GatewayIntegrationTests.fastTiming
            var request = GatewaySetup.Request(code: code)
            request.assumeYes = assumeYes
            request.displayName = "test box"
            return try await s.run(request, hooks: .init(confirmTrust: trust, progress: { _ in }))
        }

        /// Secrets that must never show up in logs.
        func expectNoSecretsLogged(_ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
            var secrets = extra
            if let b = gateway.startup.bootstrapToken { secrets.append(b) }
            if let bytes = try SecureStore.readFile(paths.tokensFile), let json = JSONValue.parse(bytes) {
                for (_, t) in json["deviceTokens"]?.objectValue ?? [:] { if let s = t["deviceToken"]?.stringValue { secrets.append(s) } }
            }
            if let bytes = try SecureStore.readFile(paths.identityFile), let key = JSONValue.parse(bytes)?["privateKey"]?.stringValue {
                secrets.append(key)
            }
            let text = logs.text
            for s in secrets where !s.isEmpty { #expect(!text.contains(s), "a secret was logged", sourceLocation: sourceLocation) }
        }
    }

    /// The state `predicate` picks, as soon as the connection reaches it; nil if it stopped first or `within`
    /// passed. The default bound only catches a connection that never gets there: a connect on a loaded 2-core
    /// machine (pass 1: eight suites, each with a Python Gateway) took longer than the 5 s it was (TalkSpeechTests).
    static func waitFor(_ c: GatewayConnection, within: Duration = .seconds(30),
                        _ predicate: @escaping @Sendable (ConnectionState) -> Bool) async -> ConnectionState? {
        let updates = await c.stateUpdates()
        return try? await withDeadline(within, sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            for await s in updates where predicate(s) { return ConnectionState?.some(s) }
            return ConnectionState?.none  // the connection stopped without ever matching
        } ?? nil
    }

    static func connected(_ s: ConnectionState) -> Bool { if case .connected = s { true } else { false } }

    @Test func `first pairing from a setup code over wss asks to trust the certificate and waits for approval`() async throws {
        // A remote Gateway: the node's request, then the operator's (a role upgrade), each approved by the owner.
        let h = try await Harness.start(["--tls", "--print-setup-code", "--tick-interval-ms", "500", "--remote"])
        let startup = h.gateway.startup
        // A code without a pin, so the certificate must be confirmed by the user.
        var code = try SetupCode.parse(#"{"url":"\#(startup.url)","bootstrapToken":"\#(startup.bootstrapToken ?? "")"}"#)
        #expect(code.tlsFingerprint == nil)
        code.tlsFingerprint = nil
        let asked = Mutex<[String]>([])
        let approver = Task { try await h.gateway.approveRequests(count: 2) }
        let outcome = try await h.setup(code: code, trust: { _, fp in
            asked.withLock { $0.append(fp) }
            return true
        })
        #expect(try await approver.value.count == 2, "setup had to wait for two pairing approvals, node then operator")
        #expect(asked.withLock { $0 } == [startup.tlsFingerprint ?? "?"])
        #expect(outcome.serverVersion == startup.version)
        #expect(outcome.pinnedFingerprint == startup.tlsFingerprint)
        #expect(outcome.operatorConnected)
        #expect(outcome.operatorScopes.contains("operator.write"))
        #expect(try GatewayConfig.load(paths: h.paths)?.tlsFingerprint == startup.tlsFingerprint)
        var st = stat()
        stat(h.paths.tokensFile, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        try h.expectNoSecretsLogged()
        try h.gateway.expectNoViolations()
    }

    @Test func `a stored device token reconnects without the setup code or another approval`() async throws {
        let h = try await Harness.start(["--tls", "--print-setup-code", "--auto-approve", "--tick-interval-ms", "500"])
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        #expect(try await h.gateway.control("approve")["approved"]?.arrayValue?.isEmpty == true)
        let session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test", timing: Self.fastTiming, logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        #expect(await Self.waitFor(session.node, Self.connected) != nil)
        #expect(await Self.waitFor(session.operatorConnection, Self.connected) != nil)
        let reply = try await session.operatorConnection.request(method: "system-presence")
        #expect(reply != nil)
        #expect(try await h.gateway.control("pending")["pending"]?.arrayValue?.isEmpty == true)
        try h.expectNoSecretsLogged()
        try h.gateway.expectNoViolations()
    }

    @Test func `a certificate that does not match the pin is refused, showing both fingerprints`() async throws {
        let h = try await Harness.start(["--tls", "--print-setup-code", "--auto-approve"])
        var code = try SetupCode.parse(h.gateway.startup.setupCode ?? "")
        code.tlsFingerprint = String(repeating: "ab", count: 32)
        do {
            _ = try await h.setup(code: code)
            Issue.record("setup connected despite a wrong pin")
        } catch {
            #expect("\(error)".contains(String(repeating: "ab", count: 32)))
            #expect("\(error)".contains(h.gateway.startup.tlsFingerprint ?? "?"))
        }
        #expect(try await h.gateway.control("devices")["devices"]?.arrayValue?.isEmpty == true)
    }

    @Test func `without a terminal or a flag an untrusted certificate stops with the flag to use`() async throws {
        let h = try await Harness.start(["--tls", "--print-setup-code", "--auto-approve"])
        let code = try SetupCode.parse(#"{"url":"\#(h.gateway.startup.url)","bootstrapToken":"\#(h.gateway.startup.bootstrapToken ?? "")"}"#)
        await #expect(throws: SetupError.trustNeedsAnswer(fingerprint: h.gateway.startup.tlsFingerprint ?? "")) {
            _ = try await h.setup(code: code)
        }
    }

    @Test func `plaintext to a public host is refused before any packet is sent`() async throws {
        #expect(throws: SetupCodeError.plaintextNotAllowed(host: "203.0.113.7")) { _ = try SetupCode.parse("ws://203.0.113.7:18789") }
        let open = WebSocketTransport.opener(endpoint: try GatewayEndpoint(parsing: "ws://203.0.113.7:18789"), pin: nil,
                                             logger: Logger(label: "t", handler: InMemoryLogHandler()))
        do {
            _ = try await open()
            Issue.record("connected in plaintext to a public address")
        } catch let failure as TransportFailure {
            #expect(failure.isPermanent)
            #expect(failure.message.contains("203.0.113.7"))
        }
    }

    @Test func `stopped ticks are noticed within twice the tick interval and the socket comes back`() async throws {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve", "--tick-interval-ms", "300"])
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        let session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test", timing: Self.fastTiming, logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        #expect(await Self.waitFor(session.node, Self.connected) != nil)
        try await h.gateway.control("stop-ticks")
        let stopped = ContinuousClock.now
        let lost = await Self.waitFor(session.node) { if case .reconnecting = $0 { true } else { false } }
        #expect(lost != nil)
        // 2 x 300 ms of silence, plus up to a quarter tick for the check: about 700 ms. The bound catches a
        // watchdog that waits many ticks, not a late scheduler (a loaded machine adds seconds).
        #expect(ContinuousClock.now - stopped < .seconds(4))
        try await h.gateway.control("start-ticks")
        #expect(await Self.waitFor(session.node, Self.connected) != nil)
        try h.gateway.expectNoViolations()
    }

    @Test func `after a Gateway restart the sockets are connected again within two seconds of it coming back`() async throws {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve", "--tick-interval-ms", "500"])
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        let session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test", logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        #expect(await Self.waitFor(session.node, Self.connected) != nil)
        #expect(await Self.waitFor(session.operatorConnection, Self.connected) != nil)
        try await h.gateway.control("restart 800")
        #expect(await Self.waitFor(session.node) { !Self.connected($0) } != nil)
        // When the Gateway listens again (polled on its control port), the clock starts.
        var back = ContinuousClock.now
        for _ in 0..<300 {
            if try await h.gateway.control("status")["listening"] == .bool(true) { break }
            try await Task.sleep(for: .milliseconds(10))
            back = ContinuousClock.now
        }
        #expect(await Self.waitFor(session.node, within: .seconds(6), Self.connected) != nil)
        #expect(ContinuousClock.now - back < .seconds(2), "reconnected \(ContinuousClock.now - back) after the Gateway came back")
        #expect(await Self.waitFor(session.operatorConnection, within: .seconds(3), Self.connected) != nil)
        try h.gateway.expectNoViolations()
    }

    @Test func `a Gateway that only verifies v2 proofs is joined through the v2 fallback`() async throws {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve", "--signature-versions", "v2"])
        let outcome = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        #expect(outcome.serverVersion == h.gateway.startup.version)
        #expect(outcome.operatorConnected)
        try h.gateway.expectNoViolations()
    }

    @Test func `a Gateway that is still starting is retried after the time it asks for`() async throws {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve"])
        try await h.gateway.control("unavailable 4 300")   // both sockets connect at once: two each
        let start = ContinuousClock.now
        let outcome = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        #expect(outcome.serverVersion == h.gateway.startup.version)
        #expect(ContinuousClock.now - start >= .milliseconds(600), "both retryAfterMs waits were honoured")
        try h.gateway.expectNoViolations()
    }
}
