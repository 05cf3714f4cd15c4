import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import TalkSession

/// `run --mode realtime`: the Gateway's realtime relay hears the microphone and answers in audio
/// (`RealtimeTalkSession`); the native loop (local recognition, chat.send, local voice) does not run.
struct RealtimeOptions: Sendable {
    static let all: [OptionSpec] = [
        .option("mode", value: "talk|realtime",
                help: "talk (default): local recognition, the agent's text reply, spoken here. realtime: the Gateway's realtime relay hears you and answers in audio."),
    ]

    var realtime = false

    init(_ parsed: ParsedArguments) throws {
        switch parsed.option("mode") {
        case nil, "talk": realtime = false
        case "realtime": realtime = true
        case let other?: throw ValidationError("Invalid value '\(other)' for '--mode': expected talk or realtime")
        }
        if realtime, parsed.option("stt") != nil { throw ValidationError("'--stt' goes with '--mode talk'; the realtime relay hears for itself") }
    }

    /// Runs the realtime session until `stop` fires (or `maxTurns` answers); prints events as JSON lines if asked.
    func run(capture: any AudioCaptureDevice, playback: any AudioPlaybackDevice, gateway: GatewayConnection, bargeIn: Bool,
             json: Bool, maxTurns: Int?, stop: StopSignal, seconds: Double?, startTrack: @Sendable () async -> Void, logger: Logger) async throws
    {
        let deadline = ContinuousClock.now + .seconds(15)
        while await gateway.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        var clientSettings = TalkRelayClient.Settings()
        clientSettings.sessionKey = await gateway.hello?.mainSessionKey
        let client = TalkRelayClient(gateway: gateway, mode: .realtime, settings: clientSettings, logger: logger)
        guard await client.names() != nil else {
            throw ValidationError("The Gateway offers no realtime relay (talk.session.create or talk.realtime.session)")
        }
        var settings = RealtimeTalkSession.Settings()
        settings.bargeIn = bargeIn
        let session = RealtimeTalkSession(capture: capture, playback: playback, relay: client, settings: settings, logger: logger)
        let printer = Task {
            var turns = 0
            for await event in session.events {
                if json { FileHandle.standardOutput.write(Data((event.jsonLine + "\n").utf8)) }
                if case .stateChanged(_, .listening, let reason) = event.kind, reason != "started" {
                    turns += 1
                    if let maxTurns, turns >= maxTurns { stop.fire("\(turns) turns") }
                }
            }
        }
        await startTrack()
        do {
            try await session.start()
        } catch {
            await session.stop()
            await printer.value
            throw ValidationError("The realtime relay could not start: \(error)")
        }
        FileHandle.standardError.write(Data("Realtime Talk is on; speak. Ctrl-C ends it.\n".utf8))
        let reason = await stop.wait(seconds: seconds)
        logger.info("stopping", metadata: ["reason": "\(reason)"])
        await session.stop()
        await printer.value
    }
}
