import Foundation
import TalkBench
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

    /// Swaps the Gateway's certificate (new connections get the new one); returns its fingerprint.
    private static func rotate(_ gw: ReferenceGatewayProcess) async throws -> String {
        let reply = try await offPool { try gw.control("rotate-cert") }
        return try #require(reply["tlsFingerprint"]?.stringValue)
    }

    @Test(.requires(.builtBinary)) func `a changed certificate is refused with both fingerprints, with and without --yes`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let old = try #require(gw.startup.tlsFingerprint)
        #expect(try await command.run(Self.setup(gw, ["--yes"])).status == 0)
        // The same certificate again: connects without a question.
        let same = try await command.run(Self.setup(gw, []), input: .terminal(answer: "n"))
        #expect(same.status == 0, "stderr: \(same.stderr)")
        #expect(!same.stderr.contains("[y/N]"), "asked about a certificate already pinned: \(same.stderr)")

        let new = try await Self.rotate(gw)
        for extra in [[], ["--yes"]] {
            let r = try await command.run(Self.setup(gw, extra), input: .terminal(answer: "y"))
            #expect(r.status == 1, "\(extra): stderr: \(r.stderr)")
            #expect(r.stderr.contains("has changed"), "\(extra): stderr: \(r.stderr)")
            #expect(r.stderr.contains(CertificateFingerprint.display(old)) && r.stderr.contains(CertificateFingerprint.display(new)),
                    "\(extra): both fingerprints must be shown: \(r.stderr)")
            #expect(!r.stderr.contains("first-time") && !r.stderr.contains("[y/N]"), "\(extra): stderr: \(r.stderr)")
            #expect(!r.stdout.contains("Connected"))
            #expect(try Self.storedPin(command) == old)
        }
        // Named explicitly, the new certificate replaces the pin.
        let replaced = try await command.run(Self.setup(gw, ["--trust", new]))
        #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
        #expect(replaced.stderr.contains("Replacing the pinned certificate"), "stderr: \(replaced.stderr)")
        #expect(try Self.storedPin(command) == new)
    }

    @Test(.requires(.builtBinary)) func `--replace-pin asks about the change with both fingerprints, not as a first-time certificate`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let old = try #require(gw.startup.tlsFingerprint)
        #expect(try await command.run(Self.setup(gw, ["--yes"])).status == 0)
        let new = try await Self.rotate(gw)
        let declined = try await command.run(Self.setup(gw, ["--replace-pin"]), input: .terminal(answer: "n"))
        #expect(declined.status == 1)
        #expect(try Self.storedPin(command) == old)
        let r = try await command.run(Self.setup(gw, ["--replace-pin"]), input: .terminal(answer: "y"))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("different certificate from the one pinned"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains(CertificateFingerprint.display(old)) && r.stderr.contains(CertificateFingerprint.display(new)))
        #expect(!r.stderr.contains("first-time"), "stderr: \(r.stderr)")
        #expect(try Self.storedPin(command) == new)
    }

    @Test(.requires(.builtBinary)) func `--replace-pin without a terminal needs --yes or --trust, and --yes then replaces the pin`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let old = try #require(gw.startup.tlsFingerprint)
        #expect(try await command.run(Self.setup(gw, ["--yes"])).status == 0)
        let new = try await Self.rotate(gw)
        let unanswered = try await command.run(Self.setup(gw, ["--replace-pin"]))
        #expect(unanswered.status == 1)
        #expect(unanswered.stderr.contains("--trust \(new)"), "stderr: \(unanswered.stderr)")
        #expect(try Self.storedPin(command) == old)
        let replaced = try await command.run(Self.setup(gw, ["--replace-pin", "--yes"]))
        #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
        #expect(try Self.storedPin(command) == new)
    }

    @Test(.requires(.builtBinary)) func `a setup code's pin and a different --trust are a conflict, shown with both`() async throws {
        let gw = try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--tls", "--auto-approve", "--print-setup-code"])
        }
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let pinned = try #require(gw.startup.tlsFingerprint)
        let other = String(pinned.map { $0 == "0" ? "1" : "0" })
        let r = try await command.run(["setup", "-", "--trust", other], input: .text((gw.startup.setupCode ?? "") + "\n"))
        #expect(r.status == 1, "stdout: \(r.stdout) stderr: \(r.stderr)")
        #expect(r.stderr.contains(CertificateFingerprint.display(pinned)) && r.stderr.contains(CertificateFingerprint.display(other)),
                "stderr: \(r.stderr)")
        #expect(!r.stdout.contains("Connected"))
        #expect(command.storedFiles().isEmpty, "stored: \(command.storedFiles())")
    }
}
