import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import TalkSession

/// `run`'s choice of transcript engine (`--stt local|gateway|auto`) and the wiring of the Gateway's
/// transcription relay into the loop: the capture is tapped so the relay hears each utterance.
struct RelayOptions: Sendable {
    enum STT: String, Sendable { case local, gateway, auto }

    static let all: [OptionSpec] = [
        .option("stt", value: "local|gateway|auto",
                help: "Whose words are sent: local PocketSphinx, the Gateway's transcription relay, or the relay when the Gateway offers it and says it is ready (default auto). Local recognition still finds the end of each utterance."),
        .option("relay-wait-ms", value: "ms",
                help: "How long after the end of speech the relay's words may take before the local ones are sent (default 1500)."),
    ]

    var stt = STT.auto
    var finalWait: Duration = .milliseconds(1_500)

    init(_ parsed: ParsedArguments) throws {
        if let text = parsed.option("stt") {
            guard let choice = STT(rawValue: text) else {
                throw ValidationError("Invalid value '\(text)' for '--stt': expected local, gateway or auto")
            }
            stt = choice
        }
        if let ms = try parsed.intOption("relay-wait-ms", range: 100...30_000) { finalWait = .milliseconds(ms) }
        if stt == .local, parsed.option("relay-wait-ms") != nil {
            throw ValidationError("'--relay-wait-ms' needs '--stt gateway' or '--stt auto'")
        }
    }

    /// With `--stt gateway` the Gateway must list the relay once connected (bounded wait), else the run ends with an
    /// error, before the devices open.
    func requireRelay(gateway: GatewayConnection, logger: Logger) async throws {
        guard stt == .gateway else { return }
        let client = TalkRelayClient(gateway: gateway, mode: .transcription, logger: logger)
        let deadline = ContinuousClock.now + .seconds(15)
        while await gateway.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard await client.names() != nil else {
            throw RunFailure("The Gateway offers no transcription relay (talk.session.create); use '--stt local' or '--stt auto'")
        }
    }

    /// The capture the loop listens on and the relay that gives its words (nil with `--stt local`).
    func transcription(capture: any AudioCaptureDevice, gateway: GatewayConnection, preRollMs: Int, logger: Logger)
        -> (any AudioCaptureDevice, (any TranscriptSource)?)
    {
        guard stt != .local else { return (capture, nil) }
        let client = TalkRelayClient(gateway: gateway, mode: .transcription, logger: logger)
        let tap = UtteranceAudioTap(capture)
        var settings = RelayTranscription.Settings()
        settings.finalWait = finalWait
        settings.preRollMs = preRollMs
        let relay = RelayTranscription(client: client, frames: tap.frames, settings: settings, logger: logger)
        logger.info("transcripts", metadata: ["talk.stt": "\(stt.rawValue)", "talk.relayWaitMs": "\(RelayTranscription.milliseconds(finalWait))"])
        return (tap, relay)
    }
}
