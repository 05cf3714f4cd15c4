import Foundation
import TalkLogging

/// What asking the Gateway to speak gave: a clip to play, or the word to use the local voice instead.
package enum TalkSpeechOutcome: Sendable, Equatable {
    case clip(TalkClip)
    case useLocalVoice(LocalVoiceReason)
}

/// Why the local voice speaks instead of the Gateway's.
package enum LocalVoiceReason: Sendable, Equatable, CustomStringConvertible {
    /// `UNAVAILABLE` with `details.fallbackEligible` (`talk_unconfigured`, `talk_provider_unsupported`,
    /// `method_unavailable`).
    case unavailable(reason: String, message: String)
    /// A clip in a format this client cannot play (µ-law, raw PCM without a rate, FLAC ...).
    case unsupportedFormat(String)
    /// `hello-ok` lists neither `talk.speak` nor `tts.speak`.
    case noGatewayVoice

    package var description: String {
        switch self {
        case .unavailable(let reason, let message): "the Gateway's voice is unavailable (\(reason)): \(message)"
        case .unsupportedFormat(let name): "the Gateway sent audio in \(name), which this client cannot play"
        case .noGatewayVoice: "the Gateway offers neither talk.speak nor tts.speak"
        }
    }
}

/// Why speaking through the Gateway failed in a way the local voice is not meant to cover.
package enum TalkSpeechError: Error, Equatable, CustomStringConvertible {
    case emptyText
    case request(GatewayRequestError)
    /// The reply is not a `TalkSpeakResult` we can use (missing or wrong-typed fields, invalid base64).
    case malformedReply(String)

    package var description: String {
        switch self {
        case .emptyText: "There is no text to speak."
        case .request(let e): e.description
        case .malformedReply(let why): "The Gateway's talk.speak reply was unusable: \(why)."
        }
    }
}

/// Asks the Gateway to speak a reply: `talk.speak` with the voice settings, or `tts.speak {text}` when
/// `hello-ok` does not list `talk.speak`. SessionBridge only fetches and checks the clip; AudioIO decodes it.
package struct TalkSpeechClient: Sendable {
    package let gateway: any GatewayCalling
    /// As the iOS client waits: a whole clip is synthesised before anything comes back.
    package var timeout: Duration = .seconds(125)
    private let logger: Logger

    package init(gateway: any GatewayCalling, logger: Logger) {
        self.gateway = gateway
        self.logger = logger
    }

    package func speak(_ text: String, voice: TalkVoiceSettings = TalkVoiceSettings()) async throws(TalkSpeechError)
        -> TalkSpeechOutcome
    {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw .emptyText }
        guard let methods = await gateway.hello?.methods else { throw .request(.notConnected) }
        let method: String
        let params: JSONValue
        if methods.contains("talk.speak") {
            method = "talk.speak"
            params = voice.params(text: text)
        } else if methods.contains("tts.speak") {
            method = "tts.speak"
            params = ["text": .string(text)]
        } else {
            return .useLocalVoice(.noGatewayVoice)
        }
        let reply: JSONValue?
        do {
            reply = try await gateway.request(method: method, params: params, timeout: timeout)
        } catch {
            if case .rejected(_, let shape) = error, shape.code == "UNAVAILABLE", shape.details?["fallbackEligible"]?.boolValue == true {
                let reason = shape.details?["reason"]?.stringValue ?? "unavailable"
                logger.notice("the Gateway cannot speak; using the local voice",
                              metadata: ["talk.reason": "\(reason.prefix(64))", "talk.method": "\(method)"])
                return .useLocalVoice(.unavailable(reason: String(reason.prefix(64)), message: String(shape.message.prefix(200))))
            }
            throw .request(error)
        }
        do {
            return try Self.outcome(of: reply, method: method)
        } catch {
            logger.error("unusable speech reply", metadata: ["talk.method": "\(method)", "error": "\(error)"])
            throw error
        }
    }

    /// Reads a `TalkSpeakResult`: a clip when its format can be played, the local voice when it cannot.
    static func outcome(of reply: JSONValue?, method: String) throws(TalkSpeechError) -> TalkSpeechOutcome {
        guard let reply, case .object = reply else { throw .malformedReply("the payload is not an object") }
        guard let base64 = reply["audioBase64"]?.stringValue else { throw .malformedReply("audioBase64 is missing or not a string") }
        guard let data = Data(base64Encoded: base64), !data.isEmpty else {
            throw .malformedReply(base64.isEmpty ? "audioBase64 is empty" : "audioBase64 is not valid base64")
        }
        func optionalText(_ key: String) throws(TalkSpeechError) -> String? {
            guard let value = reply[key], value != .null else { return nil }
            guard let s = value.stringValue else { throw .malformedReply("\(key) is not a string") }
            return s
        }
        let outputFormat = try optionalText("outputFormat")
        let mimeType = try optionalText("mimeType")
        let fileExtension = try optionalText("fileExtension")
        let provider = try optionalText("provider") ?? ""
        let audio = [UInt8](data)
        switch TalkClipFormat.classify(outputFormat: outputFormat, mimeType: mimeType, fileExtension: fileExtension, audio: audio) {
        case .failure(let unsupported):
            return .useLocalVoice(.unsupportedFormat(unsupported.name))
        case .success(let format):
            return .clip(TalkClip(audio: audio, format: format, outputFormat: outputFormat, mimeType: mimeType,
                                  fileExtension: fileExtension, provider: String(provider.prefix(64)), method: method))
        }
    }
}
