import Foundation
import Synchronization
import TalkLogging

/// One Gateway relay session at a time, reused while it lives (fact sheet §5.1-5.3, §9): created on first
/// need, recreated after a reconnect (it is bound to its socket), an expiry or a close, closed at the end.
/// Audio goes out in capture order (one sender writes the appends one after another from an ordered queue)
/// with at most `maxInFlight` appends unanswered on the socket; audio beyond waits in the queue and goes out
/// merged into the next append once an answer comes, so a slow Gateway catches up instead of losing the
/// user's words. Only when more than `maxUnansweredAudio` waits is input dropped and "input fell behind"
/// reported, so a stuck Gateway never makes the queue grow. No append is over 512 KiB of base64. Events of the current session come out of `events()`; malformed ones are logged and dropped,
/// those of an older session dropped, and audio of a cancelled turn dropped.
package actor TalkRelayClient {
    package struct Settings: Sendable {
        /// Appends unanswered on the socket at once: the iOS client's limit, which Gateways are built for.
        package var maxInFlight = 4
        /// Audio sent or queued but not answered yet beyond which new audio is dropped. A slow but alive Gateway
        /// (a loaded machine, a provider catching up) answers appends seconds late; 5 s holds a whole spoken
        /// request while it catches up (the queue goes out merged, up to 512 KiB an append), and bounds both
        /// memory (240 kB of PCM16 at 24 kHz) and how stale the audio a stuck Gateway gets can be (its appends
        /// time out after `appendTimeout`).
        package var maxUnansweredAudio: Duration = .seconds(5)
        package var maxAppendBase64 = 512 * 1024
        package var createTimeout: Duration = .seconds(20)
        package var appendTimeout: Duration = .seconds(8)
        package var controlTimeout: Duration = .seconds(10)
        /// A session this close to its expiry (at most a tenth of its lifetime) is replaced rather than used.
        package var expiryMargin: TimeInterval = 5
        /// The chat session a realtime relay (and its consults) belongs to.
        package var sessionKey: String?
        /// `talk.config`'s `talk.realtime` choices, asked for when a realtime session is created.
        package var realtime: TalkRealtimeSelection?
        package init() {}
    }

    package enum AppendOutcome: Sendable, Equatable {
        case sent(requests: Int)
        /// `maxUnansweredAudio` is unanswered already: this audio is dropped.
        case fellBehind
        case noSession
    }

    /// Counters for status, events and the benchmark.
    package struct Statistics: Sendable, Equatable {
        package var appendsSent = 0
        package var appendsDropped = 0
        package var appendFailures = 0
        /// Bytes of the append request frames (JSON text, before WebSocket framing).
        package var appendFrameBytes = 0
        package var payloadBytes = 0
        package var maxInFlight = 0
        package var malformedEvents = 0
        package var staleEvents = 0
        package var sessionsCreated = 0
    }

    package let mode: TalkRelayMode
    let gateway: any GatewayCalling
    private(set) var settings: Settings
    let logger: Logger
    let now: @Sendable () -> Date
    private var session: TalkRelaySession?
    private var creating = false
    /// Appends written and unanswered (at most `maxInFlight`).
    private var onWire = 0
    /// Milliseconds of audio queued or on the wire and unanswered (at most `maxUnansweredAudio`, or one append).
    private var unansweredMs = 0
    /// Audio not written yet, oldest first; `sender` writes it in that order, merging what waits.
    private var outbox: [Append] = []
    private var sender: Task<Void, Never>?
    /// The sender waiting for an answer to free a place on the wire.
    private var slotWaiter: CheckedContinuation<Void, Never>?
    private var continuation: AsyncStream<TalkRelayEvent>.Continuation?
    private var stream: AsyncStream<TalkRelayEvent>?
    private var reader: Task<Void, Never>?
    /// Events for a session id not known yet: the answer to create may come after its first events.
    private var early: [TalkRelayEvent] = []
    /// Realtime turns whose output was cancelled: their late audio is dropped.
    private var cancelledTurns: [String] = []
    private var reportedBehind = false
    package private(set) var statistics = Statistics()

    package init(gateway: any GatewayCalling, mode: TalkRelayMode, settings: Settings = Settings(), logger: Logger,
                 now: @escaping @Sendable () -> Date = Date.init)
    {
        self.gateway = gateway
        self.mode = mode
        self.settings = settings
        self.logger = logger
        self.now = now
    }

    /// The events of the relay session in use (one reader). Starts following the Gateway's events.
    package func events() async -> AsyncStream<TalkRelayEvent> {
        await startReading()
        return stream!
    }

    /// `talk.config`'s `talk.realtime` choices as they change: the next session created asks for these.
    package func setRealtime(_ selection: TalkRealtimeSelection?) {
        settings.realtime = selection
    }

    /// The relay's names on the Gateway now, or nil when it lists none.
    package func names() async -> TalkRelayNames? {
        guard let methods = await gateway.hello?.methods else { return nil }
        return TalkRelayNames.resolve(mode: mode, methods: methods)
    }

    /// Whether to use the relay: listed, and not said to be unready by `talk.catalog`. Only `ready: false` keeps
    /// it unused: a Gateway without the catalog, or whose catalog has no `ready` for this mode (older Gateways omit
    /// it), leaves readiness unverified, so the relay is tried and a failure falls back (fact sheet, upstream §3).
    package func availability() async throws(TalkRelayError) -> TalkRelayNames {
        guard let names = await names() else { throw .notListed(mode) }
        guard let methods = await gateway.hello?.methods, methods.contains("talk.catalog") else { return names }
        let catalog: JSONValue?
        do {
            catalog = try await gateway.request(method: "talk.catalog", params: .object([:]), timeout: settings.controlTimeout)
        } catch {
            throw .request(error)
        }
        switch catalog?[mode.rawValue]?["ready"] {
        case .bool(true)?:
            return names
        case .bool(false)?:
            throw .notReady(mode)
        default:
            logger.info("talk.catalog does not say whether the relay is ready; trying it", metadata: ["relay.mode": "\(mode.rawValue)"])
            return names
        }
    }

    /// The live session, or a new one when there is none, it is bound to another socket, or it expires soon.
    package func ensureSession() async throws(TalkRelayError) -> TalkRelaySession {
        if let session, await isLive(session) { return session }
        if let old = session {
            logger.info("relay session replaced", metadata: ["relay.mode": "\(mode.rawValue)", "relay.session": "\(old.id.prefix(12))"])
            session = nil
        }
        await startReading()
        guard let hello = await gateway.hello else { throw .request(.notConnected) }
        guard let names = TalkRelayNames.resolve(mode: mode, methods: hello.methods) else { throw .notListed(mode) }
        creating = true
        defer { creating = false }
        let result: JSONValue?
        do {
            result = try await gateway.request(method: names.create, params: names.createParams(sessionKey: mode == .realtime ? settings.sessionKey : nil, realtime: settings.realtime),
                                               timeout: settings.createTimeout)
        } catch {
            throw .request(error)
        }
        let created = try Self.session(from: result, names: names, connId: hello.connId, now: now())
        session = created
        statistics.sessionsCreated += 1
        unansweredMs -= outbox.reduce(0) { $0 + $1.audioMs }
        outbox = []   // audio for the session replaced: the new one starts from what is heard next
        reportedBehind = false
        logger.info("relay session created", metadata: [
            "relay.mode": "\(mode.rawValue)", "relay.era": "\(names.era.rawValue)", "relay.session": "\(created.id.prefix(12))",
            "relay.input": "\(created.inputEncoding)/\(created.inputSampleRateHz)",
        ])
        let waiting = early
        early = []
        for event in waiting where event.sessionId == created.id { deliver(event) }
        return created
    }

    /// The session in use, if any (without checking that it still lives).
    package var currentSession: TalkRelaySession? { session }

    /// Queues encoded audio (`audioMs` of it) for the session in use; never waits for the answers. `.sent` says in
    /// how many appends it goes at most (split below the size limit; fewer when merged with audio queued beside
    /// it). Audio is dropped only when `maxUnansweredAudio` is unanswered already; a single chunk longer than that
    /// (what was spoken while the session was being made) still goes when nothing else waits.
    package func append(_ bytes: [UInt8], audioMs: Int) async -> AppendOutcome {
        guard let session, await isLive(session) else { return .noSession }
        guard !bytes.isEmpty else { return .sent(requests: 0) }
        let budgetMs = Int(settings.maxUnansweredAudio.components.seconds * 1_000
            + settings.maxUnansweredAudio.components.attoseconds / 1_000_000_000_000_000)
        guard unansweredMs == 0 || unansweredMs + audioMs <= budgetMs else {
            statistics.appendsDropped += 1
            if !reportedBehind {
                reportedBehind = true
                logger.warning("input fell behind: the relay has \(unansweredMs) ms of audio unanswered; dropping audio",
                               metadata: ["relay.mode": "\(mode.rawValue)"])
            }
            return .fellBehind
        }
        reportedBehind = false
        let pieces = Self.split(bytes, audioMs: audioMs, maxBytes: maxAppendBytes)
        for piece in pieces {
            outbox.append(Append(method: session.names.append, sessionKey: session.names.sessionKey, sessionId: session.id,
                                 bytes: piece.bytes, audioMs: piece.audioMs))
        }
        unansweredMs += audioMs
        if sender == nil { sender = Task { await self.drain() } }
        return .sent(requests: pieces.count)
    }

    /// The most raw bytes one append carries: `maxAppendBase64` of base64.
    private var maxAppendBytes: Int { settings.maxAppendBase64 / 4 * 3 }

    /// `bytes` cut into pieces of at most `maxBytes`, the audio shared out by size.
    static func split(_ bytes: [UInt8], audioMs: Int, maxBytes: Int) -> [(bytes: [UInt8], audioMs: Int)] {
        guard bytes.count > maxBytes else { return [(bytes, audioMs)] }
        var pieces: [(bytes: [UInt8], audioMs: Int)] = []
        var givenMs = 0
        for start in stride(from: 0, to: bytes.count, by: maxBytes) {
            let end = min(start + maxBytes, bytes.count)
            let ms = end == bytes.count ? audioMs - givenMs : audioMs * (end - start) / bytes.count
            givenMs += ms
            pieces.append((Array(bytes[start..<end]), ms))
        }
        return pieces
    }

    private struct Append: Sendable {
        var method: String
        var sessionKey: String
        var sessionId: String
        var bytes: [UInt8]
        var audioMs: Int
    }

    /// Writes the queued audio oldest first, each append once the one before it is on the socket, so the Gateway
    /// gets it in capture order; up to `maxInFlight` answers are awaited side by side. What queued up while the
    /// wire was full goes out merged (one session's audio, up to the size limit): a slow Gateway catches up.
    private func drain() async {
        while !outbox.isEmpty {
            guard onWire < settings.maxInFlight else {
                await withCheckedContinuation { slotWaiter = $0 }
                continue
            }
            var next = outbox.removeFirst()
            while let following = outbox.first, following.sessionId == next.sessionId, following.method == next.method,
                  next.bytes.count + following.bytes.count <= maxAppendBytes
            {
                outbox.removeFirst()
                next.bytes += following.bytes
                next.audioMs += following.audioMs
            }
            onWire += 1
            statistics.maxInFlight = max(statistics.maxInFlight, onWire)
            statistics.appendsSent += 1
            statistics.payloadBytes += next.bytes.count
            let params: JSONValue = [next.sessionKey: .string(next.sessionId), "audioBase64": .string(Data(next.bytes).base64EncodedString())]
            statistics.appendFrameBytes += GatewayFrame.request(id: "r1-\(statistics.appendsSent)", method: next.method, params: params).utf8.count
            let written = Once()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                written.set { continuation.resume() }
                Task { await self.sendAppend(next, params: params, written: written) }
            }
        }
        sender = nil
    }

    private func sendAppend(_ append: Append, params: JSONValue, written: Once) async {
        defer {
            written.fire()   // (a no-op once the request said so)
            onWire -= 1
            unansweredMs = max(0, unansweredMs - append.audioMs)
            let waiting = slotWaiter
            slotWaiter = nil
            waiting?.resume()
        }
        let (method, sessionId) = (append.method, append.sessionId)
        do {
            _ = try await gateway.request(method: method, params: params, timeout: settings.appendTimeout) { written.fire() }
        } catch {
            statistics.appendFailures += 1
            guard session?.id == sessionId else { return }
            logger.warning("relay append failed", metadata: ["relay.mode": "\(mode.rawValue)", "error": "\(error)"])
            if case .rejected = error {   // an unknown, foreign or failed session: make a new one next time
                session = nil
                deliver(TalkRelayEvent(sessionId: sessionId, kind: .error("append failed: \(error)")))
            }
        }
    }

    /// Barge-in: stops the current output and drops the rest of that turn's audio.
    package func cancelOutput(turnId: String?, reason: String = "barge-in") async throws(TalkRelayError) {
        if let turnId {
            cancelledTurns.append(turnId)
            if cancelledTurns.count > 32 { cancelledTurns.removeFirst() }
        }
        guard let session, let method = session.names.cancelOutput else { return }
        var params: [String: JSONValue] = [session.names.sessionKey: .string(session.id), "reason": .string(reason)]
        if let turnId, session.names.era == .unified { params["turnId"] = .string(turnId) }
        try await control(method, .object(params))
    }

    package func acknowledgeMark(_ name: String) async throws(TalkRelayError) {
        guard let session, let method = session.names.acknowledgeMark else { return }
        try await control(method, [session.names.sessionKey: .string(session.id), "markName": .string(name)])
    }

    package func submitToolResult(callId: String, result: JSONValue) async throws(TalkRelayError) {
        guard let session, let method = session.names.submitToolResult else { return }
        try await control(method, [session.names.sessionKey: .string(session.id), "callId": .string(callId), "result": result])
    }

    /// Controls the agent run behind the relay session (`talk.session.steer`): `mode` status, steer, cancel or followup.
    package func steer(text: String?, mode: String?) async throws(TalkRelayError) -> JSONValue {
        guard let session, let method = session.names.steer else { throw .notListed(self.mode) }
        var params: [String: JSONValue] = ["sessionId": .string(session.id), "sessionKey": .string(settings.sessionKey ?? "main")]
        let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        params["text"] = .string(trimmed.isEmpty ? "status" : trimmed)
        if let mode = mode?.trimmingCharacters(in: .whitespacesAndNewlines), !mode.isEmpty { params["mode"] = .string(mode) }
        do {
            return try await gateway.request(method: method, params: .object(params), timeout: settings.controlTimeout) ?? .object([:])
        } catch {
            throw .request(error)
        }
    }

    /// A consult for a relay tool call: the agent run's id, whose `chat` final carries the answer.
    package func consult(callId: String, name: String, args: JSONValue) async throws(TalkRelayError) -> String {
        guard let session, let method = session.names.toolCall else { throw .notListed(mode) }
        var params: [String: JSONValue] = ["sessionKey": .string(settings.sessionKey ?? "main"), "callId": .string(callId),
                                           "name": .string(name), "args": args]
        params["relaySessionId"] = .string(session.id)
        let reply: JSONValue?
        do {
            reply = try await gateway.request(method: method, params: .object(params), timeout: settings.controlTimeout)
        } catch {
            throw .request(error)
        }
        guard let runId = reply?["runId"]?.stringValue else { throw .malformedResult("the consult answer has no runId") }
        return runId
    }

    /// Ends the session in use (the end of the Talk session, or a mode change).
    package func close() async {
        guard let closing = session else { return }
        session = nil
        await sender?.value   // the audio before the close goes first
        guard await gateway.hello?.connId == closing.connId else { return }
        do {
            _ = try await gateway.request(method: closing.names.close, params: [closing.names.sessionKey: .string(closing.id)],
                                          timeout: settings.controlTimeout)
            logger.info("relay session closed", metadata: ["relay.mode": "\(mode.rawValue)", "relay.session": "\(closing.id.prefix(12))"])
        } catch {
            logger.notice("closing the relay session failed", metadata: ["error": "\(error)"])
        }
    }

    /// Stops following events and ends the stream (after `close()`).
    package func stop() {
        reader?.cancel()
        reader = nil
        continuation?.finish()
    }

    // MARK: - internals

    private func control(_ method: String, _ params: JSONValue) async throws(TalkRelayError) {
        do {
            _ = try await gateway.request(method: method, params: params, timeout: settings.controlTimeout)
        } catch {
            throw .request(error)
        }
    }

    private func isLive(_ session: TalkRelaySession) async -> Bool {
        guard await gateway.hello?.connId == session.connId else { return false }
        if let expiresAt = session.expiresAt {
            let margin = min(settings.expiryMargin, expiresAt.timeIntervalSince(session.createdAt) / 10)
            if now().addingTimeInterval(margin) >= expiresAt { return false }
        }
        return true
    }

    private func startReading() async {
        guard reader == nil else { return }
        let (stream, continuation) = AsyncStream<TalkRelayEvent>.makeStream(bufferingPolicy: .bufferingNewest(512))
        self.stream = stream
        self.continuation = continuation
        let updates = await gateway.eventUpdates()   // subscribed before any create, so no event is missed
        reader = Task { [weak self] in
            for await event in updates where TalkRelayEvent.eventNames.contains(event.name) {
                await self?.receive(event)
            }
        }
    }

    private func receive(_ frame: GatewayFrame.Event) {
        let event: TalkRelayEvent
        do {
            event = try TalkRelayEvent.parse(frame.payload)
        } catch {
            statistics.malformedEvents += 1
            logger.warning("relay event dropped", metadata: ["relay.event": "\(frame.name)", "error": "\(error)"])
            return
        }
        guard let session else {
            if creating {
                early.append(event)
                if early.count > 64 { early.removeFirst() }
            } else {
                statistics.staleEvents += 1
            }
            return
        }
        guard event.sessionId == session.id else {
            statistics.staleEvents += 1
            logger.debug("event of an old relay session dropped", metadata: ["relay.session": "\(event.sessionId.prefix(12))"])
            return
        }
        deliver(event)
    }

    private func deliver(_ event: TalkRelayEvent) {
        if case .audio = event.kind, let turn = event.turnId, cancelledTurns.contains(turn) {
            statistics.staleEvents += 1
            return
        }
        switch event.kind {
        case .closed, .error:
            if session?.id == event.sessionId { session = nil }
        default: break
        }
        continuation?.yield(event)
    }

    static func session(from result: JSONValue?, names: TalkRelayNames, connId: String, now: Date = Date()) throws(TalkRelayError)
        -> TalkRelaySession
    {
        guard let result, case .object = result else { throw .malformedResult("the answer is not an object") }
        guard let id = result["sessionId"]?.stringValue ?? result["relaySessionId"]?.stringValue
            ?? result["transcriptionSessionId"]?.stringValue, !id.isEmpty
        else { throw .malformedResult("no session id") }
        guard let encoding = result["audio"]?["inputEncoding"]?.stringValue,
              let rate = result["audio"]?["inputSampleRateHz"]?.intValue, rate > 0
        else { throw .malformedResult("no input audio contract (audio.inputEncoding, audio.inputSampleRateHz)") }
        let expires: Date?
        switch result["expiresAt"] {
        case .int(let s)?: expires = Date(timeIntervalSince1970: TimeInterval(s))
        case .double(let s)?: expires = Date(timeIntervalSince1970: s)
        default: expires = nil
        }
        return TalkRelaySession(id: id, inputEncoding: String(encoding.prefix(32)), inputSampleRateHz: Int(rate),
                                expiresAt: expires, connId: connId, createdAt: now, names: names)
    }
}

/// A callback run at most once, from whichever caller comes first.
private final class Once: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)
    func set(_ callback: @escaping @Sendable () -> Void) { action.withLock { $0 = callback } }
    func fire() { action.withLock { a in defer { a = nil }; return a }?() }
}
