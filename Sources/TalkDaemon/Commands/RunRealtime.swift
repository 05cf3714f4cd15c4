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
        // The relay hears everything the microphone does: a wake phrase or push-to-talk cannot hold anything back.
        if realtime, let mode = ["wake", "ptt"].first(where: { parsed.flag($0) }) ?? (parsed.option("idle-timeout") != nil ? "idle-timeout" : nil) {
            throw ValidationError("'--\(mode)' goes with '--mode talk'; the realtime relay hears everything the microphone does")
        }
    }

    /// What the status names of a served realtime session.
    struct Described: Sendable {
        var gatewayURL: String?
        var audioSource: String
        var audioSink: String
    }

    /// Runs the realtime session as the daemon (control socket, status, `stop`) until `stop` fires (or
    /// `maxTurns` answers); prints events as JSON lines if asked. `idle`: Talk off until `talk start`.
    /// `talkConfig`: the Gateway's `talk.config` (the first one, then `configUpdates` as it is read again at each
    /// connect), whose `talk.realtime` provider, model and voice each new relay session asks for.
    func run(_ daemon: DaemonRuntime, devices: RunAudio, gateway: GatewaySession, talkConfig: TalkConfig?,
             configUpdates: AsyncStream<TalkConfig>, described: Described, bargeIn: BargeInPolicy,
             json: Bool, idle: Bool, maxTurns: Int?, seconds: Double?, version: String, desk: DeskOptions,
             stop: StopSignal, logger: Logger) async throws
    {
        let connection = gateway.operatorConnection
        if let seconds { Task { try? await Task.sleep(for: .milliseconds(Int(seconds * 1000))); stop.fire("\(seconds) s") } }
        // The relay session needs the Gateway's hello (its main session key, its methods): a Gateway that is
        // down when the daemon starts is waited for, as the native loop waits, until it answers or `stop` fires.
        let waitStarted = ContinuousClock.now
        var told = false
        while await connection.hello == nil {
            if stop.hasFired {
                logger.info("stopping before the Gateway answered")
                return
            }
            if !told, ContinuousClock.now - waitStarted >= .seconds(5) {
                told = true
                FileHandle.standardError.write(Data("Waiting for the Gateway (\(described.gatewayURL ?? "stored setup")) to answer…\n".utf8))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        var clientSettings = TalkRelayClient.Settings()
        clientSettings.sessionKey = await connection.hello?.mainSessionKey
        clientSettings.realtime = talkConfig?.realtime
        let client = TalkRelayClient(gateway: connection, mode: .realtime, settings: clientSettings, logger: logger)
        // An empty config is the one known before any connect, not a Gateway's answer.
        let configFollower = Task { for await config in configUpdates where config != TalkConfig() { await client.setRealtime(config.realtime) } }
        defer { configFollower.cancel() }
        guard await client.names() != nil else {
            throw ValidationError("The Gateway offers no realtime relay (talk.session.create or talk.realtime.session)")
        }
        var settings = RealtimeTalkSession.Settings()
        settings.bargeIn = bargeIn
        let session = RealtimeTalkSession(capture: devices.capture, playback: devices.playback, relay: client, settings: settings, logger: logger)
        // Approvals and notifications as in the native loop (shown, not spoken: the relay owns the voice).
        let desks = desk.desks(gateway: gateway, speaker: nil, logger: logger)
        defer { desks.task.cancel() }
        let nodeCommands = Task { await DeskOptions.realtimeNodeRouter(gateway, notifications: desks.notifications, logger: logger).run() }
        defer { nodeCommands.cancel() }
        let host = try await daemon.serve(
            session: DeskSession(
                inner: RealtimeDaemonSession(talk: session, gateway: gateway, gatewayURL: described.gatewayURL, audioSource: described.audioSource,
                                             audioSink: described.audioSink, echoCancellation: devices.echoCancellation, logger: logger),
                approvals: desks.approvals, notifications: desks.notifications),
            gateway: gateway, version: version, displayName: gateway.displayName, stop: stop).inner
        let printer = Task {
            var turns = 0
            for await event in session.events {
                await host.observe(event)
                if json { FileHandle.standardOutput.write(Data((event.jsonLine + "\n").utf8)) }
                // An answer ends a turn; the control commands' own returns to listening do not.
                if case .stateChanged(_, .listening, let reason) = event.kind, !["started", "resumed", "paused", "talk stop"].contains(reason) {
                    turns += 1
                    if let maxTurns, turns >= maxTurns { stop.fire("\(turns) turns") }
                }
            }
        }
        if json { FileHandle.standardOutput.write(Data((devices.eventLine() + "\n").utf8)) }
        await devices.startTrack()
        do {
            try await session.start(listening: !idle)
        } catch {
            await session.stop()
            await printer.value
            throw ValidationError("The realtime relay could not start: \(error)")
        }
        await daemon.ready()
        if !idle { FileHandle.standardError.write(Data("Realtime Talk is on; speak. Ctrl-C ends it.\n".utf8)) }
        let reason = await stop.wait(seconds: seconds)
        logger.info("stopping", metadata: ["reason": "\(reason)"])
        await session.stop()
        await printer.value
    }
}
