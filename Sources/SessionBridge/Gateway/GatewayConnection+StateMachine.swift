import Foundation

/// What a connection is doing, as the user would describe it.
package enum ConnectionState: Sendable, Equatable {
    case idle
    case connecting(attempt: Int)
    case connected(serverVersion: String)
    case reconnecting(attempt: Int, nextRetryAt: Date, reason: String)
    case waitingForApproval(requestId: String?, nextRetryAt: Date)
    case disconnected(reason: String)
}

extension GatewayConnection {
    /// The reconnect decisions, free of I/O so they can be tested by feeding events.
    package struct StateMachine: Sendable {
        package enum Decision: Sendable, Equatable {
            case reconnect(afterSeconds: Double, attempt: Int)
            case waitForApproval(requestId: String?, afterSeconds: Double)
            case stop(reason: String, paused: Bool)
        }

        package var backoff: Backoff
        /// Failed attempts since the last `hello-ok`.
        package private(set) var attempt = 0
        /// The signature payload to use next; drops to v2 once if a Gateway rejects v3.
        package private(set) var payloadVersion: DeviceAuthPayload.Version = .v3
        private var triedV2 = false
        private var notBeforeSeconds: Double?
        /// Attempts left at the initial backoff while a Gateway restart announced by `shutdown` is under way.
        private var restartRetriesLeft = 0

        /// Pairing approval is polled at least this often, so an approval is noticed promptly.
        static let approvalPollSeconds = 5.0

        package init(backoff: Backoff = Backoff()) { self.backoff = backoff }

        package mutating func helloReceived() {
            attempt = 0
            notBeforeSeconds = nil
            restartRetriesLeft = 0
        }

        /// A `shutdown` event: the next reconnect waits at least `restartExpectedMs`.
        package mutating func shutdownAnnounced(restartExpectedMs: Int64?) {
            // The estimate counts from the announcement, before the Gateway has even closed its sockets:
            // a small margin makes the first attempt land after it listens again instead of being refused
            // and pushed a whole backoff step later.
            notBeforeSeconds = restartExpectedMs.map { Double($0) / 1000 * 1.1 + 0.1 }
            // A Gateway that said it is coming back is polled at the initial backoff for a while,
            // so it is found within one short step of listening again.
            if restartExpectedMs != nil { restartRetriesLeft = 20 }
        }

        /// The socket died after a successful handshake (closed, tick watchdog, ping failure).
        package mutating func connectionLost(unit: Double) -> Decision {
            attempt += 1
            return .reconnect(afterSeconds: takeDelay(unit: unit, floor: nil), attempt: attempt)
        }

        /// Opening the socket failed before any Gateway frame.
        package mutating func transportFailed(permanent: Bool, reason: String, unit: Double) -> Decision {
            if permanent { return .stop(reason: reason, paused: false) }
            if restartRetriesLeft > 0 {
                restartRetriesLeft -= 1
                return .reconnect(afterSeconds: backoff.delay(attempt: 1, unit: unit), attempt: attempt)
            }
            attempt += 1
            return .reconnect(afterSeconds: takeDelay(unit: unit, floor: nil), attempt: attempt)
        }

        /// The handshake failed; what `ConnectError.behaviour` says, plus the one-time v2 fallback.
        package mutating func connectFailed(_ error: ConnectError, unit: Double) -> Decision {
            if error.code == "DEVICE_AUTH_SIGNATURE_INVALID", payloadVersion == .v3, !triedV2 {
                triedV2 = true
                payloadVersion = .v2
                return .reconnect(afterSeconds: 0, attempt: attempt)
            }
            attempt += 1
            switch error.behaviour {
            case .retry(let afterMs):
                return .reconnect(afterSeconds: takeDelay(unit: unit, floor: afterMs.map { Double($0) / 1000 }), attempt: attempt)
            case .waitForApproval(let id, let afterMs):
                let poll = min(takeDelay(unit: unit, floor: nil), Self.approvalPollSeconds)
                let delay = afterMs.map { max(poll, min(Double($0) / 1000, 60)) } ?? poll
                return .waitForApproval(requestId: id, afterSeconds: delay)
            case .pauseReconnect:
                return .stop(reason: error.description, paused: true)
            case .stop:
                return .stop(reason: error.description, paused: false)
            }
        }

        private mutating func takeDelay(unit: Double, floor: Double?) -> Double {
            let f = [floor, notBeforeSeconds].compactMap { $0 }.max()
            notBeforeSeconds = nil
            return backoff.delay(attempt: attempt, unit: unit, notBefore: f)
        }

        /// True when nothing has arrived for twice the tick interval.
        package static func isDead(lastFrameAt: ContinuousClock.Instant, now: ContinuousClock.Instant, tickIntervalMs: Int) -> Bool {
            now - lastFrameAt > .milliseconds(2 * tickIntervalMs)
        }
    }
}
