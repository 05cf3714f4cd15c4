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
                .option("source", value: "name", help: "The PulseAudio source to listen on (default: the server's default)."),
                .option("input", value: "file", help: "Use this audio file as the microphone, in real time, then silence."),
                .flag("fast", help: "With --input: feed the file as fast as possible (the output is then not a timed track)."),
                .option("sink", value: "name", help: "The PulseAudio sink to speak on (default: the server's default)."),
                .option("output", value: "file.wav", help: "Write what would be played to this WAV file (16 kHz), one track from the start."),
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

        var gateway: String?
        var token: String?
        var password: String?
        var trust: String?
        var source: String?
        var input: String?
        var fast: Bool
        var sink: String?
        var output: String?
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
            source = parsed.option("source")
            input = parsed.option("input")
            fast = parsed.flag("fast")
            sink = parsed.option("sink")
            output = parsed.option("output")
            if source != nil, input != nil { throw ValidationError("'--source' and '--input' cannot be used together") }
            if sink != nil, output != nil { throw ValidationError("'--sink' and '--output' cannot be used together") }
            if fast, input == nil { throw ValidationError("'--fast' needs '--input FILE'") }
            aec = try EchoCancelMode.parse(parsed.option("aec"), input: input, output: output)
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
            let daemon = try DaemonRuntime(configuration: configuration, logger: Logger(label: "openclaw-talk.daemon"))
            do { try await run(daemon) } catch {
                daemon.failed(error)
                throw error
            }
        }

        private func run(_ daemon: DaemonRuntime) async throws {
            let version = OpenClawTalk.version.split(separator: " ").last.map(String.init) ?? "0.1.0"
            var runLogger = Logger(label: "openclaw-talk.run")
            runLogger[metadataKey: "command"] = "run"
            let logger = runLogger
            let paths = StoragePaths.standard()
            if let gateway { try await pair(gateway, paths: paths, version: version, logger: logger) }
            let gatewaySession = try GatewaySession.fromStoredSetup(paths: paths, version: version, logger: logger)
            var chatSettings = ChatClient.Settings()
            chatSettings.replyTimeout = replyTimeout
            let chat = ChatClient(
                connection: gatewaySession.operatorConnection, outbox: ChatOutbox(file: ChatOutbox.file(in: paths), logger: logger),
                settings: chatSettings, logger: logger)
            let configs = await chat.talkConfigUpdates()
            let configWait = Task { await Self.firstConfig(from: configs, within: .seconds(3)) }
            let wakePhrases = await RunModes.wakePhrases(gatewaySession, logger: logger)   // before the sockets connect
            let gatewayTasks = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await gatewaySession.run() }
                    group.addTask { await chat.run() }
                }
            }
            // "operator pairing pending: approve <id>" or "no operator credential: ..." on stderr, as they change.
            let pairingNotices = SessionStatusTracker.announcePairing(gatewaySession, logger: logger)
            defer { pairingNotices.forEach { $0.cancel() } }
            // The silence window comes from talk.config unless --silence-ms gave one, and the endpointer takes it
            // at the start: wait (briefly) for the Gateway's answer.
            var endpointing = endpointing
            let gatewayConfig = await configWait.value
            if !silenceGiven, let ms = gatewayConfig?.silenceTimeoutMs, (100...10_000).contains(ms) { endpointing.silenceMs = ms }
            // Before the devices open: `--aec pulse` loads module-echo-cancel, which only the clean stop unloads, so a
            // SIGINT or SIGTERM from here on must be caught (the stop then comes once the session is up).
            let stop = StopSignal(logger: logger)
            logger.info("listening", metadata: ["talk.silenceMs": "\(endpointing.silenceMs)"])
            let audioRequest = RunAudio.Request(mode: aec, source: source, input: input, fast: fast, sink: sink, output: output)
            if realtime.realtime {
                // Served like the native loop (control socket, status), but the relay is its own loop: RunRealtime.
                let devices = try await RunAudio.open(audioRequest, logger: logger)
                var failure: (any Error)?
                do {
                    try await realtime.run(daemon, devices: devices, gateway: gatewaySession, talkConfig: gatewayConfig,
                                           configUpdates: await chat.talkConfigUpdates(), described: describedAudio(paths),
                                           bargeIn: settings.bargeIn,
                                           json: json, idle: idle, maxTurns: maxTurns, seconds: seconds, version: version, desk: desk,
                                           stop: stop, logger: logger)
                } catch {
                    failure = error
                }
                await devices.close()
                // The sockets' threads end before the process does: exiting beside a thread still inside OpenSSL
                // crashes in its exit-time cleanup.
                gatewayTasks.cancel()
                await gatewayTasks.value
                await daemon.shutdown()
                if let failure { throw failure }
                return
            }
            let engine = try PocketSphinxRecognizer(configuration: recognizer.configuration, logger: logger)
            let synthesizer = try EspeakSynthesizer(logger: logger)
            // Last before the session starts: `--aec pulse` loads a module that `close()` must unload.
            let devices = try await RunAudio.open(audioRequest, logger: logger)
            let (settledEndpointing, fast) = (endpointing, fast)
            let notifier = TalkModeNotifier(gateway: gatewaySession.operatorConnection, logger: logger)
            let (capture, transcripts) = try await relay.transcription(
                capture: devices.capture, gateway: gatewaySession.operatorConnection, preRollMs: settledEndpointing.preRollMs, logger: logger)
            var dependencies = TalkSession.Dependencies(
                capture: capture, playback: devices.playback,
                makeListener: { capture in
                    try UtterancePipeline(capture: capture, recognizer: engine, settings: settledEndpointing,
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
            let talk = TalkSession(dependencies: dependencies, settings: settings, logger: logger)

            if let gatewayConfig { await talk.apply(gatewayConfig) }
            // A stream of its own: the first one may have ended with the wait above.
            let configFollower = Task { for await config in await chat.talkConfigUpdates() { await talk.apply(config) } }
            // Approvals and notifications (issue 26): around the loop, not in it, until the spoken prompt lands.
            let desks = desk.desks(gateway: gatewaySession, speaker: nil, logger: logger)
            let served = try await daemon.serve(
                session: DeskSession(
                    inner: DaemonSession(talk: talk, gateway: gatewaySession, gatewayURL: try? GatewayConfig.load(paths: paths)?.url,
                                         audioSource: input.map { "file:" + $0 } ?? source ?? "default",
                                         audioSink: output.map { "file:" + $0 } ?? sink ?? "default",
                                         echoCancellation: devices.echoCancellation, pushToTalk: DaemonSession.pushToTalk(talk), logger: logger),
                    approvals: desks.approvals, notifications: desks.notifications),
                gateway: gatewaySession, version: version, displayName: gatewaySession.displayName, stop: stop)
            let host = served.inner
            let printer = Task { [json, maxTurns] in
                var turns = 0
                for await event in talk.events {
                    await host.observe(event)
                    if json { StandardStream.write(event.jsonLine + "\n", to: STDOUT_FILENO) }
                    if case .turnEnded = event.kind {
                        turns += 1
                        if let maxTurns, turns >= maxTurns { stop.fire("\(turns) turns") }
                    }
                }
            }
            if json { StandardStream.write(devices.eventLine() + "\n", to: STDOUT_FILENO) }
            await devices.startTrack()
            do { try await talk.start(listening: !idle) } catch {
                await devices.close()
                throw error
            }
            let handsFree = RunModes.serve(talk, wake: wakePhrases, gateway: gatewaySession, paths: paths,
                                           others: ["system.notify": desks.notifications.nodeHandler], logger: logger)
            await daemon.ready()
            // After the start, so every event counts its milliseconds from the session's (and the tracks') start.
            let connection = Task {
                for await state in await gatewaySession.operatorConnection.stateUpdates() {
                    if case .connected = state { await talk.connectionChanged(Self.describe(state), connected: true) } else {
                        await talk.connectionChanged(Self.describe(state), connected: false)
                    }
                }
            }
            if input == nil, !idle { StandardStream.write("Talk mode is on; speak. Ctrl-C ends it.\n", to: STDERR_FILENO) }
            let reason = await stop.wait(seconds: seconds)
            logger.info("stopping", metadata: ["reason": "\(reason)"])
            await talk.stop()
            await printer.value
            await devices.close()
            connection.cancel()
            handsFree.cancel()
            desks.task.cancel()
            configFollower.cancel()
            gatewayTasks.cancel()
            await gatewayTasks.value
            await daemon.shutdown()
        }

        /// The Gateway and the devices as the status names them (the realtime session's; the native one's above).
        private func describedAudio(_ paths: StoragePaths) -> RealtimeOptions.Described {
            .init(gatewayURL: try? GatewayConfig.load(paths: paths)?.url, audioSource: input.map { "file:" + $0 } ?? source ?? "default",
                  audioSink: output.map { "file:" + $0 } ?? sink ?? "default")
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

/// The first of SIGINT, SIGTERM, a deadline or `fire` (the turn limit) ends the session. A SIGINT or SIGTERM that
/// comes while that clean stop is still under way ends the process at once (exit status 128 + the signal): the
/// user asked twice.
///
/// The signals are caught by a handler of our own (it only writes the signal's number to a pipe, all a handler may
/// safely do), read by a thread of its own: with them ignored and left to a dispatch source, a signal the kernel
/// handed to a thread that did not block it was dropped, and now and then a stop with it.
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var reason: String?
    private var waiter: CheckedContinuation<String, Never>?
    private let logger: Logger

    init(logger: Logger = Logger(label: "openclaw-talk.run")) {
        self.logger = logger
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        stopPipeWriter.store(fds[1], ordering: .releasing)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(stopPipeWriter.load(ordering: .acquiring), &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for number in [SIGINT, SIGTERM] { sigaction(number, &action, nil) }
        let reader = fds[0]
        let thread = Thread { [weak self] in
            var byte: UInt8 = 0
            while true {
                let n = read(reader, &byte, 1)
                if n == 1 { self?.signalled(Int32(byte)) } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
        thread.name = "stop-signals"
        thread.start()
    }

    var hasFired: Bool { lock.withLock { reason != nil } }

    private func signalled(_ number: Int32) {
        let name = number == SIGINT ? "SIGINT" : "SIGTERM"
        if hasFired {
            logger.notice("a second \(name) while stopping: exiting now")
            _exit(128 + number)
        }
        logger.notice("\(name): stopping (a second \(name) exits at once)")
        fire(name)
    }

    func fire(_ why: String) {
        let waiting: CheckedContinuation<String, Never>? = lock.withLock {
            guard reason == nil else { return nil }
            reason = why
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: why)
    }

    func wait(seconds: Double?) async -> String {
        if let seconds {
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                self?.fire("\(seconds) s")
            }
        }
        return await withCheckedContinuation { continuation in
            let done: String? = lock.withLock {
                if let reason { return reason }
                waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

/// The stop signals' pipe, for the handler (which may touch nothing else).
private let stopPipeWriter = Atomic<Int32>(-1)
