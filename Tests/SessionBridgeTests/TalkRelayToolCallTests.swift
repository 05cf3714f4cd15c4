import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A realtime relay's tool calls answered by `TalkRelayClient.answerToolCall` against the reference Gateway: the
/// consult tool through the agent's run (`talk.client.toolCall`, its `chat` final handed back as `{text}`), the
/// control tool through `talk.session.steer`, whose result goes back as it came.
@Suite(.serialized) struct TalkRelayToolCallTests {
    /// A realtime client whose relay has heard one turn and asked for the tool call `toolCall` (JSON).
    static func toolCall(_ toolCall: String, texts: String) async throws
        -> (TalkGatewayHarness, TalkGatewayHarness.Connected, TalkRelayClient, TalkRelayEvent)
    {
        let (h, op) = try await TalkRelayClientTests.start()
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": [\#(texts)], "audioPace": 0.3, "toolCall": \#(toolCall)}"#)
        var settings = TalkRelayClient.Settings()
        settings.sessionKey = "agent:main:main"
        let client = TalkRelayClient(gateway: op.connection, mode: .realtime, settings: settings, logger: h.logger)
        let events = await client.events()
        _ = try await client.ensureSession()
        try await TalkRelayClientTests.stream(try TalkRelayClientTests.speechBytes(), to: client)
        let seen = try #require(await TalkRelayClientTests.collect(events) { if case .toolCall = $0.kind { true } else { false } })
        return (h, op, client, try #require(seen.last))
    }

    @Test func `a consult tool call is answered by the agent's run`() async throws {
        let (h, op, client, call) = try await Self.toolCall(
            #"{"name": "openclaw_agent_consult", "args": {"question": "time?"}}"#, texts: #""what time is it""#)
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "chat-script", "reply": "it is noon"}"#)
        guard case .toolCall(let callId, let name, let args, _) = call.kind else { return }
        #expect(await client.answerToolCall(callId: callId, name: name, args: args) == .success("it is noon"))
        let log = try await h.gateway.control("relay-log")["log"]?.arrayValue ?? []
        #expect(log.first { $0["kind"] == "consult" }?["sessionKey"] == "agent:main:main")
        let result = log.first { $0["kind"] == "tool-result" }
        #expect(result?["result"] == ["text": "it is noon"], "\(String(describing: result))")
        await client.close()
        try h.gateway.expectNoViolations()
    }

    @Test func `a control tool call goes to talk.session.steer and its result is handed back`() async throws {
        let (h, op, client, call) = try await Self.toolCall(
            #"{"name": "openclaw_agent_control", "args": {"mode": "status", "text": "status"}}"#, texts: #""are you on it""#)
        defer { op.stop() }
        guard case .toolCall(let callId, let name, let args, _) = call.kind else { return }
        let answer = await client.answerToolCall(callId: callId, name: name, args: args)
        if case .failure(let error) = answer { Issue.record("the control tool call failed: \(error)") }
        let log = try await h.gateway.control("relay-log")["log"]?.arrayValue ?? []
        let steer = log.first { $0["kind"] == "steer" }
        #expect(steer?["mode"] == "status" && steer?["text"] == "status" && steer?["sessionKey"] == "agent:main:main", "\(String(describing: steer))")
        #expect(!log.contains { $0["kind"] == "consult" }, "the control tool went out as a consult: \(log)")
        let result = log.first { $0["kind"] == "tool-result" }
        #expect(result?["result"]?["mode"] == "status" && result?["result"]?["active"] == false, "\(String(describing: result))")
        await client.close()
        try h.gateway.expectNoViolations()   // and no violation: refgw records a control answered without a steer
    }
}
