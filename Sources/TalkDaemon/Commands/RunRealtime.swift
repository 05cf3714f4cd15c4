import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import TalkSession

/// `run --mode realtime`: the Gateway's realtime relay hears the microphone and answers in audio
/// (`RealtimeTalkSession`); the native loop (local recognition, chat.send, local voice) does not run. Served as the
/// native loop is (`ServeSequence`).
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
        // The relay hears everything the microphone does: a wake phrase or push-to-talk cannot hold anything back.
        if realtime, let mode = ["wake", "ptt"].first(where: { parsed.flag($0) }) ?? (parsed.option("idle-timeout") != nil ? "idle-timeout" : nil) {
            throw ValidationError("'--\(mode)' goes with '--mode talk'; the realtime relay hears everything the microphone does")
        }
    }

    /// The realtime loop over `devices`, once the Gateway answered (its hello names the main session key and the
    /// relay's methods): a Gateway that is down when the daemon starts is waited for, as the native loop waits,
    /// until it answers or `stop` fires. `talkConfig`: the Gateway's first `talk.config`, then `configUpdates` as it
    /// is read again at each connect, whose `talk.realtime` provider, model and voice each new relay session asks for.
    /// - Throws: `RunFailure` when the Gateway offers no realtime relay.
    func session(devices: SessionAudio, gateway: GatewaySession, talkConfig: TalkConfig?, configUpdates: AsyncStream<TalkConfig>,
                 gatewayURL: String?, bargeIn: BargeInPolicy, services: ServiceGroup, stop: StopSignal, logger: Logger)
        async throws -> RealtimeTalkSession
    {
        let connection = gateway.operatorConnection
        let waitStarted = ContinuousClock.now
        var told = false
        while await connection.hello == nil {
            try services.checkNotStopped(before: "the realtime relay")
            if !told, ContinuousClock.now - waitStarted >= .seconds(5) {
                told = true
                StandardStream.write("Waiting for the Gateway (\(gatewayURL ?? "stored setup")) to answer…\n", to: STDERR_FILENO)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        var clientSettings = TalkRelayClient.Settings()
        clientSettings.sessionKey = await connection.hello?.mainSessionKey
        clientSettings.realtime = talkConfig?.realtime
        let client = TalkRelayClient(gateway: connection, mode: .realtime, settings: clientSettings, logger: logger)
        // An empty config is the one known before any connect, not a Gateway's answer.
        let configFollower = Task { for await config in configUpdates where config != TalkConfig() { await client.setRealtime(config.realtime) } }
        services.started("realtime config follower") { configFollower.cancel() }
        guard await client.names() != nil else {
            throw RunFailure("The Gateway offers no realtime relay (talk.session.create or talk.realtime.session)")
        }
        var settings = RealtimeTalkSession.Settings()
        settings.bargeIn = bargeIn
        settings.echoCancelled = devices.echoCancelMode != .off
        return RealtimeTalkSession(capture: devices.capture, playback: devices.playback, relay: client, settings: settings, logger: logger)
    }
}

/// A failure while `run` runs (not a usage error): "Error: <description>" on stderr, exit status 1.
struct RunFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
