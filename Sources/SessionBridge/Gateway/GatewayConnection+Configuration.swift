import Foundation

/// What a `GatewayConnection` is given: the material of each connect attempt, the outside world, its timing.
extension GatewayConnection {
    /// What a connect attempt needs, asked for anew before each attempt (tokens change after pairing).
    package struct ConnectMaterial: Sendable {
        package var profile: ClientProfile
        package var auth: ConnectAuth
        /// What allows one retry with the stored device token when `auth`'s shared token is refused.
        package var deviceTokenRetry: DeviceTokenRetry?
        package init(profile: ClientProfile, auth: ConnectAuth, deviceTokenRetry: DeviceTokenRetry? = nil) {
            self.profile = profile
            self.auth = auth
            self.deviceTokenRetry = deviceTokenRetry
        }
    }

    /// The outside world, injected so tests can swap the socket and the clock.
    package struct Dependencies: Sendable {
        package var openTransport: @Sendable () async throws -> any GatewayTransport
        package var material: @Sendable () async -> ConnectMaterial
        /// Called after each `hello-ok`, before the state turns `connected` (store tokens here).
        package var helloReceived: @Sendable (HelloOk, ConnectMaterial) async -> Void = { _, _ in }
        package var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        package var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
        package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

        package init(openTransport: @escaping @Sendable () async throws -> any GatewayTransport,
                     material: @escaping @Sendable () async -> ConnectMaterial) {
            self.openTransport = openTransport
            self.material = material
        }
    }

    /// Timeouts and intervals (defaults as the iOS client keeps them).
    package struct Timing: Sendable {
        package var challengeTimeout: Duration = .seconds(6)
        package var connectResponseTimeout: Duration = .seconds(15)
        package var requestTimeout: Duration = .seconds(15)
        package var pingInterval: Duration = .seconds(15)
        package var backoff = Backoff()
        package init() {}
    }
}
