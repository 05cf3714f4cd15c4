/// What the Talk and node pieces need of one Gateway socket: requests, its `hello-ok`, and its streams.
/// `GatewayConnection` is the real one; a test may stand in its own.
package protocol GatewayCalling: Actor {
    func request(method: String, params: JSONValue?, timeout: Duration?) async throws(GatewayRequestError) -> JSONValue?
    /// `request`, calling `written` once the frame is on its way (or could not be sent), before the answer is
    /// awaited: a caller that must keep its requests in order sends the next one then, and awaits the answers together.
    func request(method: String, params: JSONValue?, timeout: Duration?,
                 written: @escaping @Sendable () -> Void) async throws(GatewayRequestError) -> JSONValue?
    var hello: HelloOk? { get }
    func eventUpdates() -> AsyncStream<GatewayFrame.Event>
    func stateUpdates() -> AsyncStream<ConnectionState>
}

extension GatewayConnection: GatewayCalling {}
