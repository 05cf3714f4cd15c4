/// A close status code (RFC 6455 section 7.4), named as in NIOWebSocket.
package enum WebSocketErrorCode: Sendable, Hashable, CustomStringConvertible {
    case normalClosure
    case goingAway
    case protocolError
    case unacceptableData
    case dataInconsistentWithMessage
    case policyViolation
    case messageTooLarge
    case missingExtension
    case unexpectedServerError
    case unknown(UInt16)

    /// Maps a wire code to its name; codes without a name stay `unknown`.
    package init(codeNumber: UInt16) {
        switch codeNumber {
        case 1000: self = .normalClosure
        case 1001: self = .goingAway
        case 1002: self = .protocolError
        case 1003: self = .unacceptableData
        case 1007: self = .dataInconsistentWithMessage
        case 1008: self = .policyViolation
        case 1009: self = .messageTooLarge
        case 1010: self = .missingExtension
        case 1011: self = .unexpectedServerError
        default: self = .unknown(codeNumber)
        }
    }

    /// The code as sent on the wire.
    package var codeNumber: UInt16 {
        switch self {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unacceptableData: 1003
        case .dataInconsistentWithMessage: 1007
        case .policyViolation: 1008
        case .messageTooLarge: 1009
        case .missingExtension: 1010
        case .unexpectedServerError: 1011
        case .unknown(let code): code
        }
    }

    /// Whether a peer may put this code in a close frame: 1005, 1006 and 1015 are reserved for
    /// reporting, and codes below 1000 or in unassigned ranges are a protocol error (RFC 6455 section 7.4.2).
    package var isSendable: Bool {
        let code = codeNumber
        switch code {
        case 1000...1003, 1007...1014: return true
        case 3000...4999: return true
        default: return false
        }
    }

    package var description: String {
        switch self {
        case .normalClosure: "1000 (normal closure)"
        case .goingAway: "1001 (going away)"
        case .protocolError: "1002 (protocol error)"
        case .unacceptableData: "1003 (unacceptable data)"
        case .dataInconsistentWithMessage: "1007 (invalid data)"
        case .policyViolation: "1008 (policy violation)"
        case .messageTooLarge: "1009 (message too large)"
        case .missingExtension: "1010 (missing extension)"
        case .unexpectedServerError: "1011 (server error)"
        case .unknown(1005): "1005 (no status code)"
        case .unknown(1006): "1006 (connection lost without a close frame)"
        case .unknown(let code): "\(code)"
        }
    }
}
