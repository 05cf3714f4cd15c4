import Foundation
import Glibc
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `start` hands the Gateway's token to the detached daemon: from standard input (`--token-file -`) as from the
/// command line, the daemon connects with it, and its command line (what every user sees in ps) never holds it.
/// Its name ends in DaemonServiceTests: it runs in `make test`'s pass with the other daemon suites.
@Suite(.serialized) struct SecretStartDaemonServiceTests {
    enum Way: String, CaseIterable, Sendable { case standardInput, flag }

    @Test(.requires(.builtBinary), arguments: Way.allCases)
    func `start gives the daemon its token without putting it in its argv`(_ way: Way) async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let token = DaemonHarness.token
        var arguments = ["start", "--gateway", h.gateway.startup.url] + (try h.fileDevices)
        var input = BuiltCommand.Input.none
        switch way {
        case .standardInput:
            arguments += ["--token-file", "-"]
            input = .text(token + "\n")
        case .flag:
            arguments += ["--token", token]
        }
        let r = try await h.command.start(arguments, input: input).finish(timeout: .seconds(120))
        try #require(r.status == 0, "start: \(r.stdout) \(r.stderr)\nlog: \(h.log)")
        let digits = r.stdout.split(separator: "pid ").dropFirst().first.map { String($0.prefix { $0.isNumber }) }
        let pid = try #require(digits.flatMap { Int32($0) }, "start printed: \(r.stdout)")
        defer { kill(pid, SIGTERM) }
        #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "log: \(h.log)")
        let shown = ProcessView.commandLine(pid)
        #expect(shown.contains(" run"), "not the daemon: \(shown)")
        #expect(!shown.contains(token), "the token is in the daemon's argv: \(shown)")
        #expect(!h.log.contains(token))
    }
}
