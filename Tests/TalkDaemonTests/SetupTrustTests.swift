import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Trusting a Gateway's self-signed certificate on first use, through the built `openclaw-talk setup`
/// against the reference Gateway over wss://: `--yes`, `--trust SHA256` (right and wrong), and the
/// terminal prompt. Whatever is refused leaves nothing behind in the config and state folders.
@Suite(.serialized) struct SetupTrustTests {
    static let token = "trust-test-secret"

    /// A wss:// reference Gateway that approves pairing by itself.
    private static func gateway() async throws -> ReferenceGatewayProcess {
        try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot,
                                        arguments: ["--tls", "--auto-approve", "--token", token])
        }
    }

    private static func setup(_ gw: ReferenceGatewayProcess, _ extra: [String]) -> [String] {
        ["setup", "--gateway", gw.startup.url, "--token", token] + extra
    }

    /// The pin `setup` stored in gateway.json.
    private static func storedPin(_ command: BuiltCommand) throws -> String? {
        let data = try Data(contentsOf: URL(fileURLWithPath: command.configFolder + "/gateway.json"))
        return JSONValue.parse(Array(data))?["tlsFingerprint"]?.stringValue
    }

    @Test(.requires(.builtBinary)) func `--yes trusts a first-seen certificate and pins it`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let fingerprint = try #require(gw.startup.tlsFingerprint)
        let r = try await command.run(Self.setup(gw, ["--yes"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("Connected to \(gw.startup.url)"))
        #expect(r.stderr.contains("Certificate pinned: SHA-256 \(CertificateFingerprint.display(fingerprint))"))
        #expect(try Self.storedPin(command) == fingerprint)
        #expect(!(r.stdout + r.stderr).contains(Self.token))
    }

    @Test(.requires(.builtBinary)) func `--trust with the certificate's fingerprint pins it`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let fingerprint = try #require(gw.startup.tlsFingerprint)
        // As a user pastes it: upper case with colons.
        let r = try await command.run(Self.setup(gw, ["--trust", CertificateFingerprint.display(fingerprint)]))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("Connected to \(gw.startup.url)"))
        #expect(try Self.storedPin(command) == fingerprint)
    }

    @Test(.requires(.builtBinary)) func `--trust with another fingerprint refuses the Gateway and stores nothing`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let fingerprint = try #require(gw.startup.tlsFingerprint)
        let wrong = String(fingerprint.map { $0 == "0" ? "1" : "0" })
        let r = try await command.run(Self.setup(gw, ["--trust", wrong]))
        #expect(r.status == 1, "stdout: \(r.stdout) stderr: \(r.stderr)")
        #expect(!r.stdout.contains("Connected"))
        // Both fingerprints are named, so the user can see which one the Gateway really has.
        let shown = r.stderr.lowercased().replacingOccurrences(of: ":", with: "")
        #expect(shown.contains(fingerprint) && shown.contains(wrong), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("Certificate pinned"), "a refused certificate is not reported as pinned")
        #expect(command.storedFiles().isEmpty, "stored: \(command.storedFiles())")
        #expect(!(r.stdout + r.stderr).contains(Self.token))
    }

    @Test(.requires(.builtBinary)) func `the prompt answered no on a terminal connects nowhere and stores nothing`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let fingerprint = try #require(gw.startup.tlsFingerprint)
        let r = try await command.run(Self.setup(gw, []), input: .terminal(answer: "n"))
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Trust and connect? [y/N]"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains(CertificateFingerprint.display(fingerprint)))
        #expect(r.stderr.contains("was not trusted"), "stderr: \(r.stderr)")
        #expect(!r.stdout.contains("Connected"))
        #expect(command.storedFiles().isEmpty, "stored: \(command.storedFiles())")
        #expect(!(r.stdout + r.stderr).contains(Self.token))
    }

    @Test(.requires(.builtBinary)) func `the prompt answered yes on a terminal pins the certificate`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(Self.setup(gw, []), input: .terminal(answer: "y"))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Trust and connect? [y/N]"))
        #expect(try Self.storedPin(command) == gw.startup.tlsFingerprint)
    }
}
