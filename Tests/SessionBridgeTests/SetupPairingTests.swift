import Foundation
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Setup against a Gateway that pairs as upstream does (refgw): a Linux `node-host` gets no operator token handed off;
/// each role of a `limited` or `full` code asks for approval (node first, then the operator's role upgrade), a
/// node-only code pairs the node and leaves the operator role a shared secret to give once.
@Suite(.serialized) struct SetupPairingTests {
    typealias Harness = GatewayIntegrationTests.Harness

    /// Progress lines seen, for assertions.
    final class Seen: Sendable {
        let all = Mutex<[GatewaySetup.Progress]>([])
        var list: [GatewaySetup.Progress] { all.withLock { $0 } }
        /// The request ids shown for a role, each once, in order.
        func pending(_ role: GatewayRole) -> [String] {
            var ids: [String] = []
            for case .pairingPending(role, let id?, _, false) in list where !ids.contains(id) { ids.append(id) }
            return ids
        }
    }

    static func setup(_ h: Harness, code: SetupCode, secret: CredentialStore.OperatorSecret? = nil, timeout: Duration? = nil,
                      ask: @escaping @Sendable () async -> CredentialStore.OperatorSecret? = { nil }, seen: Seen) async throws
        -> GatewaySetup.Outcome
    {
        var s = GatewaySetup(paths: h.paths, version: "0.1.0-test", logger: h.logger)
        s.timing = GatewayIntegrationTests.fastTiming
        var request = GatewaySetup.Request(code: code)
        request.operatorSecret = secret
        request.timeout = timeout
        return try await s.run(request, hooks: .init(confirmTrust: { _, _ in nil }, askOperatorSecret: ask) { p in
            seen.all.withLock { $0.append(p) }
        })
    }

