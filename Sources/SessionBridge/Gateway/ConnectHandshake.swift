import TalkLogging

/// The connect handshake on a fresh transport: wait for `connect.challenge`, send a signed `connect`,
/// read `hello-ok` (or the Gateway's refusal). Frames that arrive meanwhile and are not ours are ignored.
package struct ConnectHandshake: Sendable {
    package var profile: ClientProfile
    package var auth: ConnectAuth
    package var identity: DeviceIdentity
    package var payloadVersion: DeviceAuthPayload.Version = .v3
    package var challengeTimeout: Duration = .seconds(6)
    package var responseTimeout: Duration = .seconds(15)
    package var requestId: String = "connect-1"

    package init(profile: ClientProfile, auth: ConnectAuth, identity: DeviceIdentity) {
        self.profile = profile
        self.auth = auth
        self.identity = identity
    }

    /// Performs the handshake; the transport's message limit is raised to `policy.maxPayload` on success.
    package func perform(
        on transport: any GatewayTransport, sleep: @escaping @Sendable (Duration) async throws -> Void, logger: Logger
    ) async throws(ConnectError) -> HelloOk {
        let challenge: ConnectChallenge
        do {
            let got = try await withDeadline(challengeTimeout, sleep: sleep, onTimeout: { await transport.close() }) {
                try await Self.awaitChallenge(transport, logger: logger)
            }
            guard let got else { throw ConnectError.challengeTimeout(seconds: Self.seconds(challengeTimeout)) }
            challenge = got
        } catch let e as ConnectError {
            throw e
        } catch {
            throw .connectionLost(String(describing: error))
        }
        let params: JSONValue
        do {
            params = try ConnectParams.build(
                profile: profile, auth: auth, identity: identity, challenge: challenge, payloadVersion: payloadVersion)
        } catch {
            throw .connectionLost("could not sign the challenge: \(error)")
        }
        logger.debug("sending connect", metadata: [
            "gateway.role": "\(profile.role.rawValue)", "gateway.signature": "\(payloadVersion.rawValue)",
        ])
        let id = requestId
        do {
            try await transport.send(text: GatewayFrame.request(id: id, method: "connect", params: params))
            let got = try await withDeadline(responseTimeout, sleep: sleep, onTimeout: { await transport.close() }) {
                try await Self.awaitResponse(id: id, transport, logger: logger)
            }
            guard let response = got else { throw ConnectError.responseTimeout(seconds: Self.seconds(responseTimeout)) }
            guard response.ok else {
                throw ConnectError.rejected(response.error ?? GatewayErrorShape(code: "UNKNOWN", message: "connect failed"))
            }
            let hello: HelloOk
            do { hello = try HelloOk(payload: response.payload) } catch { throw ConnectError.invalidHello(error) }
            await transport.setMaxMessageSize(hello.maxPayload)
            return hello
        } catch let e as ConnectError {
            throw e
        } catch {
            throw .connectionLost(String(describing: error))
        }
    }

    /// Waits for a well-formed challenge; a malformed one fails at once (a Gateway sends exactly one).
    private static func awaitChallenge(_ transport: any GatewayTransport, logger: Logger) async throws -> ConnectChallenge {
        while true {
            let bytes = try await transport.receive()
            guard case .event(let event) = try? GatewayFrame.parse(bytes) else {
                logger.debug("ignored an unusable frame before the challenge", metadata: ["ws.bytes": "\(bytes.count)"])
                continue
            }
            guard event.name == "connect.challenge" else { continue }
            guard let challenge = ConnectChallenge(payload: event.payload) else { throw ConnectError.invalidChallenge }
            return challenge
        }
    }

    private static func awaitResponse(id: String, _ transport: any GatewayTransport, logger: Logger) async throws -> GatewayFrame.Response {
        while true {
            let bytes = try await transport.receive()
            let frame: GatewayFrame
            do { frame = try GatewayFrame.parse(bytes) } catch {
                logger.debug("ignored an unusable frame during connect", metadata: ["gateway.frame_error": "\(error)"])
                continue
            }
            if case .response(let r) = frame, r.id == id { return r }
        }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
