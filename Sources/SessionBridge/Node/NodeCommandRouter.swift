import TalkLogging

/// Serves `node.invoke.request` events on the node socket: push-to-talk commands go to the Talk loop's
/// handler, other declared commands (`system.notify`) to theirs, and every request is answered with `node.invoke.result`. Requests run side by side, so a
/// `talk.ptt.cancel` is not stuck behind a `talk.ptt.once` that is still listening.
package struct NodeCommandRouter: Sendable {
    private let node: any GatewayCalling
    /// This node's id, for requests that do not carry one.
    private let nodeId: String
    private let declared: Set<String>
    private let handler: PushToTalkHandler
    private let others: [String: NodeCommandHandler]
    private let logger: Logger

    /// - Parameters:
    ///   - declared: the commands this node declared in `connect` (`ClientProfile.commands`); others are refused.
    ///   - others: handlers of the declared commands that are not push-to-talk, by command name.
    package init(node: any GatewayCalling, nodeId: String, declared: [String], handler: @escaping PushToTalkHandler,
                 others: [String: NodeCommandHandler] = [:], logger: Logger) {
        self.node = node
        self.nodeId = nodeId
        self.declared = Set(declared)
        self.handler = handler
        self.others = others
        self.logger = logger
    }

    /// Serves the `node.invoke.request` events of `events` until the task is cancelled or the connection stops.
    /// Take `events` from the node socket (`eventUpdates()`) before it connects: a Gateway may invoke a command
    /// right after `hello-ok`, and a request sent before the subscription is never seen, so never answered (the
    /// operator's `node.invoke` times out). What arrives before this runs waits in the stream.
    package func serve(_ events: AsyncStream<GatewayFrame.Event>) async {
        await withDiscardingTaskGroup { group in
            for await event in events where event.name == "node.invoke.request" {
                group.addTask { await self.serve(event.payload) }
            }
        }
    }

    /// Subscribes to the node socket's events before it returns, then serves them in the returned task until it is
    /// cancelled or the connection stops: a request sent once this has returned is answered.
    package func start() async -> Task<Void, Never> {
        let events = await node.eventUpdates()
        return Task { await serve(events) }
    }

    private func serve(_ payload: JSONValue?) async {
        let request: NodeInvokeRequest
        do {
            request = try NodeInvokeRequest(payload: payload)
        } catch {
            logger.error("bad node.invoke.request", metadata: ["error": "\(error)"])
            if case .invalid(let id, let requestNode, let reason) = error {
                await send(NodeInvokeResult.failure(id: id, nodeId: requestNode ?? nodeId, code: "INVALID_REQUEST", message: reason))
            }
            return
        }
        await send(await answer(request))
    }

    private func answer(_ request: NodeInvokeRequest) async -> JSONValue {
        let replyNode = request.nodeId ?? nodeId
        if let other = others[request.command], declared.contains(request.command) {
            switch await other(request.params) {
            case .success(let payload): return NodeInvokeResult.success(id: request.id, nodeId: replyNode, payload: payload)
            case .failure(let failure):
                logger.info("node command refused", metadata: ["node.command": "\(request.command)", "error": "\(failure.code)"])
                return NodeInvokeResult.failure(id: request.id, nodeId: replyNode, code: failure.code, message: failure.message)
            }
        }
        guard let command = PushToTalkCommand(rawValue: request.command) else {
            logger.warning("refused an unknown node command", metadata: ["node.command": "\(request.command.prefix(64))"])
            return NodeInvokeResult.failure(id: request.id, nodeId: replyNode, code: "INVALID_REQUEST",
                                            message: "unknown command: \(request.command.prefix(64))")
        }
        guard declared.contains(command.rawValue) else {
            logger.warning("refused a node command this node did not declare", metadata: ["node.command": "\(command.rawValue)"])
            return NodeInvokeResult.failure(id: request.id, nodeId: replyNode, code: "INVALID_REQUEST",
                                            message: "command not declared by this node: \(command.rawValue)")
        }
        do {
            let result = try await handler(command, request.params)
            return NodeInvokeResult.success(id: request.id, nodeId: replyNode, payload: result.json)
        } catch {
            logger.warning("node command failed", metadata: ["node.command": "\(command.rawValue)", "error": "\(error)"])
            return NodeInvokeResult.failure(id: request.id, nodeId: replyNode, code: "UNAVAILABLE", message: "\(error)")
        }
    }

    private func send(_ result: JSONValue) async {
        do {
            _ = try await node.request(method: "node.invoke.result", params: result, timeout: nil)
        } catch {
            logger.warning("could not send node.invoke.result", metadata: ["error": "\(error)"])
        }
    }
}
