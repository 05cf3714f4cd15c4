import Foundation

/// Why a relay session could not be had.
package enum TalkRelayError: Error, Equatable, CustomStringConvertible {
    /// `hello-ok` lists no relay of this mode in any era's names.
    case notListed(TalkRelayMode)
    /// `talk.catalog` says the relay is not ready.
    case notReady(TalkRelayMode)
    case request(GatewayRequestError)
    case malformedResult(String)

    package var description: String {
        switch self {
        case .notListed(let mode): "the Gateway offers no \(mode.rawValue) relay"
        case .notReady(let mode): "the Gateway's \(mode.rawValue) relay is not ready"
        case .request(let error): error.description
        case .malformedResult(let why): "the Gateway's relay session is unusable: \(why)"
        }
    }
}

/// A relay session as its create answer describes it.
package struct TalkRelaySession: Sendable, Equatable {
    package var id: String
    package var inputEncoding: String
    package var inputSampleRateHz: Int
    /// From `expiresAt` (unix seconds), when given.
    package var expiresAt: Date?
    /// The socket it is bound to: another socket (after a reconnect) cannot use it.
    package var connId: String
    package var createdAt = Date()
    package var names: TalkRelayNames
}
