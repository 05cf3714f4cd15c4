import Testing

@testable import SessionBridge

@Suite struct WebSocketConnectionStateMachineTests {
    typealias Machine = WebSocketConnection.StateMachine

    static func close(_ code: UInt16, _ reason: String = "") -> WebSocketFrame {
        WebSocketFrame(opcode: .connectionClose, data: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    @Test func `a ping is answered with its payload and data is forwarded`() {
        var machine = Machine()
        #expect(machine.frameReceived(WebSocketFrame(opcode: .ping, data: [1, 2])) == .sendPong([1, 2]))
        let text = WebSocketFrame(opcode: .text, data: [65])
        #expect(machine.frameReceived(text) == .forwardData(text))
        #expect(machine.frameReceived(WebSocketFrame(opcode: .pong)) == .pongReceived)
    }

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1011, 4001] as [UInt16])
    func `a server close is echoed and reported with its code and reason`(code: UInt16) {
        var machine = Machine()
        #expect(machine.frameReceived(Self.close(code, "why")) ==
            .echoCloseAndFinish(code: WebSocketErrorCode(codeNumber: code), reason: "why"))
        #expect(machine.isClosed)
        #expect(machine.frameReceived(WebSocketFrame(opcode: .text, data: [65])) == .ignore)
    }

    @Test func `an empty close frame reports 1005`() {
        var machine = Machine()
        #expect(machine.frameReceived(WebSocketFrame(opcode: .connectionClose)) ==
            .echoCloseAndFinish(code: .unknown(1005), reason: ""))
    }

    @Test(arguments: [
        (WebSocketFrame(opcode: .connectionClose, data: [3]), WebSocketError.invalidCloseFrame(code: nil)),
        (close(1005), .invalidCloseFrame(code: 1005)),
        (close(999), .invalidCloseFrame(code: 999)),
        (close(2000), .invalidCloseFrame(code: 2000)),
        (WebSocketFrame(opcode: .connectionClose, data: [0x03, 0xE8, 0xFF]), .invalidUTF8),
    ])
    func `invalid close frames are protocol errors`(frame: WebSocketFrame, error: WebSocketError) {
        var machine = Machine()
        #expect(machine.frameReceived(frame) == .failConnection(error, sendClose: true))
    }

    @Test func `a client close waits for the server's close, dropping data meanwhile`() {
        var machine = Machine()
        #expect(machine.closeRequested(code: .goingAway, reason: "bye") == .sendClose(code: .goingAway, reason: "bye"))
        #expect(!machine.isOpen)
        #expect(machine.closeRequested(code: .normalClosure, reason: "") == .ignore)
        #expect(machine.frameReceived(WebSocketFrame(opcode: .binary, data: [1])) == .ignore)
        #expect(machine.frameReceived(WebSocketFrame(opcode: .ping)) == .ignore)
        #expect(machine.frameReceived(Self.close(1001)) == .finish(code: .goingAway, reason: ""))
        #expect(machine.isClosed)
    }

    @Test func `an unanswered close ends when the timer fires`() {
        var machine = Machine()
        _ = machine.closeRequested(code: .normalClosure, reason: "")
        #expect(machine.closeTimerFired() == .finish(code: .normalClosure, reason: ""))
        #expect(machine.closeTimerFired() == .ignore)
    }

    @Test func `the stream ending without a close frame is a lost connection`() {
        var machine = Machine()
        #expect(machine.streamEnded(reason: "end of stream") ==
            .failConnection(.connectionLost(reason: "end of stream"), sendClose: false))
        #expect(machine.streamEnded(reason: "again") == .ignore)
    }

    @Test func `a protocol violation closes with its code`() {
        var machine = Machine()
        #expect(machine.protocolViolation(.maskedFrameFromServer) == .failConnection(.maskedFrameFromServer, sendClose: true))
        #expect(machine.protocolViolation(.invalidUTF8) == .failConnection(.invalidUTF8, sendClose: false))
    }
}
