import Foundation

/// A realtime relay's `toolCall` answered by the agent (fact sheet §5.4): `talk.client.toolCall` starts a run,
/// its `chat` final is the answer, `submitToolResult` hands it back as `{text}` (or `{error}`).
extension TalkRelayClient {
    package func answerToolCall(callId: String, name: String, args: JSONValue, timeout: Duration = .seconds(120)) async
        -> Result<String, TalkRelayError>
    {
        let chat = await gateway.eventUpdates()   // before the call: the run's final may come right after its answer
        let outcome: Result<String, TalkRelayError>
        do {
            let runId = try await consult(callId: callId, name: name, args: args)
            outcome = await Self.finalText(of: runId, in: chat, timeout: timeout)
        } catch {
            outcome = .failure(error)
        }
        let result: JSONValue = switch outcome {
        case .success(let text): ["text": .string(text)]
        case .failure(let error): ["error": .string("\(error)")]
        }
        do {
            try await submitToolResult(callId: callId, result: result)
        } catch {
            logger.warning("the tool result did not reach the relay", metadata: ["error": "\(error)"])
            return .failure(error)
        }
        return outcome
    }

    /// The text of the run's `chat` final (or why there is none).
    static func finalText(of runId: String, in events: AsyncStream<GatewayFrame.Event>, timeout: Duration) async
        -> Result<String, TalkRelayError>
    {
        await withTaskGroup(of: Result<String, TalkRelayError>?.self) { group in
            group.addTask {
                for await event in events where event.name == "chat" {
                    guard let payload = try? ChatEventPayload(json: event.payload), payload.runId == runId else { continue }
                    switch payload.state {
                    case .final: return .success(payload.messageText ?? "")
                    case .error, .aborted: return .failure(.malformedResult("the consult ended without an answer (\(payload.state.rawValue))"))
                    default: continue
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .failure(.request(.timedOut(method: "chat final", seconds: Double(timeout.components.seconds))))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.request(.notConnected))
        }
    }
}
