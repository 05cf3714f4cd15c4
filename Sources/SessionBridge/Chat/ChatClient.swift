import Foundation
import TalkLogging

/// The conversation over the operator socket (fact sheet §4.2-4.3): a transcript goes out with
/// `chat.send` exactly once, its reply comes back as a `ChatReply`, and `talk.config` is read on every
/// connect. A transcript stays in the `ChatOutbox` until the Gateway acknowledges it; a socket that dies
/// first makes it go again, with the same idempotency key, after the reconnect. `run()` follows the
/// connection (its states and its `chat` events) until cancelled.
package actor ChatClient {
    /// Timeouts and the `chat.send` parameters.
    package struct Settings: Sendable {
        /// The client's patience: no terminal event this long after the ack or the reply's last event, read
        /// `chat.history` instead (`run --reply-timeout`). Minutes, since an agent that uses tools may write nothing
        /// for a long while; how long the run itself may take is the Gateway's business (no `timeoutMs` is sent).
        package var replyTimeout: Duration = .seconds(300)
        /// How often, and how long, `chat.history` is polled for the reply after that.
        package var historyPollInterval: Duration = .milliseconds(300)
        package var historyWindow: Duration = .seconds(25)
        /// The RPC timeout of `chat.send` (its ack), and the `thinking` it carries. No `timeoutMs`: upstream it
        /// overrides the whole agent run's timeout (chat.ts), so a client value would cut tool-using replies short;
        /// the macOS Talk runtime sends none either.
        package var sendTimeout: Duration = .seconds(30)
        package var thinking = "low"
        /// Wait before re-sending after a `chat.send` timed out on a socket that stayed up.
        package var retryDelay: Duration = .seconds(1)
        package init() {}
    }

    /// The clock, the sleeps and the key maker, injected so tests can swap them.
    package struct Dependencies: Sendable {
        package var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        package var nowMs: @Sendable () -> Int64 = ChatOutbox.wallClockMs
        package var makeKey: @Sendable () -> String = { UUID().uuidString.lowercased() }
        package init() {}
    }

    /// One transcript whose reply is being followed.
    struct Track {
        var continuation: ChatReply.Sink?
        var state = ChatReplyState()
        var runId: String?
        var sessionKey: String?
        var sentAtMs: Int64
        var timer: Task<Void, Never>?
        var abortRequested = false
        /// When the reply last showed life (the ack, an event): the patience counts from there.
        var lastActivityMs: Int64 = 0
    }

    private enum Outcome { case sent, retrySoon, waitForConnection }

    let connection: any GatewayCalling
    let outbox: ChatOutbox
    let settings: Settings
    let dependencies: Dependencies
    let logger: Logger
    var tracks: [String: Track] = [:]
    private var keyByRun: [String: String] = [:]
    /// Events of runs not (yet) ours while a send awaits its ack: the ack may be read after the run's
    /// first events. Bounded.
    private var early: [ChatEventPayload] = []
    /// Runs already ended, so their late events are recognised. Bounded.
    private var endedRuns: [String] = []
    private var inFlight: Set<String> = []
    /// The attachments of a waiting transcript, by idempotency key (memory only).
    private var attachmentsByKey: [String: [JSONValue]] = [:]
    private var flushing = false
    private var flushAgain = false
    private var retryTask: Task<Void, Never>?
    private var advertisedSessionKey: String?
    /// Whether `talk.config` was asked for on this connection (its `session.mainKey` may name the session).
    private var talkConfigRead = false
    /// The socket's last state was `connected` (a send then goes out at once; otherwise at the next connect).
    private var isConnected = false
    private var configSubscribers: [Int: AsyncStream<TalkConfig>.Continuation] = [:]
    private var nextSubscriber = 0
    /// What the Gateway's `talk.config` said at the last connect (empty when it has none).
    package private(set) var talkConfig = TalkConfig()

    static let earlyLimit = 64
    static let endedLimit = 256

    package init(connection: any GatewayCalling, outbox: ChatOutbox, settings: Settings = Settings(),
                 dependencies: Dependencies = Dependencies(), logger: Logger) {
        self.connection = connection
        self.outbox = outbox
        self.settings = settings
        self.dependencies = dependencies
        self.logger = logger
    }

    /// Follows the connection until cancelled: on each connect, `talk.config` then the outbox; each
    /// `chat` event to its reply.
    package func run() async {
        let events = await connection.eventUpdates()
        let states = await connection.stateUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await e in events where e.name == "chat" { await self.received(e.payload) } }
            group.addTask {
                for await s in states { await self.stateChanged(s) }
            }
            await group.waitForAll()
        }
        // Stopped: the replies being followed end without a terminal update; their transcripts, if not
        // yet acknowledged, stay in the outbox for the next start.
        retryTask?.cancel()
        for track in tracks.values {
            track.timer?.cancel()
            track.continuation?.finish()
        }
        tracks = [:]
        keyByRun = [:]
    }

    /// Every `talk.config` read from now on, starting with the current one.
    package func talkConfigUpdates() -> AsyncStream<TalkConfig> {
        let (stream, c) = AsyncStream<TalkConfig>.makeStream(bufferingPolicy: .bufferingNewest(1))
        c.yield(talkConfig)
        nextSubscriber += 1
        configSubscribers[nextSubscriber] = c
        return stream
    }

    /// Queues `transcript` (prefixed when the last reply was interrupted) and sends it when connected.
    /// The reply's first update says whether the Gateway took it. `sessionKey` overrides the session
    /// (else `hello-ok`'s main session key, else `talk.config`'s `session.mainKey`, else `main`).
    /// `attachments` stay in memory, never in the outbox file (a transcript with files is the `send` command's, whose
    /// outbox is in memory): the caller checked them against the policy (`AttachmentPolicy`) first.
    package func send(_ transcript: String, interruptedAtSeconds: Double? = nil, sessionKey: String? = nil,
                      attachments: [ChatAttachment] = []) async -> ChatReply {
        let key = dependencies.makeKey()
        if !attachments.isEmpty { attachmentsByKey[key] = attachments.map(\.json) }
        let now = dependencies.nowMs()
        // Known now when connected, which spares the outbox file a second write before the send.
        var sessionKey = sessionKey
        if sessionKey == nil { sessionKey = await connection.hello?.advertisedMainSessionKey }
        let (reply, continuation) = ChatReply.makeStream(idempotencyKey: key)
        tracks[key] = Track(continuation: continuation, sessionKey: sessionKey, sentAtMs: now)
        let message = InterruptionPrefix.message(transcript: transcript, interruptedAtSeconds: interruptedAtSeconds)
        let dropped = await outbox.add(ChatOutbox.Entry(idempotencyKey: key, sessionKey: sessionKey, message: message, createdAtMs: now))
        for old in dropped { end(old, with: .failed(.droppedFromFullOutbox)) }
        // Not awaited: the caller reads the ack (or its absence) from the reply, and a slow ack must
        // not hold it before it can listen.
        if isConnected { Task { await self.flush() } }
        return reply
    }

    /// Cancels a reply: before the ack it is taken out of the outbox; after, `chat.abort` stops the run.
    /// The reply ends with `aborted` either way.
    package func abort(_ reply: ChatReply) async { await abort(key: reply.idempotencyKey) }

    private func abort(key: String) async {
        guard let track = tracks[key] else { return }
        guard let runId = track.runId, let sessionKey = track.sessionKey else {
            // Out of the outbox either way, so no reconnect sends it again; one in flight is aborted
            // when its ack arrives, or ended when that send fails.
            await outbox.remove(key)
            if inFlight.contains(key) { tracks[key]?.abortRequested = true } else { end(key, with: .aborted("")) }
            return
        }
        do {
            _ = try await connection.request(method: "chat.abort", params: ["sessionKey": .string(sessionKey), "runId": .string(runId)], timeout: nil)
        } catch {
            logger.info("chat.abort failed; the reply is ended here", metadata: ["chat.run_id": "\(runId)", "error": "\(error)"])
        }
        // The Gateway's `aborted` event normally ends it already; this covers a lost one.
        if let text = tracks[key]?.state.text { end(key, with: .aborted(text)) }
    }

    // MARK: connect, outbox

    private func stateChanged(_ state: ConnectionState) async {
        guard case .connected = state else {
            isConnected = false
            return
        }
        isConnected = true
        await connected()
    }

    private func connected() async {
        advertisedSessionKey = await connection.hello?.advertisedMainSessionKey
        talkConfigRead = false
        await refreshTalkConfig()
        await flush()
    }

    private func refreshTalkConfig() async {
        defer { talkConfigRead = true }
        do {
            let result = try await connection.request(method: "talk.config", params: [:], timeout: nil)
            var ignored: [String] = []
            talkConfig = TalkConfig(gatewayResult: result, ignored: &ignored)
            if !ignored.isEmpty {
                logger.info("talk.config fields of the wrong type were ignored", metadata: ["talk.ignored": "\(ignored.joined(separator: ","))"])
            }
        } catch .rejected(_, let shape) {
            logger.info("the Gateway gives no talk.config; Talk uses its defaults", metadata: ["gateway.error": "\(shape.code)"])
            talkConfig = TalkConfig()
        } catch {
            logger.debug("talk.config was not read", metadata: ["error": "\(error)"])
            return
        }
        configSubscribers.values.forEach { $0.yield(talkConfig) }
    }

    /// Sends every waiting transcript, oldest first, one request at a time.
    private func flush() async {
        if flushing {
            flushAgain = true
            return
        }
        flushing = true
        defer { flushing = false }
        repeat {
            flushAgain = false
            let (entries, expired) = await outbox.live()
            for key in expired { end(key, with: .failed(.expired)) }
            for entry in entries where !inFlight.contains(entry.idempotencyKey) {
                switch await transmit(entry) {
                case .sent: continue
                case .waitForConnection: return  // the next connect flushes again
                case .retrySoon:
                    scheduleRetry()
                    return
                }
            }
        } while flushAgain
    }

    private func scheduleRetry() {
        retryTask?.cancel()
        let sleep = dependencies.sleep
        let delay = settings.retryDelay
        retryTask = Task {
            do { try await sleep(delay) } catch { return }
            await self.flush()
        }
    }

    private func transmit(_ entry: ChatOutbox.Entry) async -> Outcome {
        let key = entry.idempotencyKey
        var sessionKey = entry.sessionKey ?? ""
        if sessionKey.isEmpty {
            let advertised = await connection.hello?.advertisedMainSessionKey ?? advertisedSessionKey
            // Sent right after a connect, before `connected()` read it: the fallback key must not be guessed.
            if advertised == nil, !talkConfigRead { await refreshTalkConfig() }
            sessionKey = advertised ?? talkConfig.sessionMainKey ?? "main"
            await outbox.setSessionKey(sessionKey, for: key)
        }
        inFlight.insert(key)
        defer { inFlight.remove(key) }
        var params: JSONValue = [
            "sessionKey": .string(sessionKey), "message": .string(entry.message), "thinking": .string(settings.thinking),
            "idempotencyKey": .string(key),
        ]
        if let attachments = attachmentsByKey[key], case .object(var o) = params {
            o["attachments"] = .array(attachments)
            params = .object(o)
        }
        do {
            let payload = try await connection.request(method: "chat.send", params: params, timeout: settings.sendTimeout)
            attachmentsByKey[key] = nil
            await outbox.remove(key)
            await accepted(entry, sessionKey: sessionKey, payload: payload)
            return .sent
        } catch {
            if tracks[key]?.abortRequested == true {
                end(key, with: .aborted(""))
                return .sent
            }
            switch error {
            case .rejected(_, let shape) where !error.isRetryable:
                await outbox.remove(key)
                logger.error("the Gateway refused a transcript", metadata: ["chat.idempotency_key": "\(key)", "gateway.error": "\(shape)"])
                end(key, with: .failed(.rejected(shape)))
                return .sent
            case .timedOut, .rejected:
                // The socket is still up: no reconnect will come to trigger the resend.
                logger.debug("chat.send not acknowledged yet; it will be sent again with the same key", metadata: ["chat.idempotency_key": "\(key)", "error": "\(error)"])
                return .retrySoon
            default:
                logger.debug("chat.send not acknowledged; it stays in the outbox", metadata: ["chat.idempotency_key": "\(key)", "error": "\(error)"])
                return .waitForConnection
            }
        }
    }

    // MARK: replies

    private func accepted(_ entry: ChatOutbox.Entry, sessionKey: String, payload: JSONValue?) async {
        let key = entry.idempotencyKey
        let runId = payload?["runId"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 512 ? nil : $0 }
        let status = payload?["status"]?.stringValue.map { String($0.prefix(40)) } ?? "started"
        let replayed = ReplayedAck(status: status)
        if runId == nil { logger.error("the Gateway acknowledged a transcript without a runId; its reply comes from chat.history") }
        // A transcript queued before a restart of this process has nobody waiting; its reply is followed anyway.
        var track = tracks[key] ?? Track(sentAtMs: entry.createdAtMs)
        track.runId = runId
        track.sessionKey = sessionKey
        track.lastActivityMs = dependencies.nowMs()
        track.continuation?.yield(.accepted(runId: runId, status: status))
        tracks[key] = track
        if tracks[key]?.continuation == nil {
            logger.info("a transcript queued before a restart was delivered", metadata: ["chat.idempotency_key": "\(key)"])
        }
        if let runId { keyByRun[runId] = key }
        switch replayed {
        case .delivered:
            // The run ended while the ack was lost, so its events are gone; the history has the reply.
            startTimer(key, after: .zero)
            return
        case .failed(let kind):
            end(key, with: .failed(.agentError(kind: kind, message: "the Gateway's record of this transcript's run says '\(status)'")))
            return
        case .aborted:
            end(key, with: .aborted(""))
            return
        case .running:
            startTimer(key, after: settings.replyTimeout)
        }
        if let runId {
            let mine = early.filter { $0.runId == runId }
            early.removeAll { $0.runId == runId }
            for payload in mine { apply(payload, to: key) }
        }
        if track.abortRequested, tracks[key] != nil { await abort(key: key) }
    }

    private func received(_ json: JSONValue?) {
        let payload: ChatEventPayload
        do { payload = try ChatEventPayload(json: json) } catch {
            logger.error("ignored a malformed chat event", metadata: ["error": "\(error)"])
            return
        }
        if let key = keyByRun[payload.runId] {
            apply(payload, to: key)
        } else if endedRuns.contains(payload.runId) {
            logger.debug("ignored a chat event after its run ended", metadata: ["chat.run_id": "\(payload.runId)", "chat.seq": "\(payload.seq)"])
        } else if !inFlight.isEmpty {
            // Perhaps the run of a send whose ack is still on its way; otherwise another client's.
            early.append(payload)
            if early.count > Self.earlyLimit { early.removeFirst(early.count - Self.earlyLimit) }
        } else {
            logger.trace("ignored a chat event of another run", metadata: ["chat.run_id": "\(payload.runId)"])
        }
    }

    private func apply(_ payload: ChatEventPayload, to key: String) {
        guard var track = tracks[key] else { return }
        guard let update = track.state.apply(payload) else {
            logger.trace("chat event changed nothing (duplicate, older or empty)", metadata: ["chat.seq": "\(payload.seq)"])
            return
        }
        track.lastActivityMs = dependencies.nowMs()
        tracks[key] = track
        if update.isTerminal { end(key, with: update) } else { track.continuation?.yield(update) }
    }

    /// Delivers the last update of a reply and forgets it.
    func end(_ key: String, with update: ChatReplyUpdate) {
        attachmentsByKey[key] = nil
        guard let track = tracks.removeValue(forKey: key) else { return }
        track.timer?.cancel()
        track.continuation?.yield(update)
        track.continuation?.finish()
        if case .failed(let why) = update { logger.info("a reply ended without text", metadata: ["chat.failure": "\(why)"]) }
        if let runId = track.runId {
            keyByRun[runId] = nil
            endedRuns.append(runId)
            if endedRuns.count > Self.endedLimit { endedRuns.removeFirst(endedRuns.count - Self.endedLimit) }
        }
    }

    private func startTimer(_ key: String, after delay: Duration) {
        let sleep = dependencies.sleep
        tracks[key]?.timer?.cancel()
        tracks[key]?.timer = Task {
            do { try await sleep(delay) } catch { return }
            await self.patienceEnded(key, waited: delay)
        }
    }

    /// The reply showed no life for the whole patience: `chat.history`. One that did is given the rest again.
    private func patienceEnded(_ key: String, waited: Duration) async {
        guard let track = tracks[key] else { return }
        let quietMs = dependencies.nowMs() - track.lastActivityMs
        let patienceMs = ChatOutbox.milliseconds(settings.replyTimeout)
        if waited > .zero, quietMs < patienceMs {
            startTimer(key, after: .milliseconds(patienceMs - quietMs))
            return
        }
        await readReplyFromHistory(key)
    }
}
