import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// The node role against the reference Gateway: push-to-talk commands invoked by an operator, the
/// instance list, presence beacons, Talk phase notices and the wake phrases.
@Suite(.serialized) struct NodeTalkTests {
    /// A handler standing in for the Talk loop: records what it was asked and answers as the fact sheet shows.
    final class RecordingHandler: Sendable {
        let calls = Mutex<[(PushToTalkCommand, JSONValue?)]>([])
        struct Broken: Error, CustomStringConvertible { var description: String { "the microphone is gone" } }

        var handler: PushToTalkHandler {
            { command, params in
                self.calls.withLock { $0.append((command, params)) }
                switch command {
                case .start: return PushToTalkResult(captureId: "cap-1")
                case .stop: return PushToTalkResult(captureId: "cap-1", transcript: "four two", status: .queued)
                case .cancel: return PushToTalkResult(captureId: "cap-1", status: .cancelled)
                case .once: throw Broken()
                }
            }
        }
    }

    /// refgw's reply to an operator-style `node-invoke` control command: the node's `node.invoke.result`.
    static func invoke(_ h: TalkGatewayHarness, _ command: String, params: String = "null", force: Bool = false) async throws -> JSONValue {
        try #require(try await h.gateway.control(#"{"cmd":"node-invoke","command":"\#(command)","params":\#(params),"force":\#(force),"timeoutMs":10000}"#)["result"])
    }

    static func payload(_ result: JSONValue) -> JSONValue? {
        result["payloadJSON"]?.stringValue.flatMap { JSONValue.parse(Array($0.utf8)) }
    }

