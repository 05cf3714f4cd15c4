import Foundation

/// One thing that happened in a Talk session, stamped with the wall time (ISO 8601 in JSON) and the monotonic
/// milliseconds since the session started (with file devices, the position in the input and output tracks).
package struct TalkEvent: Sendable, Equatable {
    package var wallTime: Date
    package var monotonicMs: Int64
    package var kind: Kind

    package enum Kind: Sendable, Equatable {
        case stateChanged(from: TalkState, to: TalkState, reason: String)
        /// Positions are the listener's stream milliseconds.
        case speechStarted(positionMs: Int)
        case speechEnded(lastSpeechEndMs: Int, closedAtMs: Int)
        case partialTranscript(String)
        case finalTranscript(text: String, engine: String, startMs: Int, endMs: Int, endToFinalMs: Double)
        /// Which engine's words an utterance sends (relay or local), the relay's time (end of speech to its final),
        /// and why not the relay's.
        case transcriptSource(engine: String, relayMs: Double?, fallbackReason: String?)
        /// A relay session in use: its mode, uplink (`opus 16 kHz`) and the uplink's bytes per second on the wire.
        case relayUplink(mode: String, uplink: String, bytesPerSecond: Int)
        /// The realtime relay's controls: a tool call answered, a mark acknowledged, output cleared.
        case relayNote(String)
        /// A final transcript that does not start a turn (empty, or heard while the reply played).
        case transcriptIgnored(text: String, reason: String)
        case transcriptSent(text: String, interruptedAtSeconds: Double?)
        case transcriptAcknowledged(runId: String?, status: String)
        case replyDelta(String)
        case replyFinal(String)
        /// The reply ended without text to speak (agent error, abort, no reply in time).
        case replyFailed(String)
        case speakingStarted(sentence: String, voice: String)
        case speakingStopped(sentence: String, completed: Bool)
        /// A turn is over (its reply spoken or failed, no reply in time, or cut off by the user): once per turn,
        /// after the state it rests in. `--max-turns` counts these.
        case turnEnded(reason: TurnEndReason)
        /// `offsetSeconds`: how much of the reply had been heard; `detectionLatencyMs`: from the start of the
        /// user's speech to the decision to stop.
        case bargeIn(offsetSeconds: Double, detectionLatencyMs: Double, partial: String)
        /// The reply's level changed: lowered while the user may be cutting in, back to 1 after.
        case replyLevel(gain: Double, reason: String)
        case voiceFallback(reason: String)
        case connectionChanged(String)
        case microphone(String)
        case error(String)
        /// The hands-free mode changed (`from` is nil at the start): `--wake`, `--ptt`, an idle timeout, a wake phrase.
        case modeChanged(from: HandsFreeMode?, to: HandsFreeMode, reason: String)
        /// A wake phrase was heard; `command` is what followed it in the same utterance (empty: the next one is taken).
        case wakePhrase(phrase: String, command: String)
        /// A push-to-talk command (`start`, `stop`, `cancel`, `once`) and what it came to.
        case pushToTalk(command: String, captureId: String, status: String?, transcript: String?)
        /// The spoken approval prompt for approval `id`: `step` is asked, repeated, allow-once/allow-always/deny
        /// (sent), confirm allow-always, not understood, left pending, withdrawn, failed; `detail` says more.
        case approvalPrompt(id: String, step: String, detail: String?)
    }

    /// The event's name in JSON.
    package var name: String {
        switch kind {
        case .stateChanged: "state"
        case .speechStarted: "speechStarted"
        case .speechEnded: "speechEnded"
        case .partialTranscript: "partial"
        case .finalTranscript: "final"
        case .transcriptSource: "transcriptSource"
        case .relayUplink: "relayUplink"
        case .relayNote: "relay"
        case .transcriptIgnored: "transcriptIgnored"
        case .transcriptSent: "transcriptSent"
        case .transcriptAcknowledged: "transcriptAcknowledged"
        case .replyDelta: "replyDelta"
        case .replyFinal: "replyFinal"
        case .replyFailed: "replyFailed"
        case .speakingStarted: "speakingStarted"
        case .speakingStopped: "speakingStopped"
        case .turnEnded: "turnEnded"
        case .bargeIn: "bargeIn"
        case .replyLevel: "replyLevel"
        case .voiceFallback: "voiceFallback"
        case .connectionChanged: "connection"
        case .microphone: "microphone"
        case .error: "error"
        case .modeChanged: "mode"
        case .wakePhrase: "wakePhrase"
        case .pushToTalk: "pushToTalk"
        case .approvalPrompt: "approvalPrompt"
        }
    }

    /// One line of JSON: `event`, `time`, `monotonicMs` and the event's own fields.
    package var jsonLine: String {
        var object: [String: Any] = ["event": name, "time": Self.iso8601(wallTime), "monotonicMs": monotonicMs]
        switch kind {
        case .stateChanged(let from, let to, let reason):
            object["from"] = from.rawValue
            object["to"] = to.rawValue
            object["reason"] = reason
        case .speechStarted(let position): object["positionMs"] = position
        case .speechEnded(let end, let closed):
            object["lastSpeechEndMs"] = end
            object["closedAtMs"] = closed
        case .partialTranscript(let text), .replyDelta(let text), .replyFinal(let text): object["text"] = text
        case .finalTranscript(let text, let engine, let start, let end, let endToFinal):
            object.merge(["text": text, "engine": engine, "startMs": start, "endMs": end,
                          "endToFinalMs": (endToFinal * 10).rounded() / 10]) { $1 }
        case .transcriptSource(let engine, let relayMs, let reason):
            object["engine"] = engine
            object["relayMs"] = relayMs.map { ($0 * 10).rounded() / 10 } ?? NSNull()
            object["fallbackReason"] = reason ?? NSNull()
        case .relayUplink(let mode, let uplink, let bytesPerSecond):
            object.merge(["mode": mode, "uplink": uplink, "bytesPerSecond": bytesPerSecond]) { $1 }
        case .transcriptIgnored(let text, let reason):
            object["text"] = text
            object["reason"] = reason
        case .transcriptSent(let text, let offset):
            object["text"] = text
            object["interruptedAtSeconds"] = offset.map { ($0 * 100).rounded() / 100 } ?? NSNull()
        case .transcriptAcknowledged(let runId, let status):
            object["runId"] = runId ?? NSNull()
            object["status"] = status
        case .replyFailed(let reason), .voiceFallback(let reason): object["reason"] = reason
        case .turnEnded(let reason): object["reason"] = reason.rawValue
        case .speakingStarted(let sentence, let voice):
            object["sentence"] = sentence
            object["voice"] = voice
        case .speakingStopped(let sentence, let completed):
            object["sentence"] = sentence
            object["completed"] = completed
        case .bargeIn(let offset, let latency, let partial):
            object["offsetSeconds"] = (offset * 100).rounded() / 100
            object["detectionLatencyMs"] = (latency * 10).rounded() / 10
            object["partial"] = partial
        case .replyLevel(let gain, let reason):
            object["gain"] = (gain * 1000).rounded() / 1000
            object["reason"] = reason
        case .connectionChanged(let state): object["state"] = state
        case .microphone(let message), .error(let message), .relayNote(let message): object["message"] = message
        case .modeChanged(let from, let to, let reason):
            object["from"] = from?.rawValue ?? NSNull()
            object["to"] = to.rawValue
            object["reason"] = reason
        case .wakePhrase(let phrase, let command):
            object["phrase"] = phrase
            object["command"] = command
        case .pushToTalk(let command, let captureId, let status, let transcript):
            object["command"] = command
            object["captureId"] = captureId
            object["status"] = status ?? NSNull()
            object["transcript"] = transcript ?? NSNull()
        case .approvalPrompt(let id, let step, let detail):
            object["id"] = id
            object["step"] = step
            object["detail"] = detail ?? NSNull()
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"event":"error","message":"an event could not be encoded"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
