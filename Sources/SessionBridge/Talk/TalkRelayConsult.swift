import Foundation

/// A realtime relay's `toolCall` answered as the Apple relay session does (fact sheet §5.4, upstream
/// `RealtimeTalkRelaySession.swift`): the consult tool (`openclaw_agent_consult`) through `talk.client.toolCall`,
/// whose run's `chat` final is the answer, handed back with `submitToolResult` as `{text}` (or `{error}`); the
/// control tool (`openclaw_agent_control`: status, steer, cancel, follow up the running consult) through
/// `talk.session.steer {sessionId, sessionKey, text, mode?}`, whose result is handed back as it came.
extension TalkRelayClient {
    package static let consultToolName = "openclaw_agent_consult"
    package static let controlToolName = "openclaw_agent_control"

    package func answerToolCall(callId: String, name: String, args: JSONValue, timeout: Duration = .seconds(120)) async
        -> Result<String, TalkRelayError>
    {
        if name == Self.controlToolName, currentSession?.names.steer != nil { return await answerControl(callId: callId, args: args) }
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

    /// The control tool: `talk.session.steer` with the call's `text` (default "status") and `mode`, its result
    /// submitted as the tool's result (or `{error}`). The returned text is the result's `message`.
    private func answerControl(callId: String, args: JSONValue) async -> Result<String, TalkRelayError> {
        let outcome: Result<JSONValue, TalkRelayError>
        do {
            outcome = .success(try await steer(text: args["text"]?.stringValue, mode: args["mode"]?.stringValue))
        } catch {
            outcome = .failure(error)
        }
        let result: JSONValue = switch outcome {
        case .success(let reply): reply.objectValue != nil ? reply : ["result": reply]
        case .failure(let error): ["error": .string("\(error)")]
        }
        do {
            try await submitToolResult(callId: callId, result: result)
        } catch {
            logger.warning("the tool result did not reach the relay", metadata: ["error": "\(error)"])
            return .failure(error)
        }
        return outcome.map { $0["message"]?.stringValue ?? "" }
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