    /// A fresh setup code of `profile` from refgw's control port.
    static func code(_ h: Harness, profile: String, ttlMs: Int? = nil) async throws -> SetupCode {
        var command: [String: JSONValue] = ["cmd": "setup-code", "profile": .string(profile)]
        if let ttlMs { command["ttlMs"] = .int(Int64(ttlMs)) }
        let minted = try await h.gateway.control(JSONValue.object(command).jsonText)
        return try SetupCode.parse(try #require(minted["setupCode"]?.stringValue))
    }

    /// Approves each request as it appears, until `count` were approved; returns them in order.
    static func approver(_ h: Harness, count: Int) -> Task<[String], any Error> {
        Task { try await h.gateway.approveRequests(count: count) }
    }

    @Test(arguments: ["limited", "full"])
    func `a code's two pending requests are shown, node first, and both roles end paired`(profile: String) async throws {
        let h = try await Harness.start(["--remote"])
        let seen = Seen()
        let approvals = Task {
            // As an owner a little slower than the client: the operator has asked (and been held) before the node's
            // request is approved; then the operator's own request.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let frames = try await h.gateway.control(#"{"cmd": "frames", "last": 100}"#)["frames"]?.arrayValue ?? []
                if frames.contains(where: { $0["frame"]?["method"] == "connect" && $0["frame"]?["params"]?["role"] == "operator" }) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try await h.gateway.approveRequests(count: 2)
        }
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: profile), seen: seen)
        let approved = try await approvals.value
        #expect(outcome.complete, "\(outcome)")
        #expect(outcome.operatorScopes == ["operator.approvals", "operator.read", "operator.write"])
        #expect(approved.count == 2 && approved[0] != approved[1], "two requests approved: \(approved)")
        #expect(seen.pending(.node) == [approved[0]], "the node's request was shown with its id: \(seen.list)")
        #expect(seen.pending(.operator).last == approved[1], "then the operator's: \(seen.list)")
        #expect(seen.list.contains { if case .pairingPending(.operator, _, _, true) = $0 { true } else { false } },
                "the operator was held until the node's request was approved: \(seen.list)")
        #expect(seen.list.contains { if case .pairingPending(.operator, _, .roleUpgrade?, false) = $0 { true } else { false } })
        let stored = await (try CredentialStore(paths: h.paths)).snapshot
        #expect(Set(stored.deviceTokens.keys) == ["node", "operator"])
        #expect(stored.bootstrapToken == nil, "the bootstrap token is dropped once both roles hold device tokens")
        try h.gateway.expectNoViolations()
        try h.expectNoSecretsLogged()
    }

    @Test func `each socket names itself as upstream expects of a Linux client, and each device has a name of its own`() async throws {
        let h = try await Harness.start(["--token", "t"])
        var names: [String] = []
        for _ in 0..<2 {   // two devices (two state folders) on this host
            let root = try TempDir()
            var s = GatewaySetup(paths: .under(root.path), version: "0.1.0-test", logger: h.logger)
            s.timing = GatewayIntegrationTests.fastTiming
            var code = try SetupCode.parse(h.gateway.startup.url)
            code.token = "t"
            let outcome = try await s.run(GatewaySetup.Request(code: code), hooks: .init(confirmTrust: { _, _ in nil }, progress: { _ in }))
            #expect(outcome.complete)
            let deviceId = try DeviceIdentity.loadOrCreate(paths: .under(root.path)).deviceId
            let frames = try await h.gateway.control(#"{"cmd": "frames", "last": 200}"#)["frames"]?.arrayValue ?? []
            let connects = frames.compactMap { $0["frame"] }.filter { $0["method"] == "connect" && $0["params"]?["device"]?["id"]?.stringValue == deviceId }
            let byRole = Dictionary(connects.compactMap { c in c["params"]?["role"]?.stringValue.map { ($0, c["params"]!) } }) { a, _ in a }
            #expect(byRole["node"]?["client"]?["id"] == "node-host" && byRole["node"]?["client"]?["mode"] == "node")
            #expect(byRole["operator"]?["client"]?["id"] == "cli" && byRole["operator"]?["client"]?["mode"] == "cli")
            for params in byRole.values {
                #expect(params["client"]?["platform"] == "linux" && params["client"]?["deviceFamily"] == "Linux")
            }
            let name = try #require(byRole["node"]?["client"]?["displayName"]?.stringValue)
            #expect(byRole["operator"]?["client"]?["displayName"]?.stringValue == name)
            names.append(name)
        }
        // Upstream prunes silent pairings of the same client id, mode and display name: two devices must not share one.
        #expect(Set(names).count == 2, "\(names)")
        try h.gateway.expectNoViolations()
    }

    @Test func `a loopback Gateway approves both roles silently, as upstream's local pairing`() async throws {
        let h = try await Harness.start([])
        let seen = Seen()
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: "limited"), seen: seen)
        #expect(outcome.complete)
        #expect(seen.pending(.node).isEmpty && seen.pending(.operator).isEmpty, "\(seen.list)")
        try h.gateway.expectNoViolations()
    }

    @Test func `a node-only code pairs the node and says the operator role has no credential`() async throws {
        let h = try await Harness.start(["--remote"])
        let seen = Seen()
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: "node"), seen: seen)
        #expect(outcome.node == .paired(scopes: []), "a node-host with a node-only code is paired without approval")
        #expect(outcome.operator == .noCredential(reason: "this setup code gives no operator role (node only)"))
        #expect(!outcome.complete)
        #expect(seen.list.contains(.operatorCredentialNeeded(reason: "this setup code gives no operator role (node only)")))
        let credentials = try CredentialStore(paths: h.paths, gatewayURL: outcome.url)
        #expect(await !credentials.hasOperatorCredential, "the node is stored; the operator has nothing to connect with")
        #expect(await credentials.snapshot.deviceTokens.keys.sorted() == ["node"])
        try h.gateway.expectNoViolations()
    }

    @Test(arguments: [false, true])
    func `a node-only code and the shared token given once pair the operator, and only its device token is kept`(prompted: Bool) async throws {
        let h = try await Harness.start(["--remote", "--token", "the-shared-token"])
        let seen = Seen()
        let secret = CredentialStore.OperatorSecret(token: "the-shared-token", password: nil)
        let approvals = Self.approver(h, count: 1)
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: "node"), secret: prompted ? nil : secret,
                                           ask: { prompted ? secret : nil }, seen: seen)
        #expect(outcome.complete, "\(outcome)")
        let approved = try await approvals.value
        #expect(seen.list.contains { if case .pairingPending(.operator, approved.first, .roleUpgrade?, false) = $0 { true } else { false } },
                "the operator's role upgrade was shown: \(seen.list)")
        let stored = await (try CredentialStore(paths: h.paths)).snapshot
        #expect(Set(stored.deviceTokens.keys) == ["node", "operator"])
        #expect(stored.sharedToken == nil && stored.operatorSecret == nil, "the shared token was used once, not kept")
        let file = String(decoding: try SecureStore.readFile(h.paths.tokensFile) ?? [], as: UTF8.self)
        #expect(!file.contains("the-shared-token"))
        try h.gateway.expectNoViolations()
        try h.expectNoSecretsLogged(["the-shared-token"])
    }

    @Test func `a rejected request is reported, not retried`() async throws {
        let h = try await Harness.start(["--remote"])
        let seen = Seen()
        let rejecter = Task {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if let id = try await h.gateway.control("pending")["pending"]?.arrayValue?.first?["requestId"]?.stringValue {
                    return try await h.gateway.control("reject \(id)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return JSONValue.null
        }
        await #expect(throws: SetupError.stopped("The Gateway's owner rejected this device's pairing request; ask them, then run setup again.")) {
            _ = try await Self.setup(h, code: try await Self.code(h, profile: "limited"), seen: seen)
        }
        _ = try await rejecter.value
        #expect(await (try CredentialStore(paths: h.paths)).snapshot.deviceTokens.isEmpty, "nothing stored")
    }

    @Test func `a request the Gateway replaces is shown with its new id, which is the one to approve`() async throws {
        // Both roles at once: the operator's connect supersedes the node's request with a merged one (device-pairing.ts).
        let h = try await Harness.start(["--remote", "--bootstrap-order", "any"])
        let seen = Seen()
        let approvals = Task {
            // Wait for the merged request (two roles) before approving, as an owner reading `openclaw devices list`.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let pending = try await h.gateway.control("pending")["pending"]?.arrayValue ?? []
                // Once both sockets have been told of it (the second connect refreshes it: attempts 2).
                // And only once setup has reported the replacement: the owner approving earlier (the operator's
                // two connects alone make attempts 2) can pair the node before its socket hears of the new id.
                if let merged = pending.first(where: { $0["roles"]?.stringArray?.count == 2 && ($0["attempts"]?.intValue ?? 0) >= 2 })?["requestId"]?.stringValue,
                   seen.list.contains(where: { if case .pairingSuperseded(_, _, merged) = $0 { true } else { false } }) {
                    _ = try await h.gateway.control("approve \(merged)")
                    return merged
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return ""
        }
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: "limited"), seen: seen)
        let merged = try await approvals.value
        #expect(outcome.complete)
        #expect(seen.list.contains { if case .pairingSuperseded(_, _, merged) = $0 { true } else { false } },
                "the replaced request was reported with the new id \(merged): \(seen.list)")
    }

    @Test func `with nothing approved, setup gives up when the code expires and stores nothing`() async throws {
        let h = try await Harness.start(["--remote"])
        let seen = Seen()
        await #expect(throws: SetupError.self) {
            _ = try await Self.setup(h, code: try await Self.code(h, profile: "limited"), timeout: .seconds(3), seen: seen)
        }
        #expect(!seen.pending(.node).isEmpty)
        #expect(try GatewayConfig.load(paths: h.paths) == nil)
    }

    @Test func `the operator still pending when the wait ends is kept for the daemon, with the code's token`() async throws {
        let h = try await Harness.start(["--remote"])
        let seen = Seen()
        let approvals = Self.approver(h, count: 1)   // the node only
        let outcome = try await Self.setup(h, code: try await Self.code(h, profile: "limited"), timeout: .seconds(6), seen: seen)
        _ = try await approvals.value
        guard case .pending(let id?) = outcome.operator else { Issue.record("\(outcome)"); return }
        #expect(outcome.node == .paired(scopes: []))
        #expect(seen.pending(.operator).last == id, "\(seen.list)")
        let stored = try CredentialStore(paths: h.paths, gatewayURL: outcome.url)
        #expect(await stored.hasOperatorCredential, "the code's token is kept while it lives, for the daemon to finish")
        #expect(await stored.auth(for: .operator).bootstrapToken != nil)
    }
}
