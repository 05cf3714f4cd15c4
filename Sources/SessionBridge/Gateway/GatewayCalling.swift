/// What the Talk and node pieces need of one Gateway socket: requests, its `hello-ok`, and its streams.
/// `GatewayConnection` is the real one; a test may stand in its own.
package protocol GatewayCalling: Actor {
    func request(method: String, params: JSONValue?, timeout: Duration?) async throws(GatewayRequestError) -> JSONValue?
    var hello: HelloOk? { get }
    func eventUpdates() -> AsyncStream<GatewayFrame.Event>
    func stateUpdates() -> AsyncStream<ConnectionState>
}

extension GatewayConnection: GatewayCalling {}
