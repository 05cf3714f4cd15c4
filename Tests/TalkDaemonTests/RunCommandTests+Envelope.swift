import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run` against an agent that answers Talk in response-envelope form (the reference Gateway's `chat-script
/// envelope`, as TalkResponseEnvelope.swift reads it): only `response` is spoken, while the events keep the
/// reply's whole text. In RunCommandTests, so it runs in `make test`'s second pass with the other recognition suites.
extension RunCommandTests {
    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a reply in envelope form speaks its response only; replyFinal carries the whole envelope`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "envelope": true}"#) }["ok"] == true)
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(try RunCommandTests.arguments(gw, output: command.home + "/out.wav", extra: ["--max-turns", "1"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let events = RunCommandTests.events(r.stdout)
        let spoken = events.filter { $0["event"] == "speakingStarted" }.compactMap { $0["sentence"]?.stringValue }
        #expect(spoken == ["echo: \(RunCommandTests.spoken)"], "spoken: \(spoken)")
        let final = try #require(events.first { $0["event"] == "replyFinal" }?["text"]?.stringValue)
        let envelope = try #require(JSONValue.parse(Array(final.utf8)), "replyFinal: \(final)")
        #expect(envelope["display"]?.stringValue == "(shown, not spoken) echo: \(RunCommandTests.spoken)", "\(final)")
        #expect(events.first { $0["event"] == "speakingStopped" }?["completed"] == true)
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await offPool { try gw.control("violations") }["count"] == 0)
    }
}
