import Foundation

/// What to do after a failed connect.
package enum ConnectBehaviour: Sendable, Equatable {
    /// Transient: reconnect with backoff, waiting at least `afterMs` when given.
    case retry(afterMs: Int64?)
    /// Pairing is pending: keep retrying (slowly) until someone approves `requestId`.
    case waitForApproval(requestId: String?, retryAfterMs: Int64?)
    /// Credentials or configuration must change first: no automatic reconnects until the user acts.
    case pauseReconnect
    /// Cannot work with this Gateway or this build: stop and tell the user.
    case stop
}

/// Why a connect failed, with a plain message saying what to do and the behaviour that follows.
package enum ConnectError: Error, Equatable, CustomStringConvertible {
    /// The Gateway answered `connect` with an error (`details.code` is in `shape`).
    case rejected(GatewayErrorShape)
    /// No `connect.challenge` arrived in time.
    case challengeTimeout(seconds: Double)
    /// The challenge lacked a nonce or a non-negative integer `ts`.
    case invalidChallenge
    /// No answer to `connect` in time.
    case responseTimeout(seconds: Double)
    /// The answer to `connect` was not a usable `hello-ok`.
    case invalidHello(FrameError)
    /// The socket closed or failed before `hello-ok`.
    case connectionLost(String)

    /// The structured code: `details.code`, else the top-level code.
    package var code: String? {
        guard case .rejected(let shape) = self else { return nil }
        return shape.detailCode ?? shape.code
    }

    /// The pairing request to approve, for `PAIRING_REQUIRED`; nil unless it has the id format
    /// (`GatewayText.isRequestId`), since it is shown inside a command the user pastes into a shell.
    package var pairingRequestId: String? {
        guard case .rejected(let shape) = self else { return nil }
        return shape.details?["requestId"]?.stringValue.flatMap { GatewayText.isRequestId($0) ? $0 : nil }
    }

    package var behaviour: ConnectBehaviour {
        guard case .rejected(let shape) = self else { return .retry(afterMs: nil) }
        let details = shape.details
        let retryAfter = shape.retryAfterMs ?? details?["retryAfterMs"]?.intValue
        switch code ?? "" {
        case "PAIRING_REQUIRED":
            if details?["pauseReconnect"]?.boolValue == true, details?["waitForResolution"]?.boolValue != true {
                return .pauseReconnect
            }
            return .waitForApproval(requestId: pairingRequestId, retryAfterMs: retryAfter)
        case "AUTH_RATE_LIMITED", "DEVICE_AUTH_NONCE_REQUIRED", "DEVICE_AUTH_NONCE_MISMATCH",
             "DEVICE_AUTH_SIGNATURE_EXPIRED", "UNAVAILABLE":
            return .retry(afterMs: retryAfter)
        case "PROTOCOL_MISMATCH", "CLIENT_VERSION_MISMATCH", "DEVICE_IDENTITY_REQUIRED",
             "DEVICE_AUTH_DEVICE_ID_MISMATCH", "DEVICE_AUTH_PUBLIC_KEY_INVALID", "PAIRING_REJECTED":
            return .stop
        case let c where c.hasPrefix("AUTH_") || c.hasPrefix("DEVICE_AUTH_") || c == "PAIRING_EXPIRED":
            return .pauseReconnect
        default:
            if details?["recommendedNextStep"]?.stringValue == "wait_then_retry" || shape.retryable == true {
                return .retry(afterMs: retryAfter)
            }
            return shape.code == "UNAVAILABLE" ? .retry(afterMs: retryAfter) : .pauseReconnect
        }
    }

    package var description: String {
        switch self {
        case .challengeTimeout(let s):
            return "The Gateway did not send its connect challenge within \(Self.seconds(s)); is this an OpenClaw Gateway?"
        case .invalidChallenge:
            return "The Gateway's connect challenge had no nonce or timestamp; it may be too old or not an OpenClaw Gateway."
        case .responseTimeout(let s):
            return "The Gateway did not answer the connect request within \(Self.seconds(s)); will retry."
        case .invalidHello(let e):
            return "The Gateway's reply to connect was not usable (\(e)); it may be incompatible with this openclaw-talk."
        case .connectionLost(let why):
            return "The connection closed during the handshake: \(why)"
        case .rejected(let shape):
            return Self.message(for: shape)
        }
    }

    private static func message(for shape: GatewayErrorShape) -> String {
        let d = shape.details
        let code = shape.detailCode ?? shape.code
        switch code {
        case "PAIRING_REQUIRED":
            guard let id = d?["requestId"]?.stringValue, GatewayText.isRequestId(id) else {
                return "Waiting for approval: this device is not paired yet. "
                    + "On the Gateway host run 'openclaw devices list' and approve its request."
            }
            return "Waiting for approval: this device is not paired yet (request \(id)). "
                + "On the Gateway host run: openclaw devices approve \(id)"
        case "PAIRING_REJECTED": return "The Gateway's owner rejected this device's pairing request; ask them, then run setup again."
        case "PAIRING_EXPIRED": return "The pairing request expired before it was approved; run 'openclaw-talk setup' again."
        case "AUTH_REQUIRED", "AUTH_UNAUTHORIZED":
            return "The Gateway refused the connection without valid credentials; run 'openclaw-talk setup' with a new setup code, or pass --token/--password."
        case "AUTH_TOKEN_MISSING": return "The Gateway expects a token; pass --token or use a setup code."
        case "AUTH_TOKEN_MISMATCH": return "The Gateway rejected the token; check --token or make a new setup code."
        case "AUTH_TOKEN_NOT_CONFIGURED": return "The Gateway has no shared token configured; use --password or a setup code."
        case "AUTH_PASSWORD_MISSING": return "The Gateway expects a password; pass --password."
        case "AUTH_PASSWORD_MISMATCH": return "The Gateway rejected the password; check --password."
        case "AUTH_PASSWORD_NOT_CONFIGURED": return "The Gateway has no password configured; use --token or a setup code."
        case "AUTH_BOOTSTRAP_TOKEN_INVALID":
            if d?["reason"]?.stringValue == "role-not-in-profile" {
                return "The setup code does not cover this role (a node-only code gives no operator role); "
                    + "give the Gateway's shared token once (setup --token-file FILE), or make a code with operator access."
            }
            return "The setup code was already used or has expired; make a new one with 'openclaw qr' and run setup again."
        case "AUTH_DEVICE_TOKEN_MISMATCH":
            return "The Gateway no longer accepts this device's token (it was revoked or the Gateway was reset); run 'openclaw-talk setup' again."
        case "AUTH_SCOPE_MISMATCH": return "The token does not grant the scopes this connection asks for; make a new setup code."
        case "AUTH_RATE_LIMITED": return "Too many failed attempts; the Gateway asks to wait\(retryText(shape)) before trying again."
        case "PROTOCOL_MISMATCH":
            let expected = d?["expectedProtocol"]?.intValue.map { " (it speaks protocol \($0))" } ?? ""
            return "The Gateway does not speak protocol 3-4\(expected); update openclaw-talk or the Gateway."
        case "CLIENT_VERSION_MISMATCH": return "The Gateway does not accept this openclaw-talk version; update openclaw-talk."
        case "DEVICE_IDENTITY_REQUIRED": return "The Gateway requires a signed device identity; this is a bug in openclaw-talk, please report it."
        case "DEVICE_AUTH_SIGNATURE_EXPIRED":
            return "The Gateway says the signature is too old; check that this computer's clock is right (within 2 minutes)."
        case "DEVICE_AUTH_NONCE_REQUIRED", "DEVICE_AUTH_NONCE_MISMATCH": return "The connect challenge did not match; retrying."
        case "DEVICE_AUTH_SIGNATURE_INVALID", "DEVICE_AUTH_INVALID", "DEVICE_AUTH_DEVICE_ID_MISMATCH", "DEVICE_AUTH_PUBLIC_KEY_INVALID":
            return "The Gateway rejected this device's signature (\(code)); remove the identity file in the state folder and run setup again."
        case "UNAVAILABLE": return "The Gateway is starting or busy; retrying\(retryText(shape))."
        default:
            return "The Gateway refused the connection: \(GatewayText.neutralized(code, limit: 64)): "
                + GatewayText.neutralized(shape.message)
        }
    }

    private static func retryText(_ shape: GatewayErrorShape) -> String {
        guard let ms = shape.retryAfterMs ?? shape.details?["retryAfterMs"]?.intValue else { return "" }
        return " in \(seconds(Double(ms) / 1000))"
    }

    private static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : String(format: "%.1f s", s)
    }
}
