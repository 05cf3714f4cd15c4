import AudioIO
import Dispatch
import Foundation
import SessionBridge
import Synchronization
import SpeechRecognition
import SpeechSynthesis
import TalkLogging
import TalkSession

extension OpenClawTalk {
    /// Talk mode: listens, sends each utterance to the Gateway's agent, speaks the reply as it streams, stops
    /// speaking when the user cuts in. Only wiring: the loop is `TalkSession`.
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Talk with the assistant: listen, send what you say, speak the reply.",
            discussion: "Runs until Ctrl-C or SIGTERM (or --max-turns / --seconds). Without --gateway it connects as "
                + "'setup' left it. --input/--output make files the microphone and the speaker, paced in real time "
                + "from the session's start, so a file session times like a live one. Logs go to stderr; --json "
                + "prints one event per line on stdout.",
            options: [
                .option("gateway", value: "url", help: "Connect to this Gateway (ws:// or wss://), pairing with --token or --password."),
            ] + SecretOptions.options + [
                .option("trust", value: "sha256", help: "Trust a first-seen wss:// certificate with this SHA-256."),
            ] + AudioDeviceOptions.options([.microphone, .speaker], help: Self.deviceHelp) + [
                .option("voice", value: "name", help: "espeak-ng voice (default en-us)."),
                .option("rate", value: "wpm", help: "Speed in words per minute, 80-450 (default 175)."),
                .option("silence-ms", value: "ms", help: "Silence that ends an utterance (default: talk.config's silenceTimeoutMs, else 700)."),
                .option("reply-timeout", value: "seconds", help: "How long to wait for a reply that shows no sign of life before reading chat.history (default 300: an agent using tools may be silent for minutes)."),
                .option("aec", value: "auto|webrtc|pulse|off", help: "Echo cancellation: auto (webrtc), webrtc (in process), pulse (module-echo-cancel), off."),
                RecognizerOptions.grammar, RecognizerOptions.modelDirectory,
                .flag("json", help: "Print the session's events on stdout, one JSON object per line."),
                .option("max-turns", value: "n", help: "Stop after this many turns (a reply spoken, failed or cut off)."),
                .option("seconds", value: "n", help: "Stop after this many seconds."),
                .flag("idle", help: "Start with Talk off: connect and serve the control socket; listen after 'talk start'."),
            ] + BargeInOptions.options + RunModes.options + RelayOptions.all + RealtimeOptions.all + DeskOptions.all
        )

        /// `run`'s words for the device options: its file ends keep time with the session.
        static let deviceHelp = AudioDeviceOptions.Help(
            input: "Use this audio file as the microphone, in real time, then silence.",
            fast: "With --input: feed the file as fast as possible (the output is then not a timed track).",
            sink: "The PulseAudio sink to speak on (default: the server's default).",
            output: "Write what would be played to this WAV file (16 kHz), one track from the start.")

        var gateway: String?
        var token: String?
        var password: String?
        var trust: String?
        var devices: AudioDeviceOptions
        var aec: EchoCancelMode
        var settings = TalkSession.Settings()
        var endpointing = EndpointerSettings.default
        var silenceGiven: Bool
        var recognizer: RecognizerOptions
        var json: Bool
        var maxTurns: Int?
        var seconds: Double?
        var modes: RunModes
        var relay: RelayOptions
        var realtime: RealtimeOptions
        var idle: Bool
        var desk: DeskOptions
        var configuration: RunConfiguration
        /// `OPENCLAW_TALK_AEC_RECORD`: a folder the in-process canceller's input is recorded to when the session ends
        /// (`SessionAudio.Request.aecRecord`).
        static var aecRecord: String? { ProcessInfo.processInfo.environment["OPENCLAW_TALK_AEC_RECORD"].flatMap { $0.isEmpty ? nil : $0 } }
        /// `--reply-timeout`: the client's patience for a reply (ChatClient.Settings.replyTimeout).
        var replyTimeout = ChatClient.Settings().replyTimeout

        init(_ parsed: ParsedArguments) throws {
            let (parsed, configuration) = try RunConfiguration.layered(parsed)
            self.configuration = configuration
            idle = parsed.flag("idle")
            gateway = parsed.option("gateway")
            (token, password) = try SecretOptions.read(parsed, includeEnvironment: gateway != nil)
            trust = parsed.option("trust")
            if gateway != nil, token == nil, password == nil { throw ValidationError("'--gateway' needs '--token' or '--password'") }
            if gateway == nil, token != nil || password != nil || trust != nil {
                throw ValidationError("'--token', '--password' and '--trust' go with '--gateway URL'")
            }
            devices = try AudioDeviceOptions(parsed, [.microphone, .speaker])
            aec = try EchoCancelMode.parse(parsed.option("aec"), devices: devices)
            if let voice = parsed.option("voice") {
                settings.voice.voice = voice
                settings.voiceFixed = true
            }
            if let rate = try parsed.intOption("rate", range: 80...450) {
                settings.voice.rateWPM = rate
                settings.rateFixed = true
            }
            if let silence = try parsed.intOption("silence-ms", range: 100...10_000) { endpointing.silenceMs = silence }
            silenceGiven = parsed.option("silence-ms") != nil
            settings.bargeIn = try BargeInOptions.policy(parsed)
            if let seconds = try parsed.intOption("reply-timeout", range: 10...3600) { replyTimeout = .seconds(seconds) }
            // The loop gives a turn up only after the client's patience and its chat.history fallback have had their time.
            settings.replyTimeout = replyTimeout + ChatClient.Settings().historyWindow + .seconds(15)
            recognizer = try RecognizerOptions(parsed)
            json = parsed.flag("json")
            maxTurns = try parsed.intOption("max-turns", range: 1...1_000_000)
            seconds = try parsed.doubleOption("seconds", range: 0.1...10_000_000)
            modes = try RunModes(parsed)
            modes.apply(to: &settings, modelDirectory: recognizer.configuration.modelDirectory)
            relay = try RelayOptions(parsed)
            realtime = try RealtimeOptions(parsed)
            desk = DeskOptions(parsed)
        }

        func run() async throws {
            var runLogger = Logger(label: "openclaw-talk.run")
            runLogger[metadataKey: "command"] = "run"
            let logger = runLogger
            // First, before the lock, the Gateway or any device: from here on a SIGINT or SIGTERM gets the clean stop
            // (`--aec pulse` loads module-echo-cancel, which only the clean stop unloads).
            let signals = UnixSignals([.sigint, .sigterm])
            let stop = StopSignal(logger: logger)
            _ = try await ServiceGroup.run(signals: signals, stop: stop, logger: logger) { services -> Void? in
                let daemon = try await services.start("the daemon runtime") {
                    try DaemonRuntime(configuration: configuration, logger: Logger(label: "openclaw-talk.daemon"))
                } stop: { await $0.shutdown() }
                do { try await run(daemon, services: services, stop: stop, logger: logger) } catch where !(error is ServiceGroup.Stopped) {
                    daemon.failed(error)
                    throw error
                }
                return ()
            }
        }

        /// Connects, opens the devices, makes the loop the mode asks for and serves it (`ServeSequence`); each part
        /// goes into `services` as it starts.
        private func run(_ daemon: DaemonRuntime, services: ServiceGroup, stop: StopSignal, logger: Logger) async throws {
            let version = OpenClawTalk.version.split(separator: " ").last.map(String.init) ?? "0.1.0"
            let paths = StoragePaths.standard()
            if let gateway { try await pair(gateway, paths: paths, version: version, logger: logger) }
            // Realtime mode has no push-to-talk: its node does not declare talk.ptt.* (ClientProfile.node).
            let gatewaySession = try GatewaySession.fromStoredSetup(paths: paths, version: version, pushToTalk: !realtime.realtime,
                                                                   logger: logger)
            var chatSettings = ChatClient.Settings()
            chatSettings.replyTimeout = replyTimeout
            let chat = ChatClient(
                connection: gatewaySession.operatorConnection, outbox: ChatOutbox(file: ChatOutbox.file(in: paths), logger: logger),
                settings: chatSettings, logger: logger)
            let configs = await chat.talkConfigUpdates()
            let configWait = Task { await Self.firstConfig(from: configs, within: .seconds(3)) }
            let wakePhrases = await RunModes.wakePhrases(gatewaySession, logger: logger)   // before the sockets connect
            // Before the sockets connect too: a Gateway may invoke a node command right after hello-ok, before the loop
            // runs; the request waits here and is answered once the loop serves (NodeCommandRouter.serve).
            let nodeRequests = await gatewaySession.node.eventUpdates()
            let gatewayTasks = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await gatewaySession.run() }
                    group.addTask { await chat.run() }
                }
            }
            // The sockets' threads end before the process does: exiting beside a thread still inside OpenSSL crashes
            // in its exit-time cleanup.
            services.started("the Gateway sockets") {
                gatewayTasks.cancel()
                await gatewayTasks.value
            }
            // "operator pairing pending: approve <id>" or "no operator credential: ..." on stderr, as they change.
            let pairingNotices = SessionStatusTracker.announcePairing(gatewaySession, logger: logger)
            services.started("pairing notices") { pairingNotices.forEach { $0.cancel() } }
            // The silence window comes from talk.config unless --silence-ms gave one, and the endpointer takes it
            // at the start: wait (briefly) for the Gateway's answer.
            var endpointing = endpointing
            let gatewayConfig = await configWait.value
            if !silenceGiven, let ms = gatewayConfig?.silenceTimeoutMs, (100...10_000).contains(ms) { endpointing.silenceMs = ms }
            // Loaded before the devices open: module-echo-cancel, once loaded, wants its streams soon (PulseAudio 16
            // stopped answering now and then when the capture opened a second after the module loaded).
            if !realtime.realtime { try await relay.requireRelay(gateway: gatewaySession.operatorConnection, logger: logger) }
            // The live session's decoder alone runs realtime where allowed (`DecodingThread`): it must keep up with the microphone.
            var live = recognizer.configuration
            live.decodingThread = .live
            let engine = realtime.realtime ? nil : try PocketSphinxRecognizer(configuration: live, logger: logger)
            if let engine { services.started("the live decoder's realtime report") { engine.logRealtimeRuns() } }
            let synthesizer = realtime.realtime ? nil : try EspeakSynthesizer(logger: logger)
            logger.info("listening", metadata: ["talk.silenceMs": "\(endpointing.silenceMs)"])
            // `--aec pulse` loads a module here that only `close()` unloads: from now on every way out closes them.
            let audioRequest = SessionAudio.Request(mode: aec, devices: devices, aecRecord: Self.aecRecord)
            let devices = try await services.start("the audio devices") {
                try await SessionAudio.open(audioRequest, logger: logger)
            } stop: { await $0.close() }
            let names = DaemonStatusNames(
                gatewayURL: try? GatewayConfig.load(paths: paths)?.url, audioSource: self.devices.captureName,
                audioSink: self.devices.playbackName)
            if realtime.realtime {
                let session = try await realtime.session(
                    devices: devices, gateway: gatewaySession, talkConfig: gatewayConfig, configUpdates: await chat.talkConfigUpdates(),
                    gatewayURL: names.gatewayURL, bargeIn: settings.bargeIn, services: services, stop: stop, logger: logger)
                // Approvals and notifications as in the native loop (shown, not spoken: the relay owns the voice).
                try await serve(session, daemon: daemon, gateway: gatewaySession, devices: devices, names: names, version: version,
                                greeting: "Realtime Talk is on; speak. Ctrl-C ends it.", services: services, stop: stop, logger: logger) { notifications in
                    Task { await DeskOptions.realtimeNodeRouter(gatewaySession, notifications: notifications, logger: logger).serve(nodeRequests) }
                }
                return
            }
            guard let engine, let synthesizer else { return }
            let talk = try await nativeSession(devices: devices, gateway: gatewaySession, chat: chat, endpointing: endpointing,
                                               engine: engine, synthesizer: synthesizer, logger: logger)
            if let gatewayConfig { await talk.apply(gatewayConfig) }
            // A stream of its own: the first one may have ended with the wait above.
            let configFollower = Task { for await config in await chat.talkConfigUpdates() { await talk.apply(config) } }
            services.started("talk.config follower") { configFollower.cancel() }
            try await serve(talk, daemon: daemon, gateway: gatewaySession, devices: devices, names: names, version: version,
                            greeting: self.devices.input == nil ? "Talk mode is on; speak. Ctrl-C ends it." : nil,
                            services: services, stop: stop, logger: logger) { notifications in
                RunModes.serve(talk, wake: wakePhrases, requests: nodeRequests, gateway: gatewaySession, paths: paths,
                               others: ["system.notify": notifications.nodeHandler], logger: logger)
            }
        }

        /// The native loop over `devices`: local recognition (and the Gateway's transcription relay, as `--stt` says),
        /// the agent's reply through `chat`, spoken by the Gateway's voice or espeak-ng.
        private func nativeSession(devices: SessionAudio, gateway gatewaySession: GatewaySession, chat: ChatClient,
                                   endpointing: EndpointerSettings, engine: PocketSphinxRecognizer, synthesizer: EspeakSynthesizer,
                                   logger: Logger) async throws -> TalkSession {
            let fast = self.devices.fast
            let notifier = TalkModeNotifier(gateway: gatewaySession.operatorConnection, logger: logger)
            let (capture, transcripts) = relay.transcription(
                capture: devices.capture, gateway: gatewaySession.operatorConnection, preRollMs: endpointing.preRollMs, logger: logger)
            var dependencies = TalkSession.Dependencies(
                capture: capture, playback: devices.playback,
                makeListener: { capture in
                    try UtterancePipeline(capture: capture, recognizer: engine, settings: endpointing,
                                          timing: fast ? .streamTime : .wallClock, logger: logger)
                },
                synthesizer: synthesizer, conversation: ChatConversation(chat),
                gatewayVoice: GatewayTalkVoice(client: TalkSpeechClient(gateway: gatewaySession.operatorConnection, logger: logger)),
                announce: { enabled, phase in
                    // While the socket is down a notice is lost anyway; the session repeats the phase on connect.
                    guard case .connected = await gatewaySession.operatorConnection.state else { return }
                    await notifier.announce(enabled: enabled, phase: phase)
                })
            dependencies.transcriptSource = transcripts
            return TalkSession(dependencies: dependencies, settings: settings, logger: logger)
        }

        private func serve<Loop: TalkLoop>(
            _ loop: Loop, daemon: DaemonRuntime, gateway: GatewaySession, devices: SessionAudio, names: DaemonStatusNames,
            version: String, greeting: String?, services: ServiceGroup, stop: StopSignal, logger: Logger,
            nodeCommands: @escaping @Sendable (NotificationDesk) -> Task<Void, Never>
        ) async throws {
            let sequence = ServeSequence(
                loop: loop, daemon: daemon, gateway: gateway, devices: devices,
                names: names,
                desk: desk, json: json, idle: idle, maxTurns: maxTurns, seconds: seconds, version: version, greeting: greeting,
                nodeCommands: nodeCommands)
            try await sequence.run(services: services, stop: stop, logger: logger)
        }

        /// Pairs with the Gateway as `setup --gateway URL --token T` does, without asking anything.
        private func pair(_ url: String, paths: StoragePaths, version: String, logger: Logger) async throws {
            var code: SetupCode
            do { code = try SetupCode.parse(url) } catch { throw ValidationError(error.description) }
            code.token = token
            code.password = password
            var request = GatewaySetup.Request(code: code)
            request.trustFingerprint = trust
            let hooks = GatewaySetup.Hooks(confirmTrust: { _, _ in nil }) { progress in
                logger.info("pairing", metadata: ["progress": "\(progress)"])
            }
            _ = try await GatewaySetup(paths: paths, version: version, logger: logger).run(request, hooks: hooks)
        }

        /// The first `talk.config` the Gateway gives: the stream starts with the empty one known before any connect,
        /// then one per connect (empty when the Gateway has none). Nil when none came in time.
        static func firstConfig(from configs: AsyncStream<TalkConfig>, within limit: Duration) async -> TalkConfig? {
            await withTaskGroup(of: TalkConfig?.self) { group in
                group.addTask {
                    var seen = 0
                    for await config in configs {
                        seen += 1
                        if config != TalkConfig() || seen > 1 { return config }
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        static func describe(_ state: ConnectionState) -> String {
            switch state {
            case .idle: "idle"
            case .connecting(let attempt): "connecting (attempt \(attempt))"
            case .connected(let version): "connected (Gateway \(version))"
            case .reconnecting(let attempt, _, let reason): "reconnecting (attempt \(attempt)): \(reason)"
            case .waitingForApproval: "waiting for approval"
            case .disconnected(let reason): "disconnected: \(reason)"
            }
        }
    }
}
