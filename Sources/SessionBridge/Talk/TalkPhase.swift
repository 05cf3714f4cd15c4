import TalkLogging

/// Where the Talk loop is, as the other Talk clients announce it with `talk.mode`.
package enum TalkPhase: String, Sendable, Equatable, CaseIterable {
    case listening
    case thinking
    case speaking
    case idle
}

/// How a `talk.mode` notice went. `unavailable` is normal (a Gateway without Talk-capable nodes, or an
/// older one) and is not reported to the user.
package enum TalkModeNotice: Sendable, Equatable {
    case accepted
    case unavailable
    case failed(GatewayRequestError)
}

/// Sends `talk.mode {enabled, phase}` notices so the Gateway and its other clients can show the Talk phase.
package struct TalkModeNotifier: Sendable {
    package let gateway: any GatewayCalling
    private let logger: Logger

    package init(gateway: any GatewayCalling, logger: Logger) {
        self.gateway = gateway
        self.logger = logger
    }

    @discardableResult
    package func announce(enabled: Bool, phase: TalkPhase?) async -> TalkModeNotice {
        var params: [String: JSONValue] = ["enabled": .bool(enabled)]
        if let phase { params["phase"] = .string(phase.rawValue) }
        do {
            _ = try await gateway.request(method: "talk.mode", params: .object(params), timeout: nil)
            return .accepted
        } catch {
            if case .rejected(_, let shape) = error, shape.code == "UNAVAILABLE" {
                logger.debug("talk.mode not available", metadata: ["gateway.message": "\(GatewayText.neutralized(shape.message))"])
                return .unavailable
            }
            logger.warning("talk.mode notice failed", metadata: ["error": "\(error)"])
            return .failed(error)
        }
    }
}
