/// The WebSocket connection logic that involves no I/O, kept apart so it can be tested by feeding
/// events and checking the actions (the async-http-client pattern).
package enum WebSocketConnection {}

extension WebSocketConnection {
    /// Which side sent the first close frame.
    package enum CloseInitiator: Sendable, Equatable {
        case client, server
    }

    /// The close handshake and control-frame rules. One method per event; each returns what the owner
    /// (`WebSocketClient`) must do. The owner does the I/O and never decides protocol questions itself.
    package struct StateMachine: Sendable {
        private enum State: Sendable, Equatable {
            case open
            /// Our close frame is sent; waiting for the server's.
            case closing(code: WebSocketErrorCode, reason: String)
            case closed(code: WebSocketErrorCode, reason: String, initiator: CloseInitiator)
        }

        /// What the owner does next.
        package enum Action: Sendable, Equatable {
            /// Hand this data frame to the aggregator (and deliver the message if it completes one).
            case forwardData(WebSocketFrame)
            /// Drop the frame: data arriving while our close is pending, or an unsolicited pong.
            case ignore
            /// Answer a ping with a pong carrying the same payload.
            case sendPong([UInt8])
            /// A pong arrived (answer to our ping).
            case pongReceived
            /// Send a close frame with this code and reason, then wait for the server's close.
            case sendClose(code: WebSocketErrorCode, reason: String)
            /// The server closed first: echo its code, close the stream, report `closed(code:reason:)`.
            case echoCloseAndFinish(code: WebSocketErrorCode, reason: String)
            /// The server answered our close: close the stream, report `closed(code:reason:)`.
            case finish(code: WebSocketErrorCode, reason: String)
            /// A protocol violation: send a close frame with the error's code (if still allowed), close the
            /// stream, report the error.
            case failConnection(WebSocketError, sendClose: Bool)
        }

        private var state: State = .open

        /// Makes a state machine for a freshly opened connection.
        package init() {}

        /// Whether data may still be sent and messages delivered.
        package var isOpen: Bool { state == .open }

        /// Whether the close handshake is over (or was cut short).
        package var isClosed: Bool {
            if case .closed = state { return true }
            return false
        }

        /// Any frame decoded from the server.
        package mutating func frameReceived(_ frame: WebSocketFrame) -> Action {
            if case .closed = state { return .ignore }
            switch frame.opcode {
            case .ping:
                return state == .open ? .sendPong(frame.unmaskedData) : .ignore
            case .pong:
                return .pongReceived
            case .connectionClose:
                return closeFrameReceived(frame.unmaskedData)
            default:
                return state == .open ? .forwardData(frame) : .ignore
            }
        }

        /// The application asks to close.
        package mutating func closeRequested(code: WebSocketErrorCode, reason: String) -> Action {
            guard state == .open else { return .ignore }
            state = .closing(code: code, reason: reason)
            return .sendClose(code: code, reason: reason)
        }

        /// The server did not answer our close frame in time.
        package mutating func closeTimerFired() -> Action {
            guard case .closing(let code, let reason) = state else { return .ignore }
            state = .closed(code: code, reason: reason, initiator: .client)
            return .finish(code: code, reason: reason)
        }

        /// The decoder or aggregator found a protocol violation.
        package mutating func protocolViolation(_ error: WebSocketError) -> Action {
            let mayStillSend = !isClosed
            state = .closed(code: error.closeCode ?? .protocolError, reason: "", initiator: .client)
            return .failConnection(error, sendClose: mayStillSend)
        }

        /// The byte stream ended or failed without a close frame.
        package mutating func streamEnded(reason: String) -> Action {
            switch state {
            case .closed: return .ignore
            case .closing(let code, let reason):
                // We had asked to close; a server that just hangs up has still closed.
                state = .closed(code: code, reason: reason, initiator: .client)
                return .finish(code: code, reason: reason)
            case .open:
                state = .closed(code: .unknown(1006), reason: reason, initiator: .server)
                return .failConnection(.connectionLost(reason: reason), sendClose: false)
            }
        }

        private mutating func closeFrameReceived(_ payload: [UInt8]) -> Action {
            var code = WebSocketErrorCode.unknown(1005)
            var reason = ""
            if payload.count == 1 { return protocolViolation(.invalidCloseFrame(code: nil)) }
            if payload.count >= 2 {
                let number = UInt16(payload[0]) << 8 | UInt16(payload[1])
                code = WebSocketErrorCode(codeNumber: number)
                guard code.isSendable else { return protocolViolation(.invalidCloseFrame(code: number)) }
                guard let text = String(validating: payload[2...], as: UTF8.self) else {
                    return protocolViolation(.invalidUTF8)
                }
                reason = text
            }
            switch state {
            case .open:
                state = .closed(code: code, reason: reason, initiator: .server)
                return .echoCloseAndFinish(code: code, reason: reason)
            case .closing:
                state = .closed(code: code, reason: reason, initiator: .client)
                return .finish(code: code, reason: reason)
            case .closed:
                return .ignore
            }
        }
    }
}
