/// Why a request over a connected socket failed. `isRetryable` errors may be resent by the caller
/// (with the same idempotency key) once the connection is back.
package enum GatewayRequestError: Error, Equatable, CustomStringConvertible {
    case notConnected
    case connectionLost(method: String)
    case timedOut(method: String, seconds: Double)
    case rejected(method: String, GatewayErrorShape)
    case cancelled

    package var isRetryable: Bool {
        switch self {
        case .notConnected, .connectionLost, .timedOut: true
        case .rejected(_, let shape): shape.retryable == true || shape.code == "UNAVAILABLE"
        case .cancelled: false
        }
    }

    package var description: String {
        switch self {
        case .notConnected: "Not connected to the Gateway; the request was not sent. It can be retried once connected."
        case .connectionLost(let m): "The connection to the Gateway dropped while '\(m)' was in flight; it can be retried."
        case .timedOut(let m, let s): "The Gateway did not answer '\(m)' within \(Int(s)) s."
        case .rejected(let m, let shape): "The Gateway refused '\(m)': \(shape)"
        case .cancelled: "The request was cancelled."
        }
    }
}
