import SessionBridge

/// Tool calls the relay asks for, each answered by the agent (`talk.client.toolCall` → the run's `chat` final →
/// `submitToolResult`) in a task of its own.
extension RealtimeTalkSession {
    /// Answers a tool call in a task of its own, at most `maxConcurrentToolCalls` at once: one more (or a call id
    /// already being answered) gets an error result at once, so the relay does not wait on it.
    func toolCall(callId: String, name: String, args: JSONValue) {
        guard toolCalls.count < settings.maxConcurrentToolCalls, toolCalls[callId] == nil, callId.utf8.count <= 256 else {
            emit(.error("tool call \(name) refused: \(toolCalls.count) already being answered"))
            let relay = relay
            Task { try? await relay.submitToolResult(callId: String(callId.prefix(256)), result: ["error": "too many tool calls at once"]) }
            return
        }
        emit(.relayNote("tool call \(name)"))
        toolCalls[callId] = Task {
            switch await relay.answerToolCall(callId: callId, name: name, args: args, timeout: settings.toolCallTimeout) {
            case .success: self.emit(.relayNote("tool call \(name) answered"))
            case .failure(let error): self.emit(.error("tool call \(name) failed: \(error)"))
            }
            self.toolCallDone(callId)
        }
    }

    private func toolCallDone(_ callId: String) { toolCalls[callId] = nil }

    /// Tool calls being answered now (for tests).
    var toolCallsInFlight: Int { toolCalls.count }
}
