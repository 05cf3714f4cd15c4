/// Everything that can go wrong on a WebSocket once the transport is up: the NIOWebSocket cases plus
/// the handshake and session errors of this client. Each protocol violation knows the close code it
/// is reported to the peer with.
package enum WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A frame declared a payload longer than the current limit (checked before the payload is read).
    case invalidFrameLength(length: UInt64, limit: Int)
    /// A control frame arrived without FIN.
    case fragmentedControlFrame
    /// A control frame declared more than 125 bytes.
    case multiByteControlFrameLength(length: UInt64)
    /// The server masked a frame; only clients mask.
    case maskedFrameFromServer
    /// RSV1-3 set although no extension was negotiated.
    case reservedBitsSet
    /// An opcode RFC 6455 reserves.
    case unknownOpcode(UInt8)
    /// A continuation frame arrived with no message in progress.
    case unexpectedContinuationFrame
    /// A new text or binary frame arrived before the previous message's last fragment.
    case expectedContinuationFrame
    /// A message grew past the limit; the rest was not read.
    case messageTooLarge(limit: Int)
    /// A message came in more fragments than allowed.
    case tooManyFragments(limit: Int)
    /// A text message or close reason that is not UTF-8.
    case invalidUTF8
    /// A close frame with a one-byte payload or a code no peer may send.
    case invalidCloseFrame(code: UInt16?)
    /// The server answered the upgrade with something other than 101; carries its status line.
    case upgradeRejected(statusLine: String)
    /// The upgrade response was not valid HTTP or lacked a required header.
    case malformedUpgradeResponse(reason: String)
    /// `Sec-WebSocket-Accept` was missing, repeated or wrong.
    case acceptKeyMismatch(expected: String, received: [String])
    /// The upgrade response headers exceeded the size this client reads.
    case upgradeResponseTooLarge(limit: Int)
    /// The connection closed: by a close frame (its code and reason) or locally.
    case closed(code: WebSocketErrorCode, reason: String)
    /// The byte stream ended without a close frame (reported as 1006).
    case connectionLost(reason: String)
    /// `receive()` was called while another `receive()` was waiting.
    case concurrentReceive

    /// The code sent in the close frame that reports this error to the peer; `nil` when none is sent.
    package var closeCode: WebSocketErrorCode? {
        switch self {
        case .invalidFrameLength, .messageTooLarge: .messageTooLarge
        case .fragmentedControlFrame, .multiByteControlFrameLength, .maskedFrameFromServer, .reservedBitsSet,
            .unknownOpcode, .unexpectedContinuationFrame, .expectedContinuationFrame, .invalidCloseFrame:
            .protocolError
        case .tooManyFragments: .policyViolation
        case .invalidUTF8: .dataInconsistentWithMessage
        case .closed(let code, _): code
        case .upgradeRejected, .malformedUpgradeResponse, .acceptKeyMismatch, .upgradeResponseTooLarge,
            .connectionLost, .concurrentReceive:
            nil
        }
    }

    package var description: String {
        switch self {
        case .invalidFrameLength(let length, let limit):
            "The Gateway sent a frame of \(length) bytes, over the \(limit)-byte limit; the connection was closed with 1009."
        case .fragmentedControlFrame:
            "The Gateway sent a fragmented control frame (a protocol error); the connection was closed with 1002."
        case .multiByteControlFrameLength(let length):
            "The Gateway sent a control frame of \(length) bytes (at most 125 allowed); the connection was closed with 1002."
        case .maskedFrameFromServer:
            "The Gateway sent a masked frame, which servers must not do; the connection was closed with 1002."
        case .reservedBitsSet:
            "The Gateway set reserved frame bits without a negotiated extension; the connection was closed with 1002."
        case .unknownOpcode(let code):
            "The Gateway sent a frame with reserved opcode 0x\(String(code, radix: 16)); the connection was closed with 1002."
        case .unexpectedContinuationFrame:
            "The Gateway sent a continuation frame with no message in progress; the connection was closed with 1002."
        case .expectedContinuationFrame:
            "The Gateway started a new message before finishing the previous one; the connection was closed with 1002."
        case .messageTooLarge(let limit):
            "The Gateway sent a message over the \(limit)-byte limit; the connection was closed with 1009."
        case .tooManyFragments(let limit):
            "The Gateway split a message into more than \(limit) fragments; the connection was closed with 1008."
        case .invalidUTF8:
            "The Gateway sent text that is not valid UTF-8; the connection was closed with 1007."
        case .invalidCloseFrame(let code):
            "The Gateway sent an invalid close frame\(code.map { " (code \($0))" } ?? ""); the connection was closed with 1002."
        case .upgradeRejected(let statusLine):
            "The Gateway refused the WebSocket upgrade: \"\(GatewayText.neutralized(statusLine, limit: 120))\". Check the URL and its path."
        case .malformedUpgradeResponse(let reason):
            "The server's answer to the WebSocket upgrade was not valid (\(GatewayText.neutralized(reason))); is this an OpenClaw Gateway?"
        case .acceptKeyMismatch(let expected, let received):
            "The server's Sec-WebSocket-Accept was \(received.isEmpty ? "missing" : GatewayText.neutralized(received.joined(separator: ", "), limit: 120)), "
                + "expected \(expected); is a proxy in the way?"
        case .upgradeResponseTooLarge(let limit):
            "The server's upgrade response headers exceeded \(limit) bytes; is this an OpenClaw Gateway?"
        case .closed(let code, let reason):
            "The WebSocket connection closed with \(code)\(reason.isEmpty ? "" : ": \(GatewayText.neutralized(reason, limit: 123))")."
        case .connectionLost(let reason):
            "The connection to the Gateway was lost without a close frame (\(reason)); reconnect."
        case .concurrentReceive:
            "receive() was called while another receive() was still waiting; use one reader per connection."
        }
    }
}
