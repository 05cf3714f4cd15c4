import Foundation
import TalkLogging

/// One socket to the Gateway kept alive: handshake, tick watchdog, WebSocket pings, request/response
/// matching, and reconnects with backoff. `run()` drives it until cancelled or until a connect error
/// says to stop; state changes and Gateway events come out as streams.
package actor GatewayConnection {
    private enum PendingSlot {
        case expecting
        case waiting(CheckedContinuation<Result<JSONValue?, GatewayRequestError>, Never>)
        case done(Result<JSONValue?, GatewayRequestError>)
    }

    private struct Live {
        var generation: Int
        var transport: any GatewayTransport
        var hello: HelloOk
        var lastFrameAt: ContinuousClock.Instant
    }

    private enum ServeEnd: Sendable {
        case lost(String)
        case dead
        case cancelled
    }

    private let identity: DeviceIdentity
    private let dependencies: Dependencies
    private let timing: Timing
    private let logger: Logger
    private var machine: StateMachine
    private var generation = 0
    private var live: Live?
    private var pending: [String: (generation: Int, slot: PendingSlot)] = [:]
    private var nextRequestNumber = 0
    /// Why the last attempt or connection ended, for the `reconnecting` state.
    private var lastReason = ""
    private var stateSubscribers: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
    private var eventSubscribers: [Int: AsyncStream<GatewayFrame.Event>.Continuation] = [:]
    private var nextSubscriber = 0
    private var finished = false
    private var backoffWait: Task<Void, any Error>?
    /// `reconnectNow()` closed the socket: the reconnect skips the backoff and keeps its reason.
    private var reconnectRequested = false
    package private(set) var state: ConnectionState = .idle
    /// The last refusal, for commands that must explain why they stopped.
    package private(set) var lastConnectError: ConnectError?

    package init(identity: DeviceIdentity, dependencies: Dependencies, timing: Timing = Timing(), logger: Logger) {
        self.identity = identity
        self.dependencies = dependencies
        self.timing = timing
        self.logger = logger
        machine = StateMachine(backoff: timing.backoff)
    }

    /// Every state change from now on, starting with the current state; ends when `run()` returns.
    /// Each state from now on, starting with the current one. A reader that stops listening is forgotten.
    package func stateUpdates() -> AsyncStream<ConnectionState> {
        let (stream, c) = AsyncStream<ConnectionState>.makeStream(bufferingPolicy: .bufferingNewest(64))
        c.yield(state)
        if finished { c.finish() } else {
            nextSubscriber += 1
            stateSubscribers[nextSubscriber] = c
            let id = nextSubscriber
            c.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        }
        return stream
    }

    /// Gateway events for the layer above (not `tick` or `connect.challenge`, which this actor consumes).
    /// A slow reader loses the oldest events beyond 256; one that stops listening (a relay tool call waiting for its
    /// run's final, once it has it) is forgotten, with what it had not read.
    package func eventUpdates() -> AsyncStream<GatewayFrame.Event> {
        let (stream, c) = AsyncStream<GatewayFrame.Event>.makeStream(bufferingPolicy: .bufferingNewest(256))
        if finished { c.finish() } else {
            nextSubscriber += 1
            eventSubscribers[nextSubscriber] = c
            let id = nextSubscriber
            c.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        }
        return stream
    }

    private func unsubscribe(_ id: Int) {
        stateSubscribers[id] = nil
        eventSubscribers[id] = nil
    }

    /// Readers of `stateUpdates` and `eventUpdates` still listening (for tests).
    var subscriberCount: Int { stateSubscribers.count + eventSubscribers.count }

    /// The current `hello-ok`, when connected.
    package var hello: HelloOk? { live?.hello }

    /// Connects and stays connected until the task is cancelled or a connect error says to stop.
    package func run() async {
        defer {
            finished = true
            stateSubscribers.values.forEach { $0.finish() }
            eventSubscribers.values.forEach { $0.finish() }
            stateSubscribers = [:]
            eventSubscribers = [:]
        }
        while !Task.isCancelled {
            generation &+= 1
            let gen = generation
            if case .reconnecting = state {} else if case .waitingForApproval = state {} else {
                publish(.connecting(attempt: machine.attempt + 1))
            }
            let decision: StateMachine.Decision
            switch await attempt(generation: gen) {
            case .connectedThenLost(let why):
                logger.debug("connection lost", metadata: ["gateway.reason": "\(why)"])
                decision = machine.connectionLost(at: dependencies.now(), unit: dependencies.random())
            case .transportFailed(let failure):
                decision = machine.transportFailed(permanent: failure.isPermanent, reason: failure.message,
                                                   at: dependencies.now(), unit: dependencies.random())
            case .refused(let error):
                lastConnectError = error
                logger.debug("connect refused", metadata: ["gateway.error": "\(error.code ?? "handshake")"])
                let signing = machine.payloadVersion
                decision = machine.connectFailed(error, unit: dependencies.random())
                if machine.payloadVersion != signing {
                    logger.warning("the Gateway refused the v3 device signature; retrying once with the older v2 payload",
                                   metadata: ["gateway.error": "\(error.code ?? "handshake")"])
                }
            case .cancelled:
                decision = .stop(reason: "Stopped.", paused: false)
            }
            if Task.isCancelled { break }
            switch decision {
            case .stop(let reason, let paused):
                publish(.disconnected(reason: paused ? reason + " Reconnecting is paused until this is fixed." : reason))
                return
            case .reconnect(let seconds, let attempt):
                let wait = reconnectRequested ? 0 : seconds
                reconnectRequested = false
                publish(.reconnecting(attempt: attempt, nextRetryAt: Date(timeIntervalSinceNow: wait), reason: lastReason))
                do { try await waitBeforeRetry(wait) } catch { break }
            case .waitForApproval(let id, let seconds):
                publish(.waitingForApproval(requestId: id, nextRetryAt: Date(timeIntervalSinceNow: seconds)))
                do { try await waitBeforeRetry(seconds) } catch { break }
            }
        }
        publish(.disconnected(reason: "Stopped."))
    }

    /// Drops the connection and connects again at once (the daemon's `reconnect`); while waiting out a backoff,
    /// the wait ends now. Nothing when `run()` is not running.
    package func reconnectNow() async {
        guard !finished else { return }
        if let backoffWait {
            backoffWait.cancel()
            return
        }
        guard let live else { return }
        reconnectRequested = true
        lastReason = "Reconnect requested."
        await live.transport.close()
    }

    /// The backoff wait, cancellable by `reconnectNow()` (which then retries at once).
    private func waitBeforeRetry(_ seconds: Double) async throws {
        let sleep = dependencies.sleep
        let wait = Task { try await sleep(.milliseconds(Int(seconds * 1000))) }
        backoffWait = wait
        defer { backoffWait = nil }
        try await withTaskCancellationHandler { try await wait.value } onCancel: { wait.cancel() }
    }

    private enum AttemptOutcome {
        case connectedThenLost(String)
        case transportFailed(TransportFailure)
        case refused(ConnectError)
        case cancelled
    }

    private func attempt(generation gen: Int) async -> AttemptOutcome {
        var material = await dependencies.material()
        var transport: any GatewayTransport
        do {
            transport = try await dependencies.openTransport()
        } catch let failure as TransportFailure {
            lastReason = failure.message
            return .transportFailed(failure)
        } catch {
            if Task.isCancelled { return .cancelled }
            lastReason = String(describing: error)
            return .transportFailed(TransportFailure(error, isPermanent: false))
        }
        var hello: HelloOk
        do {
            hello = try await handshake(material, on: transport, generation: gen)
        } catch let refusal {
            await transport.close()
            if Task.isCancelled { return .cancelled }
            lastReason = refusal.description
            // Loopback is judged by the socket's peer: a name that merely looks local does not qualify.
            var retry = material.deviceTokenRetry
            if transport.peerIsLoopback { retry?.trustedEndpoint = true }
            guard let retryAuth = retry?.auth(after: refusal, sent: material.auth) else { return .refused(refusal) }
            // The one bounded retry: any failure of it ends as the original refusal, so the user sees the
            // shared-token message and reconnecting pauses as without the retry.
            logger.debug("shared token refused; retrying once with the stored device token")
            material.auth = retryAuth
            material.deviceTokenRetry = nil
            do {
                transport = try await dependencies.openTransport()
            } catch {
                return Task.isCancelled ? .cancelled : .refused(refusal)
            }
            do {
                hello = try await handshake(material, on: transport, generation: gen)
            } catch let retryError {
                await transport.close()
                if Task.isCancelled { return .cancelled }
                logger.debug("device token retry refused", metadata: ["gateway.error": "\(retryError.code ?? "handshake")"])
                return .refused(refusal)
            }
        }
        await dependencies.helloReceived(hello, material)
        guard gen == generation, !Task.isCancelled else {
            await transport.close()
            return .cancelled
        }
        machine.helloReceived(at: dependencies.now())
        lastConnectError = nil
        live = Live(generation: gen, transport: transport, hello: hello, lastFrameAt: dependencies.now())
        logger.debug("connected", metadata: ["gateway.version": "\(hello.serverVersion)", "gateway.protocol": "\(hello.protocolVersion)"])
        publish(.connected(serverVersion: hello.serverVersion))
        let end = await serve(transport, generation: gen, tickIntervalMs: hello.tickIntervalMs)
        live = nil
        await transport.close()
        failPending(generation: gen)
        switch end {
        case .cancelled: return .cancelled
        case .dead:
            lastReason = "No frame from the Gateway for \(2 * hello.tickIntervalMs) ms."
            return .connectedThenLost(lastReason)
        case .lost(let why):
            if !reconnectRequested { lastReason = why }
            return .connectedThenLost(lastReason)
        }
    }

    private func handshake(_ material: ConnectMaterial, on transport: any GatewayTransport, generation gen: Int) async throws(ConnectError) -> HelloOk {
        var handshake = ConnectHandshake(profile: material.profile, auth: material.auth, identity: identity)
        handshake.payloadVersion = machine.payloadVersion
        handshake.challengeTimeout = timing.challengeTimeout
        handshake.responseTimeout = timing.connectResponseTimeout
        handshake.requestId = "connect-\(gen)"
        return try await handshake.perform(on: transport, sleep: dependencies.sleep, logger: logger)
    }

    /// Reads frames, watches ticks and pings until the socket dies; the first of the three to end wins.
    private func serve(_ transport: any GatewayTransport, generation gen: Int, tickIntervalMs: Int) async -> ServeEnd {
        let sleep = dependencies.sleep
        let ping = timing.pingInterval
        let check = Duration.milliseconds(min(max(tickIntervalMs / 4, 20), 5000))
        return await withTaskGroup(of: ServeEnd.self) { group in
            group.addTask {
                while true {
                    do {
                        let bytes = try await transport.receive()
                        await self.handle(bytes, generation: gen)
                    } catch {
                        return Task.isCancelled ? .cancelled : .lost("The socket closed: \(error)")
                    }
                }
            }
            group.addTask {
                while true {
                    do { try await sleep(check) } catch { return .cancelled }
                    if await self.isDead(generation: gen, tickIntervalMs: tickIntervalMs) { return .dead }
                }
            }
            group.addTask {
                while true {
                    do { try await sleep(ping) } catch { return .cancelled }
                    do { try await transport.ping() } catch { return .lost("A ping failed: \(error)") }
                }
            }
            let first = await group.next() ?? .cancelled
            // Requests in flight fail now, not after the close handshake; then closing unblocks the
            // reader, whose receive may not honour cancellation.
            self.live = nil
            self.failPending(generation: gen)
            await transport.close()
            group.cancelAll()
            return first
        }
    }

    private func isDead(generation gen: Int, tickIntervalMs: Int) -> Bool {
        guard let live, live.generation == gen else { return true }
        return StateMachine.isDead(lastFrameAt: live.lastFrameAt, now: dependencies.now(), tickIntervalMs: tickIntervalMs)
    }

    private func handle(_ bytes: [UInt8], generation gen: Int) {
        guard gen == generation, live != nil else { return }
        live?.lastFrameAt = dependencies.now()
        let frame: GatewayFrame
        do { frame = try GatewayFrame.parse(bytes) } catch {
            logger.debug("ignored a frame", metadata: ["gateway.frame_error": "\(error)", "ws.bytes": "\(bytes.count)"])
            return
        }
        switch frame {
        case .response(let r):
            let result: Result<JSONValue?, GatewayRequestError> = r.ok
                ? .success(r.payload) : .failure(.rejected(method: "", r.error ?? GatewayErrorShape(code: "UNKNOWN", message: "failed")))
            complete(id: r.id, generation: gen, result)
        case .event(let e):
            switch e.name {
            case "tick", "connect.challenge": return
            case "shutdown":
                machine.shutdownAnnounced(restartExpectedMs: e.payload?["restartExpectedMs"]?.intValue)
                logger.debug("gateway announced shutdown")
            default: break
            }
            eventSubscribers.values.forEach { $0.yield(e) }
        }
    }

    private func publish(_ s: ConnectionState) {
        state = s
        stateSubscribers.values.forEach { $0.yield(s) }
    }

    // MARK: requests

    /// Sends `method` and waits for its response payload. Fails at once when not connected, promptly
    /// with `.connectionLost` when the socket dies meanwhile, and with `.timedOut` after `timeout`.
    package func request(method: String, params: JSONValue? = nil, timeout: Duration? = nil) async throws(GatewayRequestError) -> JSONValue? {
        try await request(method: method, params: params, timeout: timeout, written: {})
    }

    package func request(method: String, params: JSONValue?, timeout: Duration?,
                         written: @escaping @Sendable () -> Void) async throws(GatewayRequestError) -> JSONValue? {
        guard let live else {
            written()
            throw .notConnected
        }
        let gen = live.generation
        nextRequestNumber += 1
        let id = "r\(gen)-\(nextRequestNumber)"
        pending[id] = (gen, .expecting)
        do {
            try await live.transport.send(text: GatewayFrame.request(id: id, method: method, params: params))
        } catch {
            pending[id] = nil
            written()
            throw .connectionLost(method: method)
        }
        written()
        let sleep = dependencies.sleep
        let limit = timeout ?? timing.requestTimeout
        let result = await withTaskGroup(of: Result<JSONValue?, GatewayRequestError>?.self) { group in
            group.addTask { await self.wait(id: id) }
            group.addTask {
                do { try await sleep(limit) } catch {
                    await self.complete(id: id, generation: gen, .failure(.cancelled))
                    return nil
                }
                await self.complete(id: id, generation: gen, .failure(.timedOut(method: method, seconds: ConnectHandshake.seconds(limit))))
                return nil
            }
            var outcome: Result<JSONValue?, GatewayRequestError> = .failure(.cancelled)
            for await r in group {
                if let r {
                    outcome = r
                    group.cancelAll()
                }
            }
            return outcome
        }
        switch result {
        case .success(let payload): return payload
        case .failure(.rejected(_, let shape)): throw .rejected(method: method, shape)
        case .failure(.connectionLost): throw .connectionLost(method: method)
        case .failure(let e): throw e
        }
    }

    private func wait(id: String) async -> Result<JSONValue?, GatewayRequestError> {
        guard let entry = pending[id] else { return .failure(.cancelled) }
        if case .done(let r) = entry.slot {
            pending[id] = nil
            return r
        }
        return await withCheckedContinuation { c in pending[id] = (entry.generation, .waiting(c)) }
    }

    private func complete(id: String, generation gen: Int, _ result: Result<JSONValue?, GatewayRequestError>) {
        guard let entry = pending[id], entry.generation == gen else { return }
        switch entry.slot {
        case .expecting: pending[id] = (gen, .done(result))
        case .waiting(let c):
            pending[id] = nil
            c.resume(returning: result)
        case .done: break
        }
    }

    private func failPending(generation gen: Int) {
        for (id, entry) in pending where entry.generation == gen {
            complete(id: id, generation: gen, .failure(.connectionLost(method: "")))
        }
    }
}
