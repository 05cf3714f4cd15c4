import Foundation
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk setup` as a transaction, through the built binary and two reference Gateways: a setup
/// for Gateway B that fails or is interrupted leaves the working setup for Gateway A exactly as it was
/// (and A still connects with it); refusals retrying cannot fix end setup at once; transient failures
/// end after --timeout.
@Suite(.serialized) struct SetupTransactionTests {
    static let tokenA = "gateway-a-token"
    static let tokenB = "gateway-b-token"

    static func gateway(_ arguments: [String]) async throws -> ReferenceGatewayProcess {
        try await offPool { try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: arguments) }
    }

    /// Every stored file and its bytes.
    static func stored(_ command: BuiltCommand) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: command.storedFiles().map {
            ($0, FileManager.default.contents(atPath: command.home + "/" + $0) ?? Data())
        })
    }

    /// A token file only its owner can read, as a user would keep one.
    static func tokenFile(_ command: BuiltCommand, _ token: String, name: String = "token") throws -> String {
        let path = command.home + "/" + name
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return path
    }

    /// Set up with Gateway A (auto-approving), as a user who has a working setup.
    static func workingSetup(_ a: ReferenceGatewayProcess, _ command: BuiltCommand) async throws {
        let r = try await command.run(["setup", "--gateway", a.startup.url, "--token-file", try tokenFile(command, tokenA, name: "a")])
        try #require(r.status == 0, "stderr: \(r.stderr)")
    }

    /// Connects with what setup stored, as `run` does, and says whether Gateway `expected` accepted it.
    static func storedSetupConnects(_ command: BuiltCommand, to expected: ReferenceGatewayProcess) async throws -> Bool {
        let paths = StoragePaths.under(command.home)
        let session = try GatewaySession.fromStoredSetup(paths: paths, version: "0.1.0-test", logger: Logger(label: "test"))
        let run = Task { await session.run() }
        defer { run.cancel() }
        let updates = await session.node.stateUpdates()
        let connected = try await withDeadline(.seconds(20), sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            for await s in updates { if case .connected = s { return true } else if case .disconnected = s { return false } }
            return false
        } ?? false
        guard connected else { return false }
        let clients = try await offPool { try expected.control("clients") }["clients"]?.arrayValue ?? []
        return clients.contains { $0["authenticated"]?.boolValue == true && $0["role"]?.stringValue == "node" }
    }

    @Test(.requires(.builtBinary)) func `a setup refused by another Gateway leaves the previous setup working`() async throws {
        let a = try await Self.gateway(["--token", Self.tokenA, "--auto-approve"])
        defer { a.stop() }
        let b = try await Self.gateway(["--token", Self.tokenB, "--auto-approve"])
        defer { b.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        try await Self.workingSetup(a, command)
        let before = Self.stored(command)

        // The wrong token for B: refused, and retrying cannot fix that, so setup ends at once.
        let started = ContinuousClock.now
        let r = try await command.run(["setup", "--gateway", b.startup.url, "--token-file", try Self.tokenFile(command, "not-b-token")])
        #expect(r.status == 1, "stdout: \(r.stdout) stderr: \(r.stderr)")
        #expect(r.stderr.contains("rejected the token"), "stderr: \(r.stderr)")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(Self.stored(command).filter { $0.key != "token" } == before, "the previous setup's files changed")
        #expect(try await Self.storedSetupConnects(command, to: a))
    }

    @Test(.requires(.builtBinary)) func `a setup interrupted while waiting for approval leaves the previous setup working`() async throws {
        let a = try await Self.gateway(["--token", Self.tokenA, "--auto-approve"])
        defer { a.stop() }
        let b = try await Self.gateway(["--token", Self.tokenB, "--remote"])  // approves nothing
        defer { b.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        try await Self.workingSetup(a, command)
        let before = Self.stored(command)

        let running = try command.start(["setup", "--gateway", b.startup.url, "--token-file", try Self.tokenFile(command, Self.tokenB)])
        #expect(await running.waitForStderr("Pairing request for the"), "stderr: \(running.stderrSoFar)")
        kill(running.process.processIdentifier, SIGINT)  // Ctrl-C
        let r = try await running.finish(timeout: .seconds(20))
        #expect(r.status != 0)
        #expect(Self.stored(command).filter { $0.key != "token" } == before, "the previous setup's files changed")
        #expect(try await Self.storedSetupConnects(command, to: a))
    }

    @Test(.requires(.builtBinary)) func `a 404 upgrade ends setup at once, its status line neutralised`() async throws {
        let gw = try await Self.gateway(["--token", Self.tokenA, "--auto-approve"])
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let refusal: JSONValue = ["cmd": "upgrade-status", "status": 404, "reason": "Not Found\u{1B}[2J\u{1B}]0;owned\u{07}"]
        _ = try await offPool { try gw.control(refusal.jsonText) }
        let started = ContinuousClock.now
        let r = try await command.start(["setup", "--gateway", gw.startup.url, "--token-file", try Self.tokenFile(command, Self.tokenA)])
            .finish(timeout: .seconds(40))
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(ContinuousClock.now - started < .seconds(30), "setup kept retrying a 404")
        #expect(r.stderr.contains(#"404 Not Found\u{1B}[2J\u{1B}]0;owned\u{7}"#), "stderr: \(r.stderr)")
        #expect(!r.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "raw escape reached the terminal")
        #expect(command.storedFiles().filter { $0 != "token" }.allSatisfy { $0.contains("device-identity") })
    }

    @Test(.requires(.builtBinary)) func `an unreachable Gateway is retried until --timeout, then setup says why it gave up`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let port = try Self.closedPort()
        let started = ContinuousClock.now
        let r = try await command.start(["setup", "--gateway", "ws://127.0.0.1:\(port)", "--token-file",
                                         try Self.tokenFile(command, Self.tokenA), "--timeout", "3"]).finish(timeout: .seconds(40))
        let elapsed = ContinuousClock.now - started
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Gave up after 3 s"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Not connected yet"), "the retries were not shown: \(r.stderr)")
        #expect(elapsed >= .seconds(3) && elapsed < .seconds(30))
    }

    /// A loopback port nothing listens on (bound, then closed).
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
        }
        guard status == 0 else { throw CommandFailure("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
