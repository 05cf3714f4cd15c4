import Foundation
import Synchronization
import Testing

@testable import SessionBridge

/// A transcript whose ack was lost is sent again with its idempotency key; a Gateway that finished its run meanwhile
/// answers with the stored result (chat.ts): `ok` or `completed` (delivered: the reply is in the history), `timeout`,
/// `error` (the run ended without a reply) or `aborted`. Each is final: the turn ends at once with it.
@Suite(.serialized) struct ChatReplayedAckTests {
    typealias Rig = ChatIntegrationTests.Rig

    static let cases: [(status: String, expected: @Sendable (ChatReplyUpdate?) -> Bool)] = [
        ("completed", { $0 == .final("the booking is made", source: .history) }),
        ("ok", { $0 == .final("the booking is made", source: .history) }),
        ("timeout", { if case .failed(.agentError(kind: "timeout", _))? = $0 { true } else { false } }),
        ("error", { if case .failed(.agentError(kind: nil, _))? = $0 { true } else { false } }),
        ("aborted", { $0 == .aborted("") }),
    ]

    @Test(arguments: cases.map(\.status))
    func `a replayed ack ends the turn with what it says, without waiting for events that are gone`(status: String) async throws {
        let h = try await ChatIntegrationTests.paired()
        let rig = try Rig(h)   // the default patience: minutes
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        try await h.gateway.control(#"{"cmd":"chat-script","reply":"the booking is made","chunkChars":100,"delayMs":5}"#)
        // The ack is lost with the connection; the run finishes meanwhile; the resend gets the stored status.
        try await h.gateway.control(#"{"cmd":"chat-ack","mode":"drop","replayStatus":"\#(status)"}"#)
        let started = ContinuousClock.now
        let updates = await ChatIntegrationTests.collect(await rig.chat.send("book a table"), within: .seconds(20))
        let expected = try #require(Self.cases.first { $0.status == status }).expected
        #expect(expected(updates.last), "\(status): \(updates)")
        #expect(updates.contains { if case .accepted(_, status) = $0 { true } else { false } }, "\(updates)")
        #expect(ContinuousClock.now - started < .seconds(15), "ended on the replayed ack, not after the patience")
        let sent = try await ChatIntegrationTests.transcripts(h)
        #expect(sent.count == 1 && (sent.first?["sends"]?.intValue ?? 0) >= 2, "\(sent)")
        try h.gateway.expectNoViolations()
    }
}
