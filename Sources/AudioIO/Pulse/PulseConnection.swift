import CPulse
import TalkLogging

/// A PulseAudio context that follows the server: it connects, reports when the connection is lost, and
/// (when `keepTrying` is on) polls every `retryInterval` until the server is back.
///
/// Confined to its loop: every method runs on the loop thread or with `PulseMainloop.withLock` held.
final class PulseConnection {
    private enum State {
        case idle
        case connecting(OpaquePointer)
        case ready(OpaquePointer)
        case waitingToRetry(OpaquePointer)
        case closed
    }

    private struct Waiter {
        /// Fails on the next failed attempt instead of waiting for the server to come back.
        var failFast: Bool
        var body: (Result<OpaquePointer, PulseError>) -> Void
    }

    private let loop: PulseMainloop
    private let server: String?
    private let logger: Logger
    private var state = State.idle
    private var waiters: [Waiter] = []
    private var lostReported = false

    /// After a failed attempt or a lost connection, try again every `retryInterval` instead of giving up.
    var keepTrying = false
    var retryInterval: Duration = .milliseconds(250)
    /// Called when an established connection drops, once per outage.
    var onLost: ((String) -> Void)?
    /// Called each time a connection becomes ready.
    var onReady: ((OpaquePointer) -> Void)?

    /// The server address in words, for errors and logs.
    let serverDescription: String

    init(loop: PulseMainloop, server: String?, logger: Logger) {
        self.loop = loop
        self.server = server
        self.logger = logger
        self.serverDescription = PulseError.describe(server: server)
    }

    /// The ready context, if any.
    var context: OpaquePointer? {
        if case .ready(let context) = state { return context }
        return nil
    }

    /// Calls `body` with the context once it is ready, connecting now if needed (a pending retry is brought
    /// forward). A `failFast` waiter hears about the next failed attempt; the others wait for the server.
    func whenReady(failFast: Bool, _ body: @escaping (Result<OpaquePointer, PulseError>) -> Void) {
        switch state {
        case .ready(let context):
            body(.success(context))
        case .closed:
            body(.failure(.serverUnreachable(server: serverDescription, reason: "the connection was closed")))
        case .connecting:
            waiters.append(Waiter(failFast: failFast, body: body))
        case .idle:
            waiters.append(Waiter(failFast: failFast, body: body))
            attempt()
        case .waitingToRetry(let timer):
            loop.removeTimer(timer)
            state = .idle
            waiters.append(Waiter(failFast: failFast, body: body))
            attempt()
        }
    }

    /// Disconnects for good; pending waiters fail.
    func close() {
        switch state {
        case .connecting(let context), .ready(let context): release(context)
        case .waitingToRetry(let timer): loop.removeTimer(timer)
        case .idle, .closed: break
        }
        state = .closed
        let pending = waiters
        waiters = []
        for waiter in pending {
            waiter.body(.failure(.serverUnreachable(server: serverDescription, reason: "the connection was closed")))
        }
    }

    private func attempt() {
        guard case .idle = state else { return }
        let props = PulseProperties.make()
        defer { pa_proplist_free(props) }
        guard let context = pa_context_new_with_proplist(loop.api, PulseProperties.applicationName, props) else {
            fail(reason: "pa_context_new failed")
            return
        }
        pa_context_set_state_callback(context, { context, userdata in
            guard let context, let userdata else { return }
            Unmanaged<PulseConnection>.fromOpaque(userdata).takeUnretainedValue().stateChanged(context)
        }, Unmanaged.passUnretained(self).toOpaque())
        state = .connecting(context)
        // A connection that fails at once may already have run the state callback, which released the
        // context: only a context still ours may be touched here.
        if pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0,
            case .connecting(let current) = state, current == context
        {
            let reason = PulseError.text(pa_context_errno(context))
            release(context)
            state = .idle
            fail(reason: reason)
        }
    }

    private func stateChanged(_ context: OpaquePointer) {
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            guard case .connecting(let current) = state, current == context else { return }
            state = .ready(context)
            lostReported = false
            logger.debug("PulseAudio connected", metadata: ["pulse.server": "\(serverDescription)"])
            onReady?(context)
            let ready = waiters
            waiters = []
            for waiter in ready { waiter.body(.success(context)) }
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            let reason = PulseError.text(pa_context_errno(context))
            switch state {
            case .ready(let current) where current == context:
                logger.debug("PulseAudio connection lost", metadata: ["pulse.reason": "\(reason)"])
                // The owner hears it first, so it can release its streams while the context still exists.
                if !lostReported {
                    lostReported = true
                    onLost?("the PulseAudio server connection was lost (\(reason))")
                }
                release(context)
                state = .idle
                scheduleRetry()
            case .connecting(let current) where current == context:
                release(context)
                state = .idle
                fail(reason: reason)
            default:
                break
            }
        default:
            break
        }
    }

    /// A connection attempt failed: fail-fast waiters hear it, then poll again if asked to.
    private func fail(reason: String) {
        let error = PulseError.serverUnreachable(server: serverDescription, reason: reason)
        let failing = waiters.filter(\.failFast)
        waiters.removeAll(where: \.failFast)
        for waiter in failing { waiter.body(.failure(error)) }
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard keepTrying || !waiters.isEmpty, case .idle = state else { return }
        let timer = loop.addTimer(after: retryInterval, userdata: Unmanaged.passUnretained(self).toOpaque()) { _, _, _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseConnection>.fromOpaque(userdata).takeUnretainedValue().retryFired()
        }
        if let timer { state = .waitingToRetry(timer) }
    }

    private func retryFired() {
        guard case .waitingToRetry(let timer) = state else { return }
        loop.removeTimer(timer)
        state = .idle
        attempt()
    }

    private func release(_ context: OpaquePointer) {
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
    }
}
