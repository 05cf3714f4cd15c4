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
        /// Failed attempts since the last `hello-ok` (what the status shows).
        package private(set) var attempt = 0
        /// The signature payload to use next; drops to v2 once if a Gateway rejects v3.
        package private(set) var payloadVersion: DeviceAuthPayload.Version = .v3
        private var triedV2 = false
        private var notBeforeSeconds: Double?
        /// Steps of the back-off: refusals and short-lived connections since the last stable connection.
        private var backoffStep = 0
        /// When the Gateway stopped answering: the loss of the connection, or the first failed attempt.
        private var outageStart: ContinuousClock.Instant?
        /// When the current connection got its `hello-ok`.
        private var connectedAt: ContinuousClock.Instant?

        /// Pairing approval is polled at least this often, so an approval is noticed promptly.
        static let approvalPollSeconds = 5.0

        package init(backoff: Backoff = Backoff()) { self.backoff = backoff }

        package mutating func helloReceived(at now: ContinuousClock.Instant) {
            attempt = 0
            notBeforeSeconds = nil
            outageStart = nil
            connectedAt = now
        }

        /// A `shutdown` event: the next reconnect waits at least `restartExpectedMs`.
        package mutating func shutdownAnnounced(restartExpectedMs: Int64?) {
            // The estimate counts from the announcement, before the Gateway has even closed its sockets:
            // a small margin makes the first attempt land after it listens again instead of being refused.
            // Refused all the same, the attempts after it are quick probes.
            notBeforeSeconds = restartExpectedMs.map { Double($0) / 1000 * 1.1 + 0.1 }
        }

        /// The socket died after a successful handshake (closed, tick watchdog, ping failure). After a stable
        /// connection the Gateway is probed at once (a restart, a network change); a connection it dropped
        /// soon after accepting it counts as its failure and backs off.
        package mutating func connectionLost(at now: ContinuousClock.Instant, unit: Double) -> Decision {
            attempt += 1
            let lasted = connectedAt.map { Self.seconds(now - $0) } ?? 0
            connectedAt = nil
            // After an announced restart the quick probes start when the Gateway said it would be back.
            outageStart = now + .milliseconds(Int((notBeforeSeconds ?? 0) * 1000))
            if lasted >= backoff.stableSeconds {
                backoffStep = 0
                return .reconnect(afterSeconds: backoff.probeDelay(outageSeconds: 0, unit: unit, notBefore: takeNotBefore()),
                                  attempt: attempt)
            }
            backoffStep += 1
            return .reconnect(afterSeconds: takeDelay(unit: unit, floor: nil), attempt: attempt)
        }

        /// Opening the socket failed before any Gateway frame: nothing answered, so it is probed again soon.
        package mutating func transportFailed(permanent: Bool, reason: String, at now: ContinuousClock.Instant,
                                              unit: Double) -> Decision {
            if permanent { return .stop(reason: reason, paused: false) }
            attempt += 1
            let start = outageStart ?? now
            outageStart = start
            let delay = backoff.probeDelay(outageSeconds: max(0, Self.seconds(now - start)), unit: unit, notBefore: takeNotBefore())
            return .reconnect(afterSeconds: delay, attempt: attempt)
        }

        /// The handshake failed; what `ConnectError.behaviour` says, plus the one-time v2 fallback.
        package mutating func connectFailed(_ error: ConnectError, unit: Double) -> Decision {
            if error.code == "DEVICE_AUTH_SIGNATURE_INVALID", payloadVersion == .v3, !triedV2 {
                triedV2 = true
                payloadVersion = .v2
                return .reconnect(afterSeconds: 0, attempt: attempt)
            }
            attempt += 1
            backoffStep += 1
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

        /// The back-off's next wait, at least `floor` and any announced restart time.
        private mutating func takeDelay(unit: Double, floor: Double?) -> Double {
            let f = [floor, takeNotBefore()].compactMap { $0 }.max()
            return backoff.delay(attempt: backoffStep, unit: unit, notBefore: f)
        }

        private mutating func takeNotBefore() -> Double? {
            defer { notBeforeSeconds = nil }
            return notBeforeSeconds
        }

        private static func seconds(_ d: Duration) -> Double {
            Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }

        /// True when nothing has arrived for twice the tick interval.
        package static func isDead(lastFrameAt: ContinuousClock.Instant, now: ContinuousClock.Instant, tickIntervalMs: Int) -> Bool {
            now - lastFrameAt > .milliseconds(2 * tickIntervalMs)
        }
    }
}
