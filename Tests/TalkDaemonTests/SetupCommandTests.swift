import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk setup` run as a real process against the reference Gateway: what a user sees on
/// stdout and stderr, the exit status, and that no secret ever shows up there.
@Suite(.serialized) struct SetupCommandTests {
    static func tempHome() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/oct-cmd-XXXXXX").utf8CString)
        guard let p = mkdtemp(&template) else { throw StorageError.io(path: "mkdtemp", errno: errno) }
        return String(cString: p)
    }

    @Test func `setup from a code read on stdin pairs, prints the Gateway version and shows no secret`() async throws {
        let gw = try await offPool { try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--tls", "--print-setup-code", "--remote"]) }
        defer { gw.stop() }
        let home = try Self.tempHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let approver = Task {   // the node's request, then the operator's
            var approved = 0
            for _ in 0..<750 where approved < 2 {
                approved += try gw.control("approve")["approved"]?.arrayValue?.count ?? 0
                try await Task.sleep(for: .milliseconds(20))
            }
            return approved
        }
        let code = gw.startup.setupCode ?? ""
        let r = try await BuiltCommand(home: home).run(["setup", "-", "--display-name", "cmd test"], input: .text(code + "\n"))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(try await approver.value == 2)
        #expect(r.stdout.hasPrefix("Connected to \(gw.startup.url) (Gateway \(gw.startup.version))"))
        #expect(r.stderr.contains("openclaw devices approve "))
        let tokens = try String(contentsOfFile: home + "/state/openclaw-talk/device-tokens.json", encoding: .utf8)
        let identity = try String(contentsOfFile: home + "/state/openclaw-talk/device-identity.json", encoding: .utf8)
        let secrets = [code, gw.startup.bootstrapToken ?? "?"]
            + (JSONValue.parse(Array(tokens.utf8))?["deviceTokens"]?.objectValue?.values.compactMap { $0["deviceToken"]?.stringValue } ?? [])
            + [JSONValue.parse(Array(identity.utf8))?["privateKey"]?.stringValue ?? "?"]
        #expect(secrets.count == 5)
        for s in secrets { #expect(!(r.stdout + r.stderr).contains(s), "a secret was printed") }
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        let violations = try gw.control("violations")
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }

    @Test func `an untrusted certificate without a terminal or a flag names the flag to use`() async throws {
        let gw = try await offPool { try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--tls", "--auto-approve", "--token", "shared-secret"]) }
        defer { gw.stop() }
        let home = try Self.tempHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try await BuiltCommand(home: home).run(["setup", "--gateway", gw.startup.url, "--token", "shared-secret"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("--trust \(gw.startup.tlsFingerprint ?? "?")"))
        #expect(r.stderr.contains("--yes"))
        #expect(!(r.stdout + r.stderr).contains("shared-secret"))
        // With --trust it goes through, pinning the certificate.
        let ok = try await BuiltCommand(home: home).run(["setup", "--gateway", gw.startup.url, "--token", "shared-secret", "--trust", gw.startup.tlsFingerprint ?? ""])
        #expect(ok.status == 0, "stderr: \(ok.stderr)")
        #expect(ok.stdout.contains("Connected to \(gw.startup.url)"))
        #expect(!(ok.stdout + ok.stderr).contains("shared-secret"))
    }

    @Test(arguments: [
        (["setup"], "Give a setup code, or --gateway URL"),
        (["setup", "not-a-code!!"], "not valid base64url"),
        (["setup", "ws://203.0.113.9:18789", "--token", "t"], "unencrypted ws:// connection is refused"),
        (["setup", "--gateway", "wss://127.0.0.1:1"], "No credential"),
    ])
    func `bad input is a usage error that says what was wrong`(_ args: [String], _ message: String) async throws {
        let home = try Self.tempHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try await BuiltCommand(home: home).run(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
    }
}
