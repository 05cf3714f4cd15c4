import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// What the chat integration tests share: a paired device with its session and chat client, and waits.
extension ChatIntegrationTests {
    /// A paired device, its running session and a chat client on the operator socket.
    final class Rig: Sendable {
        let h: Harness
        let session: GatewaySession
        let chat: ChatClient
        let outbox: ChatOutbox
        private let tasks: Mutex<[Task<Void, Never>]>

        init(_ h: Harness, settings: ChatClient.Settings = ChatClient.Settings(), limits: ChatOutbox.Limits = ChatOutbox.Limits(),
             nowMs: @escaping @Sendable () -> Int64 = ChatOutbox.wallClockMs, start: Bool = true) throws {
            self.h = h
            session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test", timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
            outbox = ChatOutbox(file: ChatOutbox.file(in: h.paths), limits: limits, nowMs: nowMs, logger: h.logger)
            var deps = ChatClient.Dependencies()
            deps.nowMs = nowMs
            chat = ChatClient(connection: session.operatorConnection, outbox: outbox, settings: settings, dependencies: deps, logger: h.logger)
            tasks = Mutex([])
            if start { self.start() }
        }

        func start() {
            let chat = chat
            let session = session
            tasks.withLock { $0 += [Task { await chat.run() }, Task { await session.run() }] }
        }

        func stop() async {
            let running = tasks.withLock { t in defer { t = [] }; return t }
            running.forEach { $0.cancel() }
            for t in running { await t.value }
        }

        func connected() async -> Bool {
            await GatewayIntegrationTests.waitFor(session.operatorConnection, within: .seconds(10), GatewayIntegrationTests.connected) != nil
        }

        deinit { tasks.withLock { $0.forEach { $0.cancel() } } }
    }

    static func paired(_ args: [String] = []) async throws -> Harness {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve", "--tick-interval-ms", "500"] + args)
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        return h
    }

    /// Every update of `reply` until it ends (or `within` passes).
    static func collect(_ reply: ChatReply, within: Duration = .seconds(20)) async -> [ChatReplyUpdate] {
        let seen = Mutex<[ChatReplyUpdate]>([])
        _ = try? await withDeadline(within, sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            for await u in reply { seen.withLock { $0.append(u) } }
            return true
        }
        return seen.withLock { $0 }
    }

    /// The first update of `reply` matching `predicate`, reading on (the iterator is shared).
    static func next(_ iterator: inout ChatReply.AsyncIterator, _ predicate: (ChatReplyUpdate) -> Bool) async -> ChatReplyUpdate? {
        while let u = await iterator.next() { if predicate(u) { return u } }
        return nil
    }

    /// Polls `condition` every 50 ms for up to `within`; whether it became true.
    static func eventually(within: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    /// A reply whose run sends nothing by itself (the test injects its events): its run id and updates,
    /// or nil (recorded) when it was not acknowledged.
    static func manualRun(_ rig: Rig, _ transcript: String) async throws -> (String, ChatReply.AsyncIterator)? {
        #expect(await rig.connected())
        try await rig.h.gateway.control(#"{"cmd":"chat-script","mode":"manual"}"#)
        var it = await rig.chat.send(transcript).makeAsyncIterator()
        guard case .accepted(let id?, _)? = await next(&it, { _ in true }) else {
            Issue.record("no ack")
            return nil
        }
        return (id, it)
    }

    static func transcripts(_ h: Harness) async throws -> [JSONValue] {
        try await h.gateway.control("chat-transcripts")["transcripts"]?.arrayValue ?? []
    }

    static func accepted(_ h: Harness, key: String) async throws -> [JSONValue] {
        try await transcripts(h).filter { $0["idempotencyKey"]?.stringValue == key }
    }

    static func runId(_ updates: [ChatReplyUpdate]) -> String? {
        for u in updates { if case .accepted(let id, _) = u { return id } }
        return nil
    }

    /// Configs read so far, shared with the reading task.
    final class Seen: Sendable {
        private let list = Mutex<[TalkConfig]>([])
        func withLock<T>(_ body: (inout [TalkConfig]) -> T) -> T { list.withLock { body(&$0) } }
    }
}
