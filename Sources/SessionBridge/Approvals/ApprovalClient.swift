import Foundation
import TalkLogging

/// The approvals waiting for this device (fact sheet approvals §1): after each `hello-ok` it lists them
/// (`exec.approval.list`, `plugin.approval.list`, each where the Gateway offers it) and reconciles the list with the
/// `*.approval.requested` / `*.approval.resolved` events by id, as upstream's clients are told to (docs
/// gateway/clients.md "Backfill exec approvals": events are dropped for slow sockets); an approval is dropped at its
/// `expiresAtMs`, since the Gateway expires it without an event. Decisions go out with `approval.resolve` where
/// `hello-ok` lists it, else `exec.approval.resolve` / `plugin.approval.resolve`. `run()` follows the socket until
/// cancelled; `changes()` tells what happened.
package actor ApprovalClient {
    package struct Settings: Sendable {
        /// At most this many are kept; beyond, the one expiring first is dropped (a hostile Gateway cannot grow us).
        package var maxPending = 64
        package var requestTimeout: Duration = .seconds(15)
        package init() {}
    }

    package struct Dependencies: Sendable {
        package var nowMs: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        package var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        package init() {}
    }

    /// What happened to the pending set.
    package enum Change: Sendable, Equatable {
        case requested(PendingApproval)
        /// Decided: by this device (`byUs`), or elsewhere (`resolvedBy`: the deciding client's name, when known). A
        /// `nil` decision means it vanished from the Gateway's list while we were away.
        case resolved(id: String, decision: String?, resolvedBy: String?, byUs: Bool)
        case expired(id: String)
    }

    private let connection: any GatewayCalling
    private let settings: Settings
    private let dependencies: Dependencies
    private let logger: Logger
    private var pending: [String: PendingApproval] = [:]
    /// Ids decided or expired lately: a list answer taken before the decision must not bring one back. Bounded.
    private var finished: [String] = []
    /// For each list on its way (by token), the ids events have touched since it was asked for: the list cannot
    /// speak for those, and speaks for every other.
    private var touchedWhileListing: [Int: Set<String>] = [:]
    private var nextListToken = 0
    /// Lists on their way that can speak for no approval (an event without a usable id, or too many events).
    private var touchedAll: Set<Int> = []
    private var subscribers: [Int: AsyncStream<Change>.Continuation] = [:]
    private var nextSubscriber = 0
    private var expiryTimer: Task<Void, Never>?
    /// Decisions on their way, by id.
    private var deciding: [String: String] = [:]

    static let finishedLimit = 256
    /// Ids remembered per list on its way; beyond, the list drops nothing (a hostile Gateway cannot grow us).
    static let touchedLimit = 1024

    package init(connection: any GatewayCalling, settings: Settings = Settings(), dependencies: Dependencies = Dependencies(),
                 logger: Logger) {
        self.connection = connection
        self.settings = settings
        self.dependencies = dependencies
        self.logger = logger
    }

    /// The approvals still open, oldest first.
    package var approvals: [PendingApproval] {
        let now = dependencies.nowMs()
        return pending.values.filter { $0.isLive(atMs: now) }.sorted { ($0.createdAtMs, $0.id) < ($1.createdAtMs, $1.id) }
    }

    package func approval(id: String) -> PendingApproval? { pending[id] }

    /// Every change from now on.
    package func changes() -> AsyncStream<Change> {
        let (stream, c) = AsyncStream<Change>.makeStream(bufferingPolicy: .bufferingNewest(256))
        nextSubscriber += 1
        let key = nextSubscriber
        subscribers[key] = c
        c.onTermination = { _ in Task { await self.unsubscribe(key) } }
        return stream
    }

    private func unsubscribe(_ key: Int) { subscribers[key] = nil }

    /// Follows the socket until cancelled: a list at each connect, the events in between.
    package func run() async {
        let events = await connection.eventUpdates()
        let states = await connection.stateUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await e in events { await self.received(e) } }
            group.addTask {
                for await state in states {
                    if case .connected = state { await self.refresh() }
                }
            }
            await group.waitForAll()
        }
        expiryTimer?.cancel()
        subscribers.values.forEach { $0.finish() }
        subscribers = [:]
    }

    // MARK: listing

    /// Lists what the Gateway holds and reconciles it with what we know (also callable by a one-shot client).
    package func refresh() async { _ = await refreshReportingFailure() }

    /// `refresh`, returning why a list was refused (a missing scope), for a command that must say so.
    package func refreshReportingFailure() async -> ApprovalResolveError? {
        var failure: ApprovalResolveError?
        let hello = await connection.hello
        nextListToken += 1
        let token = nextListToken
        touchedWhileListing[token] = []
        defer {
            touchedWhileListing[token] = nil
            touchedAll.remove(token)
        }
        let knownBefore = Set(pending.keys)
        var listed: [PendingApproval] = []
        var complete = true
        for kind in ApprovalKind.allCases where Self.offers(hello, "\(kind.rawValue).approval.list", assumeLegacy: kind == .exec) {
            do {
                let result = try await connection.request(method: "\(kind.rawValue).approval.list", params: [:],
                                                          timeout: settings.requestTimeout)
                listed += parseList(result, kind: kind)
            } catch {
                complete = false
                failure = failure ?? ApprovalResolveError(error, id: "")
                logger.info("pending approvals were not listed", metadata: ["approval.kind": "\(kind.rawValue)", "error": "\(error)"])
            }
        }
        let now = dependencies.nowMs()
        for approval in listed where pending[approval.id] == nil && !finished.contains(approval.id) && approval.isLive(atMs: now) {
            add(approval)
        }
        // Gone from a complete list: decided or expired while we were not listening. Only what we knew before the
        // list was asked for, and only what no event touched meanwhile (an event about one approval says nothing
        // about the others).
        if complete, !touchedAll.contains(token) {
            let listedIds = Set(listed.map(\.id))
            let touched = touchedWhileListing[token] ?? []
            for id in knownBefore.subtracting(listedIds).subtracting(touched) where pending[id] != nil {
                finish(id)
                emit(.resolved(id: id, decision: nil, resolvedBy: nil, byUs: false))
            }
        }
        scheduleExpiry()
        return failure
    }

    private func parseList(_ result: JSONValue?, kind: ApprovalKind) -> [PendingApproval] {
        // An array, or (tolerated) an object holding one under `approvals` / `items`.
        let entries = result?.arrayValue ?? result?["approvals"]?.arrayValue ?? result?["items"]?.arrayValue ?? []
        let now = dependencies.nowMs()
        var parsed: [PendingApproval] = []
        for entry in entries.prefix(settings.maxPending * 4) {
            do { parsed.append(try PendingApproval(payload: entry, kind: kind, nowMs: now)) } catch {
                logger.info("ignored a malformed pending approval", metadata: ["error": "\(error)"])
            }
        }
        return parsed
    }

    /// Whether `hello-ok` lists `method`; a Gateway that lists no methods at all is taken to have the legacy ones.
    static func offers(_ hello: HelloOk?, _ method: String, assumeLegacy: Bool) -> Bool {
        guard let hello, !hello.methods.isEmpty else { return assumeLegacy }
        return hello.methods.contains(method)
    }

    // MARK: events

    private func received(_ event: GatewayFrame.Event) {
        guard let kind = ApprovalKind(eventName: event.name) else { return }
        let family = "\(kind.rawValue).approval."
        if event.name == family + "requested" {
            touch(event.payload?["id"]?.stringValue)
            let approval: PendingApproval
            do { approval = try PendingApproval(payload: event.payload, kind: kind, nowMs: dependencies.nowMs()) } catch {
                logger.info("ignored a malformed approval request", metadata: ["error": "\(error)"])
                return
            }
            guard !finished.contains(approval.id), approval.isLive(atMs: dependencies.nowMs()) else { return }
            if pending[approval.id] == nil { add(approval) } else { pending[approval.id] = approval }
            scheduleExpiry()
        } else if event.name == family + "resolved" {
            guard let id = event.payload?["id"]?.stringValue, !id.isEmpty, id.utf8.count <= 256 else { return }
            touch(id)
            guard pending[id] != nil else {
                // Not ours yet: a list answer on its way may still hold it.
                finish(id)
                return
            }
            let decision = event.payload?["decision"]?.stringValue.map { String($0.prefix(32)) }
            let by = event.payload?["resolvedBy"]?.stringValue.map { GatewayText.neutralized($0, limit: 80) }
            finish(id)
            // Our own decision's event may come before the answer to our request: it is still ours.
            let ours = deciding[id] != nil && deciding[id] == decision
            emit(.resolved(id: id, decision: decision, resolvedBy: ours ? nil : by, byUs: ours))
            scheduleExpiry()
        }
    }

    /// Tells the lists on their way that an event spoke about `id`. Past `touchedLimit` ids (a flood) a list no
    /// longer speaks for any approval (`touchedAll`), and nothing is dropped on its word.
    private func touch(_ id: String?) {
        guard !touchedWhileListing.isEmpty else { return }
        for token in touchedWhileListing.keys {
            if let id, id.utf8.count <= PendingApproval.Limits.idBytes, touchedWhileListing[token, default: []].count < Self.touchedLimit {
                touchedWhileListing[token]?.insert(id)
            } else {
                touchedAll.insert(token)
            }
        }
    }

    private func add(_ approval: PendingApproval) {
        pending[approval.id] = approval
        if pending.count > settings.maxPending, let first = pending.values.min(by: { $0.expiresAtMs < $1.expiresAtMs }) {
            logger.warning("too many pending approvals; the one expiring first is no longer followed", metadata: ["approval.id": "\(first.id)"])
            pending[first.id] = nil
            if first.id == approval.id { return }
        }
        logger.notice("approval requested", metadata: ["approval.id": "\(approval.id)", "approval.kind": "\(approval.kind.rawValue)"])
        emit(.requested(approval))
    }

    private func finish(_ id: String) {
        pending[id] = nil
        finished.append(id)
        if finished.count > Self.finishedLimit { finished.removeFirst(finished.count - Self.finishedLimit) }
    }

    private func emit(_ change: Change) { subscribers.values.forEach { $0.yield(change) } }

    // MARK: expiry

    private func scheduleExpiry() {
        expiryTimer?.cancel()
        guard let next = pending.values.map(\.expiresAtMs).min() else { return }
        let delay = max(0, next - dependencies.nowMs())
        let sleep = dependencies.sleep
        expiryTimer = Task {
            do { try await sleep(.milliseconds(delay)) } catch { return }
            await self.expireDue()
        }
    }

    /// Drops every approval past its `expiresAtMs` (the timer calls it; tests with a hand-moved clock too).
    package func expireDue() {
        let now = dependencies.nowMs()
        for approval in pending.values where !approval.isLive(atMs: now) {
            finish(approval.id)
            logger.info("approval expired", metadata: ["approval.id": "\(approval.id)"])
            emit(.expired(id: approval.id))
        }
        scheduleExpiry()
    }

    // MARK: deciding

    /// Sends `decision` for the approval `id` (a full id, or a prefix unique among those pending here; one unknown
    /// here goes to the Gateway as given, which takes unique prefixes of exec ids). Returns the full id decided.
    /// With `exact`, `id` is sent as it is, never matched as a prefix: the spoken prompt and a notification's
    /// buttons decide the approval they showed and no other.
    @discardableResult
    package func resolve(id: String, decision: ApprovalDecision, exact: Bool = false) async throws(ApprovalResolveError) -> String {
        let target: String
        if pending[id] != nil || exact {
            target = id
        } else {
            let matches = pending.keys.filter { $0.hasPrefix(id) }
            if matches.count > 1 { throw .ambiguousPrefix(id) }
            target = matches.first ?? id
        }
        let kind = pending[target]?.kind ?? ApprovalKind.guess(fromId: target)
        let hello = await connection.hello
        let method: String
        var params: JSONValue = ["id": .string(target), "decision": .string(decision.rawValue)]
        if Self.offers(hello, "approval.resolve", assumeLegacy: false) {
            method = "approval.resolve"
            params = ["id": .string(target), "kind": .string(kind.rawValue), "decision": .string(decision.rawValue)]
        } else {
            method = "\(kind.rawValue).approval.resolve"
        }
        deciding[target] = decision.rawValue
        defer { deciding[target] = nil }
        do {
            _ = try await connection.request(method: method, params: params, timeout: settings.requestTimeout)
        } catch {
            let failure = ApprovalResolveError(error, id: target)
            switch failure {
            case .notFound where pending[target] != nil:
                finish(target)
                emit(.expired(id: target))
            case .allowAlwaysUnavailable:
                // The Gateway said what its request did not (older ones list no decisions): not offered.
                pending[target]?.allowedDecisions.removeAll { $0 == .allowAlways }
            default:
                break
            }
            throw failure
        }
        logger.notice("approval decided", metadata: ["approval.id": "\(target)", "approval.decision": "\(decision.rawValue)"])
        if pending[target] != nil {
            finish(target)
            emit(.resolved(id: target, decision: decision.rawValue, resolvedBy: nil, byUs: true))
            scheduleExpiry()
        }
        return target
    }
}
