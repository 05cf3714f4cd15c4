import Foundation
import SessionBridge
import SpeechRecognition
import TalkLogging
import TalkSession

/// `run`'s hands-free options (`--wake`, `--ptt`, `--idle-timeout`) and the Gateway side they rest on: the
/// voice-wake triggers (`VoiceWakeTracker`) and the push-to-talk node commands (`NodeCommandRouter`).
struct RunModes: Sendable {
    static let options: [OptionSpec] = [
        .flag("wake", help: "Send only what follows a wake phrase (the Gateway's voice-wake triggers, or models/keyphrases/wake.kws)."),
        .flag("ptt", help: "Push-to-talk: listen only from talk.ptt.start to talk.ptt.stop, or for talk.ptt.once (node commands)."),
        .option("idle-timeout", value: "seconds",
                help: "After this long without an interaction, wait for a wake phrase (default: talk.config's idleTimeoutS)."),
        .option("ptt-limit", value: "seconds",
                help: "A push-to-talk capture (talk.ptt.start) that nothing stops ends as a stop after this long (default 60)."),
    ]

    var mode = HandsFreeMode.alwaysListening
    var idleTimeout: Double?
    var pushToTalkLimit: Int?

    init(_ parsed: ParsedArguments) throws {
        if parsed.flag("wake"), parsed.flag("ptt") { throw ValidationError("'--wake' and '--ptt' cannot be used together; choose one mode") }
        if parsed.flag("wake") { mode = .wakePhrase }
        if parsed.flag("ptt") { mode = .pushToTalk }
        idleTimeout = try parsed.doubleOption("idle-timeout", range: 1...86_400)
        pushToTalkLimit = try parsed.intOption("ptt-limit", range: 1...3600)
    }

    func apply(to settings: inout TalkSession.Settings, modelDirectory: String?) {
        settings.mode = mode
        settings.wakePhrases = LocalWakePhrases.load(modelDirectory: modelDirectory)
        if let idleTimeout {
            settings.idleTimeout = .milliseconds(Int((idleTimeout * 1000).rounded()))
            settings.idleTimeoutFixed = true
        }
        if let pushToTalkLimit { settings.pushToTalkCaptureLimit = .seconds(pushToTalkLimit) }
    }

    /// The Gateway's wake phrases, subscribed to both sockets now: call it before the sockets connect, so the list the
    /// Gateway pushes to the node right after `hello-ok` is not lost. `voicewake.get` goes to the operator socket.
    static func wakePhrases(_ gateway: GatewaySession, logger: Logger) async -> VoiceWakeTracker {
        let tracker = VoiceWakeTracker(reader: gateway.operatorConnection, listeners: [gateway.node, gateway.operatorConnection],
                                       logger: logger)
        await tracker.subscribe()
        return tracker
    }

    /// Follows the Gateway's wake phrases into the session and serves the node's push-to-talk commands with it,
    /// until cancelled. Both run in every mode: the node declares the commands in `connect` whatever the mode.
    /// `requests`: the node socket's events, subscribed to before it connected. `others`: the node's other commands'
    /// handlers (`system.notify`).
    static func serve(_ talk: TalkSession, wake tracker: VoiceWakeTracker, requests: AsyncStream<GatewayFrame.Event>,
                      gateway: GatewaySession, paths: StoragePaths,
                      others: [String: NodeCommandHandler] = [:], logger: Logger) -> Task<Void, Never> {
        let nodeId = (try? DeviceIdentity.loadOrCreate(paths: paths).deviceId) ?? ""
        let router = NodeCommandRouter(
            node: gateway.node, nodeId: nodeId, declared: gateway.nodeProfile.commands,
            handler: { command, _ in await talk.pushToTalk(command) }, others: others, logger: logger)
        return Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await tracker.run() }
                group.addTask { for await triggers in await tracker.updates() { await talk.useGatewayWakePhrases(triggers) } }
                group.addTask { await router.serve(requests) }
            }
        }
    }
}
