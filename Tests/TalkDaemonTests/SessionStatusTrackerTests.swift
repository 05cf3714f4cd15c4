import Foundation
import Testing

@testable import SessionBridge
@testable import TalkDaemon
@testable import TalkService

/// What `run` prints on stderr and `status` shows when a socket cannot serve Talk for want of pairing: the note is
/// decided by the socket's typed state and role, never by comparing the words it shows.
@Suite struct SessionStatusTrackerTests {
    typealias Socket = SessionStatusTracker.SocketState

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var role: GatewayRole
        var socket: Socket
        /// `run`'s pairing note (nil: none).
        var note: String?
        /// The status's connection and error with the other socket connected.
        var connection: SessionSnapshot.ConnectionPhase
        var error: String?
        var testDescription: String { name }
    }

    static let later = Date(timeIntervalSince1970: 1_780_000_060)
    static let id = "req-7f3a"
    static let credential = PairingStatus.noOperatorCredential
    static let operatorPending = "operator pairing pending: approve req-7f3a (on the Gateway host: openclaw devices approve req-7f3a)"
    static let nodePending = "node pairing pending: approve req-7f3a (on the Gateway host: openclaw devices approve req-7f3a)"

    static let rows: [Row] = [
        Row(name: "an operator with nothing to authenticate with says so", role: .operator, socket: .noOperatorCredential,
            note: credential, connection: .disconnected, error: credential),
        Row(name: "an operator socket closed for another reason is no pairing matter", role: .operator,
            socket: .connection(.disconnected(reason: "closed by the Gateway")), note: nil, connection: .disconnected,
            error: "closed by the Gateway"),
        Row(name: "the operator's pairing request names the operator and its approve command", role: .operator,
            socket: .connection(.waitingForApproval(requestId: id, nextRetryAt: later)), note: operatorPending,
            connection: .reconnecting, error: operatorPending),
        Row(name: "the node's pairing request names the node", role: .node,
            socket: .connection(.waitingForApproval(requestId: id, nextRetryAt: later)), note: nodePending,
            connection: .reconnecting, error: nodePending),
        Row(name: "a connected socket has no note", role: .node, socket: .connection(.connected(serverVersion: "2026.12.1")),
            note: nil, connection: .connected, error: nil),
    ]

    @Test(arguments: rows) func `pairing note and status`(_ row: Row) {
        #expect(SessionStatusTracker.pairingNote(role: row.role, row.socket) == row.note)
        var tracker = SessionStatusTracker(gatewayURL: nil, audioSource: "default", audioSink: "default", echoCancellation: nil)
        let other: GatewayRole = row.role == .operator ? .node : .operator
        _ = tracker.connection(other, .connection(.connected(serverVersion: "2026.12.1")), hello: nil)
        let event = tracker.connection(row.role, row.socket, hello: nil)
        #expect(event.detail["role"] == row.role.rawValue)
        let status = tracker.snapshot(mode: "continuous", sessionKey: nil)
        #expect(status.connection == row.connection)
        #expect(status.error == row.error)
    }

    @Test func `the relayed event shows the missing credential as the socket's disconnection`() {
        var tracker = SessionStatusTracker(gatewayURL: nil, audioSource: "default", audioSink: "default", echoCancellation: nil)
        let event = tracker.connection(.operator, .noOperatorCredential, hello: nil)
        #expect(event == SessionEvent(kind: "connection", detail: ["role": "operator", "state": "disconnected: " + Self.credential]))
    }
}