    @Test func `push-to-talk commands from an operator reach the handler and come back in the fact sheet's shapes`() async throws {
        let h = try await TalkGatewayHarness.start()
        let node = try await h.connect(TalkGatewayHarness.nodeProfile())
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { node.stop(); op.stop() }
        let recorder = RecordingHandler()
        let router = NodeCommandRouter(node: node.connection, nodeId: h.identity.deviceId,
                                       declared: TalkGatewayHarness.nodeProfile().commands, handler: recorder.handler, logger: h.logger)
        let routing = await router.start()
        defer { routing.cancel() }

        // Through the Gateway's own node.invoke method, as another operator client would call it.
        let started = try await op.connection.request(method: "node.invoke", params: [
            "nodeId": .string(h.identity.deviceId), "command": "talk.ptt.start", "params": ["sessionKey": "main"],
            "idempotencyKey": .string(UUID().uuidString),
        ], timeout: .seconds(15))
        #expect(started?["payload"] == ["captureId": "cap-1"])
        let stopped = try await Self.invoke(h, "talk.ptt.stop")
        #expect(stopped["ok"] == true)
        #expect(Self.payload(stopped) == ["captureId": "cap-1", "transcript": "four two", "status": "queued"])
        let cancelled = try await Self.invoke(h, "talk.ptt.cancel")
        #expect(Self.payload(cancelled) == ["captureId": "cap-1", "status": "cancelled"])
        #expect(recorder.calls.withLock { $0.map(\.0) } == [.start, .stop, .cancel])
        #expect(recorder.calls.withLock { $0.first?.1 } == ["sessionKey": "main"])

        // A handler failure is the command's failure, and the operator sees it as an error.
        await #expect(throws: GatewayRequestError.self) {
            _ = try await op.connection.request(method: "node.invoke", params: [
                "nodeId": .string(h.identity.deviceId), "command": "talk.ptt.once", "idempotencyKey": .string(UUID().uuidString),
            ], timeout: .seconds(15))
        }
        let failed = try await Self.invoke(h, "talk.ptt.once")
        #expect(failed["ok"] == false && failed["error"]?["code"] == "UNAVAILABLE")
        #expect(failed["error"]?["message"] == "the microphone is gone")
        try h.gateway.expectNoViolations()
    }

    @Test func `unknown and undeclared commands are refused with error results`() async throws {
        let h = try await TalkGatewayHarness.start()
        let declared = ["talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel"]
        let node = try await h.connect(TalkGatewayHarness.nodeProfile(commands: declared))
        defer { node.stop() }
        let recorder = RecordingHandler()
        let routing = await NodeCommandRouter(node: node.connection, nodeId: h.identity.deviceId, declared: declared,
                                              handler: recorder.handler, logger: h.logger).start()
        defer { routing.cancel() }
        // Forced past the Gateway's own allowlist, as a confused or hostile Gateway might.
        let undeclared = try await Self.invoke(h, "talk.ptt.once", force: true)
        #expect(undeclared["ok"] == false && undeclared["error"]?["code"] == "INVALID_REQUEST")
        #expect(undeclared["error"]?["message"]?.stringValue?.contains("not declared") == true)
        let unknown = try await Self.invoke(h, "camera.snap", force: true)
        #expect(unknown["ok"] == false && unknown["error"]?["message"] == "unknown command: camera.snap")
        #expect(recorder.calls.withLock { $0.isEmpty }, "the handler saw a refused command")
        try h.gateway.expectNoViolations()
    }

    @Test func `hostile node.invoke.request events are logged and answered only when they can be`() async throws {
        let h = try await TalkGatewayHarness.start()
        let node = try await h.connect(TalkGatewayHarness.nodeProfile())
        defer { node.stop() }
        let recorder = RecordingHandler()
        let routing = await NodeCommandRouter(node: node.connection, nodeId: h.identity.deviceId,
                                              declared: TalkGatewayHarness.nodeProfile().commands,
                                              handler: recorder.handler, logger: h.logger).start()
        defer { routing.cancel() }
        let hugeId = String(repeating: "x", count: 40_000)
        let events: [String] = [
            #"{"nodeId":"n","command":"talk.ptt.start"}"#,                           // no id: cannot be answered
            #"{"id":"\#(hugeId)","nodeId":"n","command":"talk.ptt.start"}"#,          // hostile id: not answered
            #"{"id":"bad-params","nodeId":"n","command":"talk.ptt.start","paramsJSON":"{nope"}"#,
            #"{"id":"no-command","nodeId":"n","command":17}"#,
            #""{\"id\":\"as-string\",\"nodeId\":\"n\",\"command\":\"talk.ptt.start\"}""#,  // payload as a JSON string
            #"[1,2,3]"#,
        ]
        for payload in events {
            let frame = #"{"type":"event","event":"node.invoke.request","payload":\#(payload)}"#
            try await h.gateway.control(JSONValue.object(["cmd": "send-raw", "text": .string(frame), "target": "authenticated"]).jsonText)
        }
        let answered = try await h.eventually {
            (try await h.gateway.control("node-results")["results"]?.arrayValue?.count ?? 0) >= 3
        }
        #expect(answered)
        let results = try await h.gateway.control("node-results")["results"]?.arrayValue ?? []
        let byId = Dictionary(results.compactMap { r in r["id"]?.stringValue.map { ($0, r) } }, uniquingKeysWith: { a, _ in a })
        #expect(Set(byId.keys) == ["bad-params", "no-command", "as-string"])
        #expect(byId["bad-params"]?["error"]?["code"] == "INVALID_REQUEST")
        #expect(byId["no-command"]?["ok"] == false)
        #expect(byId["as-string"]?["ok"] == true)
        #expect(h.logged(atLeast: .error).count >= 4, "\(h.logged(atLeast: .error))")
        #expect(await GatewayIntegrationTests.waitFor(node.connection, GatewayIntegrationTests.connected) != nil)
        try h.gateway.expectNoViolations()
    }

    @Test func `the device is in the instance list with its name, platform linux and a stable instance id`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        let mine: @Sendable ([PresenceEntry]) -> [PresenceEntry] = { $0.filter { $0.deviceId == h.identity.deviceId } }
        for round in 0..<2 {
            // A reconnect of the node keeps one entry with the same instance id.
            let node = try await h.connect(TalkGatewayHarness.nodeProfile())
            let entries = mine(try await NodePresence.list(on: op.connection))
            #expect(entries.count == 1, "round \(round): \(entries)")
            #expect(entries.first?.host == "Kitchen speaker" && entries.first?.platform == "linux")
            #expect(entries.first?.instanceId == h.identity.instanceId && entries.first?.roles == ["node"])
            let presence = NodePresence(node: node.connection, profile: TalkGatewayHarness.nodeProfile())
            #expect(try await presence.alive(trigger: .manual, sentAtMs: 1_700_000_000_000))
            #expect(mine(try await NodePresence.list(on: op.connection)).first?.reason == "manual")
            node.stop()
            #expect(try await h.eventually { mine(try await NodePresence.list(on: op.connection)).isEmpty })
        }
        let beacons = try await h.gateway.control("presence-beacons")["beacons"]?.arrayValue ?? []
        #expect(beacons.count == 2)
        #expect(beacons.first?["payload"]?["platform"] == "linux" && beacons.first?["payload"]?["displayName"] == "Kitchen speaker")
        try h.gateway.expectNoViolations()
    }

    @Test func `talk.mode phases are announced, and a Gateway without a Talk node is tolerated silently`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        let notifier = TalkModeNotifier(gateway: op.connection, logger: h.logger)
        #expect(await notifier.announce(enabled: true, phase: .listening) == .unavailable)
        #expect(h.logged(atLeast: .notice).isEmpty, "\(h.logged(atLeast: .notice))")
        let node = try await h.connect(TalkGatewayHarness.nodeProfile())
        defer { node.stop() }
        for phase in TalkPhase.allCases {
            #expect(await notifier.announce(enabled: true, phase: phase) == .accepted)
        }
        #expect(await notifier.announce(enabled: false, phase: nil) == .accepted)
        let modes = try await h.gateway.control("talk-modes")["modes"]?.arrayValue ?? []
        #expect(modes.map { $0["phase"] ?? .null } == [.string("listening")] + TalkPhase.allCases.map { .string($0.rawValue) } + [.null])
        #expect(modes.last?["enabled"] == false)
        try h.gateway.expectNoViolations()
    }

    @Test func `the wake phrases follow voicewake.get and voicewake.changed, ignoring hostile lists`() async throws {
        let h = try await TalkGatewayHarness.start()
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd":"voicewake-set","triggers":["hey kitchen"]}"#)
        let tracker = VoiceWakeTracker(reader: op.connection, logger: h.logger)
        final class Seen: Sendable { let lists = Mutex<[[String]]>([]) }
        let seen = Seen()
        let updates = await tracker.updates()
        let watching = Task { for await list in updates { seen.lists.withLock { $0.append(list) } } }
        let following = Task { await tracker.run() }
        defer { following.cancel(); watching.cancel() }
        func saw(_ lists: [[String]]) async throws -> Bool { try await h.eventually { seen.lists.withLock { $0 } == lists } }
        #expect(try await saw([VoiceWakeTracker.defaultTriggers, ["hey kitchen"]]), "voicewake.get at connect: \(seen.lists.withLock { $0 })")
        try await h.gateway.control(#"{"cmd":"voicewake-set","triggers":[" computer ","","talk to me"]}"#)
        #expect(try await saw([VoiceWakeTracker.defaultTriggers, ["hey kitchen"], ["computer", "talk to me"]]), "voicewake.changed")
        let long = String(repeating: "y", count: 40_000)
        for payload in [#"{"triggers":"computer"}"#, #"{}"#, #"{"triggers":[1,2]}"#, #"{"triggers":["\#(long)"]}"#] {
            try await h.gateway.control(JSONValue.object(["cmd": "send-raw", "text": .string(#"{"type":"event","event":"voicewake.changed","payload":\#(payload)}"#)]).jsonText)
        }
        try await h.gateway.control(#"{"cmd":"voicewake-set","triggers":["stop"]}"#)
        #expect(try await saw([VoiceWakeTracker.defaultTriggers, ["hey kitchen"], ["computer", "talk to me"], ["stop"]]),
                "a hostile list left the phrases alone: \(seen.lists.withLock { $0 })")
        #expect(await tracker.triggers == ["stop"])
        #expect(h.logged(atLeast: .error).count == 4, "\(h.logged(atLeast: .error))")
        try h.gateway.expectNoViolations()
    }
}
