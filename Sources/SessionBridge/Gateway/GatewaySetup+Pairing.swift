import Foundation
import Synchronization

extension GatewaySetup {
    /// Both roles' pairing as setup follows it: each socket is retried while its request waits for the owner (the
    /// Gateway may hold the operator's bootstrap connect until the node's request is approved and redeemed), each
    /// request id is shown as it appears and again when the Gateway replaces it, and the operator role that the code
    /// cannot pair (node-only, expired) gets the shared secret once, on a new operator socket. Ends when both roles
    /// are decided (paired, refused, no credential) or at the deadline (what is still waiting stays pending).
    struct RolePairing: Sendable {
        let session: GatewaySession
        let request: Request
        let hooks: Hooks
        let deadline: ContinuousClock.Instant

        struct Result: Sendable {
            var serverVersion: String
            var node: RoleOutcome
            var `operator`: RoleOutcome
        }

        func run() async throws -> Result {
            let board = Board()
            let (changes, notify) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            board.notify = notify
            let session = session
            let credentials = session.credentials
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await GatewaySession.run(session.node, role: .node, credentials: credentials) }
                group.addTask { await follow(session.node, role: .node, board) }
                group.addTask {
                    while await !credentials.hasOperatorCredential {
                        do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
                    }
                    await GatewaySession.run(session.operatorConnection, role: .operator, credentials: credentials)
                }
                group.addTask { await follow(session.operatorConnection, role: .operator, board) }
                group.addTask { await tick(board) }
                defer { group.cancelAll() }
                for await _ in changes {
                    if let failure = board.state.withLock({ $0.failure }) { throw failure }
                    let (node, op) = board.state.withLock { ($0.outcomes[.node], $0.outcomes[.operator]) }
                    if case .refused(let reason)? = node { throw SetupError.stopped(reason) }
                    if let node, let op { return Result(serverVersion: board.serverVersion, node: node, operator: op) }
                    guard ContinuousClock.now >= deadline else { continue }
                    // The wait is over: what is undecided stays pending under its last request id (a Gateway that
                    // never answered is said so).
                    let (ids, since, reason) = board.state.withLock { ($0.requestIds, $0.since, $0.reason) }
                    if since != nil, node == nil, op == nil {
                        throw SetupError.gaveUp(reason: reason, seconds: Int((request.timeout ?? request.transientTimeout).components.seconds))
                    }
                    let nodeNow = node ?? .pending(requestId: ids[.node])
                    let opNow = op ?? .pending(requestId: ids[.operator])
                    guard nodeNow.isPaired || opNow.isPaired else {
                        throw SetupError.approvalTimedOut(requestIds: [ids[.node], ids[.operator]].compactMap { $0 })
                    }
                    return Result(serverVersion: board.serverVersion, node: nodeNow, operator: opNow)
                }
                throw CancellationError()
            }
        }

        /// One socket's states until its role is decided.
        private func follow(_ connection: GatewayConnection, role: GatewayRole, _ board: Board) async {
            for await state in await connection.stateUpdates() {
                switch state {
                case .connected(let version):
                    let scopes = await connection.hello?.scopes ?? []
                    board.update { state in
                        state.since = nil
                        state.serverVersion = version
                        state.outcomes[role] = .paired(scopes: role == .node ? [] : scopes)
                        if role == .node { state.nodeAnswered = true }
                    }
                    hooks.progress(.rolePaired(role: role, scopes: role == .node ? [] : scopes))
                    return
                case .waitingForApproval(let id, _):
                    let reason = await connection.lastConnectError.flatMap(Self.pairingReason)
                    // The Gateway may hold the operator's bootstrap connect until the node's request is approved and
                    // redeemed: a request of its own (a role upgrade) comes only after that. Only a role's own request
                    // ids count for "replaced by".
                    let (old, waitsOnNode, replaced, operatorHeld) = board.update { state -> (String?, Bool, Bool, Bool) in
                        state.since = nil
                        // The operator's "own" request that turns out to be the node's: it was held on the node's.
                        var operatorHeld = false
                        if role == .node { state.nodeAnswered = true }
                        if role == .node, let id {
                            state.nodeRequestIds.insert(id)
                            if state.requestIds[.operator] == id {
                                state.requestIds[.operator] = nil
                                operatorHeld = true
                            }
                        }
                        let nodePaired = state.outcomes[.node]?.isPaired == true
                        let old = state.requestIds[role]
                        let oldWasNodes = old.map { state.nodeRequestIds.contains($0) } ?? true
                        let held = role == .operator && !nodePaired && oldWasNodes
                            && (id == nil || state.nodeRequestIds.contains(id!))
                        if let id, !held { state.requestIds[role] = id }
                        let replaced = role == .node ? old != nil : !oldWasNodes
                        return (old, held, replaced, operatorHeld)
                    }
                    if operatorHeld {
                        hooks.progress(.pairingPending(role: .operator, requestId: id, reason: nil, waitsOnNode: true))
                    }
                    if replaced, let old, let id, old != id, !waitsOnNode {
                        hooks.progress(.pairingSuperseded(role: role, old: old, new: id))
                    }
                    hooks.progress(.pairingPending(role: role, requestId: id, reason: reason, waitsOnNode: waitsOnNode))
                case .reconnecting(_, _, let reason):
                    board.update { state in
                        if state.since == nil { state.since = .now }
                        state.reason = reason
                    }
                    hooks.progress(.retrying(reason: reason))
                case .disconnected(let reason):
                    let error = await connection.lastConnectError
                    if role == .operator, error?.code == "AUTH_BOOTSTRAP_TOKEN_INVALID" {
                        await pairWithSecret(why: Self.noOperatorReason(error), board)
                    } else {
                        board.update { state in
                            state.outcomes[role] = .refused(reason: reason)
                            if role == .node { state.nodeAnswered = true }
                        }
                    }
                    return
                case .idle, .connecting:
                    continue
                }
            }
        }

        /// The code gives the operator role nothing: the shared token or password once, on a new operator socket,
        /// opened once the Gateway has answered the node's connect.
        private func pairWithSecret(why: String, _ board: Board) async {
            hooks.progress(.operatorCredentialNeeded(reason: why))
            var secret = request.operatorSecret
            if secret == nil { secret = await hooks.askOperatorSecret() }
            guard let secret, !Task.isCancelled else {
                board.update { $0.outcomes[.operator] = .noCredential(reason: why) }
                return
            }
            do { try await session.credentials.useOperatorSecret(secret) } catch {
                board.update { $0.outcomes[.operator] = .refused(reason: "\(error)") }
                return
            }
            // The Gateway must have answered the node's connect first: a node it pairs silently (a node-only code's
            // handoff) makes the device known, so the operator asks for a role upgrade of that device, as upstream's
            // owner expects; connecting beside the node's connect could reach the Gateway first and ask to pair an
            // unknown device (not-paired). A node that waits for approval has its request: the operator joins it.
            guard await board.wait(until: { $0.nodeAnswered }) else { return }   // setup ended
            let connection = session.newOperatorConnection()
            let credentials = session.credentials
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await GatewaySession.run(connection, role: .operator, credentials: credentials) }
                group.addTask { await follow(connection, role: .operator, board) }
                await group.next()   // the role is decided, or setup ended
                // Kept running until setup ends: cancelling it now would drop a socket the node may still wait beside.
                await group.next()
            }
        }

        /// Wakes the waiter every 200 ms for the deadline, and ends setup when the Gateway stayed unreachable.
        private func tick(_ board: Board) async {
            let limit = request.timeout ?? request.transientTimeout
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(200)) } catch { return }
                board.update { state in
                    if let since = state.since, ContinuousClock.now - since >= limit {
                        state.failure = SetupError.gaveUp(reason: state.reason, seconds: Int(limit.components.seconds))
                    }
                }
            }
        }

        /// `details.reason` of a pairing refusal, when it is one `PairingReason` knows.
        static func pairingReason(_ error: ConnectError) -> PairingReason? {
            guard case .rejected(let shape) = error, let reason = shape.details?["reason"]?.stringValue else { return nil }
            return PairingReason(rawValue: reason)
        }

        /// Why a refused bootstrap token leaves the operator role without a credential.
        static func noOperatorReason(_ error: ConnectError?) -> String {
            guard case .rejected(let shape)? = error else { return "the setup code was refused for the operator role" }
            switch shape.details?["reason"]?.stringValue {
            case "role-not-in-profile"?: return "this setup code gives no operator role (node only)"
            case "expired"?: return "the setup code expired before the operator role was paired"
            default: return "the setup code was refused for the operator role (node only, used up or expired)"
            }
        }
    }

    /// What the watching tasks share, and the signal that wakes setup's waiter when it changes.
    final class Board: Sendable {
        struct State {
            var outcomes: [GatewayRole: RoleOutcome] = [:]
            var requestIds: [GatewayRole: String] = [:]
            /// Every request id the node was told: the operator held on one of them has no request of its own yet.
            var nodeRequestIds: Set<String> = []
            /// The Gateway has answered a node connect (paired, pending approval, or refused): the device's pairing
            /// record reflects the node, so an operator request that follows is judged against it.
            var nodeAnswered = false
            var serverVersion = ""
            /// Since when connects have been failing without progress (nil: a role is progressing), and why.
            var since: ContinuousClock.Instant? = .now
            var reason = ""
            var failure: SetupError?
        }

        let state = Mutex(State())
        private let signal = Mutex<AsyncStream<Void>.Continuation?>(nil)
        /// Tasks in `wait(until:)`, woken by every update.
        private let waiters = Mutex<(next: Int, all: [Int: AsyncStream<Void>.Continuation])>((0, [:]))

        var notify: AsyncStream<Void>.Continuation? {
            get { signal.withLock { $0 } }
            set { signal.withLock { $0 = newValue } }
        }

        var serverVersion: String { state.withLock { $0.serverVersion } }

        @discardableResult
        func update<T>(_ change: (inout State) -> T) -> T {
            let result = state.withLock { change(&$0) }
            notify?.yield()
            for waiter in waiters.withLock({ Array($0.all.values) }) { waiter.yield() }
            return result
        }

        /// Returns true once `condition` holds for the state (checked now and after each update), false if the
        /// task is cancelled first.
        func wait(until condition: @Sendable (State) -> Bool) async -> Bool {
            let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            // Registered before the first check: an update between the check and the loop still wakes it.
            let key = waiters.withLock { waiters in
                defer { waiters.next += 1 }
                waiters.all[waiters.next] = continuation
                return waiters.next
            }
            defer { _ = waiters.withLock { $0.all.removeValue(forKey: key) } }
            if state.withLock({ condition($0) }) { return true }
            for await _ in changes where state.withLock({ condition($0) }) { return true }
            return false   // cancelled: the stream ends
        }
    }
}
