/// Why a decision was not recorded, in words a person can act on. Upstream puts the reason in `details.reason` of an
/// `INVALID_REQUEST` (approval-shared.ts, approval-record-lookup.ts); the message is the fallback, as the iOS app's
/// `isApprovalNotificationStaleError` reads it.
package enum ApprovalResolveError: Error, Equatable, CustomStringConvertible {
    /// `APPROVAL_NOT_FOUND`: unknown, expired, or not visible to this device.
    case notFound(id: String)
    /// `APPROVAL_ALREADY_RESOLVED`: someone else decided otherwise first.
    case alreadyResolved(id: String)
    /// `APPROVAL_ALLOW_ALWAYS_UNAVAILABLE`: this request allows only once or deny.
    case allowAlwaysUnavailable(id: String)
    /// A prefix that matches more than one approval.
    case ambiguousPrefix(String)
    /// The operator token lacks `operator.approvals`.
    case missingScope
    /// Any other refusal, or the socket failed.
    case failed(String)

    /// Reads a failed resolve request.
    package init(_ error: GatewayRequestError, id: String) {
        guard case .rejected(_, let shape) = error else {
            self = .failed(error.description)
            return
        }
        let reason = shape.details?["reason"]?.stringValue
        let message = shape.message.lowercased()
        if reason == "APPROVAL_NOT_FOUND" || message.contains("unknown or expired approval id") {
            self = .notFound(id: id)
        } else if reason == "APPROVAL_ALREADY_RESOLVED" || message.contains("already resolved") {
            self = .alreadyResolved(id: id)
        } else if reason == "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE" || message.contains("allow-always is unavailable") {
            self = .allowAlwaysUnavailable(id: id)
        } else if message.contains("ambiguous approval id prefix") {
            self = .ambiguousPrefix(id)
        } else if shape.code == "FORBIDDEN", shape.detailCode == "MISSING_SCOPE" || message.contains("operator.approvals") {
            self = .missingScope
        } else {
            self = .failed(shape.description)
        }
    }

    package var description: String {
        switch self {
        case .notFound(let id):
            "No pending approval \(GatewayText.neutralized(id, limit: 64)): it expired, was cleared by a Gateway restart, or is not this device's to review."
        case .alreadyResolved(let id):
            "Approval \(GatewayText.neutralized(id, limit: 64)) was already decided differently elsewhere."
        case .allowAlwaysUnavailable(let id):
            "'Allow always' is not offered for approval \(GatewayText.neutralized(id, limit: 64)); allow once or deny."
        case .ambiguousPrefix(let prefix):
            "More than one approval starts with \(GatewayText.neutralized(prefix, limit: 64)); give more of the id."
        case .missingScope:
            "This device may not review approvals (its operator token lacks operator.approvals); run 'openclaw-talk setup' again to ask for it."
        case .failed(let why): why
        }
    }

    /// A short phrase to speak.
    package var spoken: String {
        switch self {
        case .notFound: "That approval is gone: it expired or was cleared."
        case .alreadyResolved: "That approval was already decided elsewhere."
        case .allowAlwaysUnavailable: "Allow always is not offered for this one."
        case .ambiguousPrefix: "That approval id is ambiguous."
        case .missingScope: "This device may not review approvals."
        case .failed: "The decision could not be sent."
        }
    }
}
