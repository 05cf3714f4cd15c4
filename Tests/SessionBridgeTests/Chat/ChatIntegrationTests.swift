import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// The conversation against the reference Gateway's scripted agent, over real sockets.
@Suite(.serialized) struct ChatIntegrationTests {
    typealias Harness = GatewayIntegrationTests.Harness

    @Test func `a transcript is sent once, without timeoutMs, and its reply streams in order to final`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        try await h.gateway.control(#"{"cmd":"chat-script","reply":"The weather is sunny today","chunkChars":5}"#)
        let updates = await Self.collect(await rig.chat.send("what is the weather", interruptedAtSeconds: 1.26))
        #expect(updates.first.map { if case .accepted(_, "started") = $0 { true } else { false } } == true, "\(updates)")
        #expect(updates.last == .final("The weather is sunny today", source: .events))
        let partials = updates.compactMap { if case .partial(let t, let replaced) = $0 { (t, replaced) } else { nil } }
        // The Gateway streams six deltas; a reader that falls behind finds only the newest text (ChatReply), so the
        // partials read are some of these, in order, and the last one read is the whole reply.
        let streamed = ["The w", "The weathe", "The weather is ", "The weather is sunny", "The weather is sunny toda",
                        "The weather is sunny today"]
        let read = partials.map(\.0)
        #expect(read.last == streamed.last && read.allSatisfy(streamed.contains), "\(read)")
        #expect(read == read.sorted { streamed.firstIndex(of: $0)! < streamed.firstIndex(of: $1)! } && Set(read).count == read.count,
                "partials out of order or repeated: \(read)")
        #expect(partials.allSatisfy { !$0.1 })
        let sent = try await Self.transcripts(h)
        #expect(sent.count == 1)
        #expect(sent.first?["message"]?.stringValue == "Assistant speech interrupted at 1.3s.\n\nwhat is the weather")
        #expect(sent.first?["sessionKey"]?.stringValue == "agent:main:main")
        #expect(sent.first?["sends"]?.intValue == 1)
        let frames = try await h.gateway.control("frames")["frames"]?.arrayValue ?? []
        let params = frames.compactMap { $0["frame"] }.first { $0["method"]?.stringValue == "chat.send" }?["params"]
        #expect(params?["thinking"]?.stringValue == "low")
        #expect(params != nil && params?["timeoutMs"] == nil, "no timeoutMs: upstream it caps the whole agent run (chat.ts): \(String(describing: params))")
        #expect(await rig.outbox.count == 0)
        // An explicit session key wins over the Gateway's.
        _ = await Self.collect(await rig.chat.send("elsewhere", sessionKey: "agent:main:other"))
        #expect(try await Self.transcripts(h).last?["sessionKey"]?.stringValue == "agent:main:other")
        try h.gateway.expectNoViolations()
    }

    @Test(arguments: ["restart", "drop"])
    func `the Gateway lost between chat.send and its ack: the transcript arrives exactly once and is answered`(fault: String) async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        try await h.gateway.control(#"{"cmd":"chat-script","reply":"still here after all","chunkChars":4,"delayMs":120}"#)
        try await h.gateway.control(#"{"cmd":"chat-ack","mode":"\#(fault)","downMs":300}"#)
        let updates = await Self.collect(await rig.chat.send("are you there"))
        #expect(updates.last == .final("still here after all", source: .events) || updates.last == .final("still here after all", source: .history),
                "\(updates)")
        let sent = try await Self.transcripts(h)
        #expect(sent.count == 1, "\(sent)")
        #expect((sent.first?["sends"]?.intValue ?? 0) >= 2, "the transcript was sent again after the reconnect")
        #expect(Self.runId(updates) == sent.first?["runId"]?.stringValue, "the resend followed the original run")
        try h.gateway.expectNoViolations()
    }

    @Test func `a transcript left unacknowledged by a stopped client is delivered exactly once by the next one`() async throws {
        let h = try await Self.paired()
        let first = try Rig(h)
        #expect(await first.connected())
        try await h.gateway.control("chat-ack hold")
        let held = await first.chat.send("remember the milk")
        #expect(try await Self.eventually { try await Self.accepted(h, key: held.idempotencyKey).count == 1 })
        await first.stop()
        // Sent while the session is down: it only reaches the outbox file.
        let queued = await first.chat.send("and the eggs")
        #expect(await first.outbox.count == 2)
        try await h.gateway.control("chat-release")

        let second = try Rig(h)
        defer { Task { await second.stop() } }
        #expect(await second.connected())
        #expect(try await Self.eventually { await second.outbox.count == 0 })
        let milk = try await Self.accepted(h, key: held.idempotencyKey)
        let eggs = try await Self.accepted(h, key: queued.idempotencyKey)
        #expect(milk.count == 1)
        #expect(milk.first?["sends"]?.intValue == 2)
        #expect(eggs.count == 1)
        #expect(eggs.first?["message"]?.stringValue == "and the eggs")
        #expect(try await Self.transcripts(h).count == 2)
        try h.gateway.expectNoViolations()
    }

    @Test func `events that arrive before the ack are kept and given to the reply once it is acknowledged`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        try await h.gateway.control(#"{"cmd":"chat-script","reply":"early bird catches it","chunkChars":6,"delayMs":0}"#)
        try await h.gateway.control("chat-ack hold")
        let reply = await rig.chat.send("who is first")
        #expect(try await Self.eventually { try await Self.transcripts(h).first?["status"]?.stringValue == "final" },
                "the whole run played while its ack was held")
        try await h.gateway.control("chat-release")
        let updates = await Self.collect(reply)
        #expect(updates.first.map { if case .accepted = $0 { true } else { false } } == true)
        #expect(updates.last == .final("early bird catches it", source: .events), "\(updates)")
        // The early events reached the reply (a reader that falls behind sees the newest partial of them).
        #expect(updates.allSatisfy { if case .partial(let t, _) = $0 { "early bird catches it".hasPrefix(t) } else { true } }, "\(updates)")
        try h.gateway.expectNoViolations()
    }

    @Test func `without a session key in hello-ok, talk.config names the session, else main`() async throws {
        let h = try await Harness.start(["--print-setup-code", "--auto-approve", "--tick-interval-ms", "500"])
        try await h.gateway.control("session-defaults off")
        try await h.gateway.control(
            #"{"cmd":"talk-config","config":{"talk":{"resolved":{"provider":"system","config":{}}},"session":{"mainKey":"from-config"}}}"#)
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        _ = await Self.collect(await rig.chat.send("which session"))
        #expect(try await Self.transcripts(h).last?["sessionKey"]?.stringValue == "from-config")
        try await h.gateway.control("talk-config absent")
        try await h.gateway.control("drop")
        #expect(try await Self.eventually { await rig.chat.talkConfig == TalkConfig() })
        #expect(await rig.connected())
        _ = await Self.collect(await rig.chat.send("and now"))
        #expect(try await Self.transcripts(h).last?["sessionKey"]?.stringValue == "main")
        try h.gateway.expectNoViolations()
    }

    @Test func `replace is honoured, and foreign, duplicate, out-of-order and late events are ignored`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        guard let run = try await Self.manualRun(rig, "spell it") else { return }
        let id = run.0
        var it = run.1
        func inject(_ seq: Int, _ state: String, _ extra: String = "", run: String? = nil) async throws {
            let payload = #"{"runId":"\#(run ?? id)","sessionKey":"agent:main:main","seq":\#(seq),"state":"\#(state)"\#(extra)}"#
            try await h.gateway.control(#"{"cmd":"chat-event","payload":\#(payload)}"#)
        }
        try await inject(0, "delta", #","deltaText":"FOREIGN""#, run: "someone-else")
        try await inject(0, "delta", #","deltaText":"Hello""#)
        try await inject(0, "delta", #","deltaText":"Hello""#)
        try await inject(2, "delta", #","deltaText":" wrld""#)
        try await inject(1, "delta", #","deltaText":"OUT OF ORDER""#)
        try await inject(3, "delta", #","deltaText":"Hello world","replace":true"#)
        try await inject(4, "final")
        try await inject(5, "delta", #","deltaText":" LATE""#)
        var rest: [ChatReplyUpdate] = []
        while let u = await it.next() { rest.append(u) }
        // Read after the events came: a reader that falls behind finds the newest partial (with `replaced` if any it
        // stands for was), so the earlier ones may or may not be there, in order; nothing foreign, older or late is.
        #expect(rest.suffix(2) == [.partial("Hello world", replaced: true), .final("Hello world", source: .events)], "\(rest)")
        let earlier = Array(rest.dropLast(2))
        #expect([[], [.partial("Hello", replaced: false)], [.partial("Hello wrld", replaced: false)],
                 [.partial("Hello", replaced: false), .partial("Hello wrld", replaced: false)]].contains(earlier), "\(rest)")
        #expect(try await Self.eventually { h.logs.text.contains("after its run ended") }, "the late event was seen and ignored")
        try h.gateway.expectNoViolations()
    }

    @Test func `malformed chat payloads are logged and ignored, and the reply still ends`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        guard let run = try await Self.manualRun(rig, "break it") else { return }
        let id = run.0
        var it = run.1
        let huge = String(repeating: "z", count: 400_000)
        let bad = [
            #"7"#, #"{"sessionKey":"agent:main:main","seq":0,"state":"delta"}"#,
            #"{"runId":"\#(id)","sessionKey":"agent:main:main","seq":"0","state":"delta","deltaText":"x"}"#,
            #"{"runId":"\#(id)","sessionKey":"agent:main:main","seq":0,"state":"delta","deltaText":42}"#,
            #"{"runId":"\#(id)","sessionKey":"agent:main:main","seq":0,"state":"final","message":{"content":[{"type":"text","text":null}]}}"#,
            #"{"runId":"\#(id)","sessionKey":"agent:main:main","seq":0,"state":"delta","deltaText":"\#(huge)"}"#,
        ]
        for payload in bad {
            #expect(try await h.gateway.control(#"{"cmd":"chat-event","payload":\#(payload)}"#)["sent"] == 1)
        }
        let good = #"{"runId":"\#(id)","sessionKey":"agent:main:main","seq":1,"state":"final","message":"fine after all"}"#
        try await h.gateway.control(#"{"cmd":"chat-event","payload":\#(good)}"#)
        var rest: [ChatReplyUpdate] = []
        while let u = await it.next() { rest.append(u) }
        #expect(rest == [.final("fine after all", source: .events)])
        let errors = h.logs.events.filter { $0.level == .error && "\($0.message)".contains("malformed chat event") }
        #expect(errors.count == bad.count)
        #expect(!h.logs.text.contains(huge), "a huge string is not copied into the log")
        try h.gateway.expectNoViolations()
    }

    @Test func `with no terminal event the reply is read from chat.history`() async throws {
        let h = try await Self.paired()
        var settings = ChatClient.Settings()
        settings.replyTimeout = .milliseconds(500)
        settings.historyPollInterval = .milliseconds(100)
        let rig = try Rig(h, settings: settings)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        try await h.gateway.control(#"{"cmd":"chat-script","mode":"stall","stallMs":1200,"reply":"from the history"}"#)
        let future = ChatOutbox.wallClockMs() + 60_000
        try await h.gateway.control(
            #"{"cmd":"chat-history-add","sessionKey":"agent:main:main","row":{"role":"assistant","content":5,"timestamp":\#(future)}}"#)
        let updates = await Self.collect(await rig.chat.send("anyone?"))
        #expect(updates.last == .final("from the history", source: .history), "\(updates)")
        #expect(h.logs.text.contains("skipped a malformed chat.history row"))
        try h.gateway.expectNoViolations()
    }

    @Test func `abort stops a running reply and ends it as aborted`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        #expect(await rig.connected())
        let full = "one two three four five six seven eight nine ten"
        try await h.gateway.control(#"{"cmd":"chat-script","reply":"\#(full)","chunkChars":4,"delayMs":250}"#)
        let reply = await rig.chat.send("count slowly")
        var it = reply.makeAsyncIterator()
        #expect(await Self.next(&it) { if case .partial = $0 { true } else { false } } != nil)
        await rig.chat.abort(reply)
        var rest: [ChatReplyUpdate] = []
        while let u = await it.next() { rest.append(u) }
        guard case .aborted(let text)? = rest.last else {
            Issue.record("not aborted: \(rest)")
            return
        }
        #expect(!text.isEmpty && text.count < full.count)
        #expect(try await Self.transcripts(h).first?["status"]?.stringValue == "aborted")
        try h.gateway.expectNoViolations()
    }

    @Test func `a transcript aborted before it was sent is never sent`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h, start: false)
        defer { Task { await rig.stop() } }
        let reply = await rig.chat.send("never mind")
        await rig.chat.abort(reply)
        #expect(await Self.collect(reply, within: .seconds(5)) == [.aborted("")])
        rig.start()
        #expect(await rig.connected())
        #expect(await Self.collect(await rig.chat.send("this one")).last.map { if case .final = $0 { true } else { false } } == true)
        #expect(try await Self.transcripts(h).compactMap { $0["message"]?.stringValue } == ["this one"])
        try h.gateway.expectNoViolations()
    }

    @Test func `a full outbox drops its oldest transcript and sends the rest once, in order`() async throws {
        let h = try await Self.paired()
        var limits = ChatOutbox.Limits()
        limits.maxEntries = 2
        let rig = try Rig(h, limits: limits, start: false)
        defer { Task { await rig.stop() } }
        let dropped = await rig.chat.send("first of three")
        let kept = await rig.chat.send("second of three")
        let last = await rig.chat.send("third of three")
        #expect(await Self.collect(dropped, within: .seconds(5)).last == .failed(.droppedFromFullOutbox))
        #expect(h.logs.events.contains { $0.level == .warning && "\($0.message)".contains("full") })
        rig.start()
        #expect(await rig.connected())
        #expect(await Self.collect(kept).last.map { if case .final = $0 { true } else { false } } == true)
        #expect(await Self.collect(last).last.map { if case .final = $0 { true } else { false } } == true)
        #expect(try await Self.transcripts(h).compactMap { $0["message"]?.stringValue } == ["second of three", "third of three"])
        try h.gateway.expectNoViolations()
    }

    @Test func `transcripts older than the maximum age when the Gateway comes back are dropped, not sent`() async throws {
        let h = try await Self.paired()
        let clock = Mutex<Int64>(ChatOutbox.wallClockMs())
        var limits = ChatOutbox.Limits()
        limits.maxAge = .seconds(60)
        let rig = try Rig(h, limits: limits, nowMs: { clock.withLock { $0 } }, start: false)
        defer { Task { await rig.stop() } }
        let stale = await rig.chat.send("what time is it")
        clock.withLock { $0 += 61_000 }
        rig.start()
        #expect(await rig.connected())
        #expect(await Self.collect(stale).last == .failed(.expired))
        #expect(try await Self.transcripts(h).isEmpty)
        #expect(h.logs.events.contains { $0.level == .warning && "\($0.message)".contains("too long") })
        try h.gateway.expectNoViolations()
    }

    @Test func `talk.config is read at connect and again after a reconnect, and a Gateway without it is tolerated`() async throws {
        let h = try await Self.paired()
        let rig = try Rig(h)
        defer { Task { await rig.stop() } }
        let seen = Seen()
        let updates = await rig.chat.talkConfigUpdates()
        let reader = Task { for await c in updates { seen.withLock { $0.append(c) } } }
        defer { reader.cancel() }
        /// The first config read after the first `after` ones that matches (nil, recorded, when none came in 15 s).
        func arrives(after: Int = 0, _ predicate: @escaping (TalkConfig) -> Bool, sourceLocation: SourceLocation = #_sourceLocation)
            async throws -> TalkConfig?
        {
            let came = try await Self.eventually(within: .seconds(15)) { seen.withLock { $0.dropFirst(after).contains(where: predicate) } }
            #expect(came, "no matching talk.config read: \(seen.withLock { $0 })", sourceLocation: sourceLocation)
            return seen.withLock { $0.dropFirst(after).first(where: predicate) }
        }
        #expect(await rig.connected())
        let first = try await arrives { $0.silenceTimeoutMs != nil }
        #expect(first?.silenceTimeoutMs == 900)
        #expect(first?.voiceId == "refgw-voice")
        #expect(first?.sessionMainKey == "main")
        try await h.gateway.control(
            #"{"cmd":"talk-config","config":{"talk":{"resolved":{"provider":"system","config":{}},"silenceTimeoutMs":1500,"speechLocale":"fr-FR"}}}"#)
        try await h.gateway.control("drop")
        let second = try await arrives { $0.silenceTimeoutMs == 1500 }
        #expect(second?.speechLocale == "fr-FR")
        #expect(second?.provider == "system")
        let readSoFar = seen.withLock { $0.count }
        try await h.gateway.control("talk-config absent")
        try await h.gateway.control("drop")
        let third = try await arrives(after: readSoFar) { $0 == TalkConfig() }
        #expect(third != nil)
        #expect(TalkConfig.builtIn.merging(third ?? TalkConfig(silenceTimeoutMs: 1)).silenceTimeoutMs == 700)
        // The conversation still works on a Gateway without talk.config.
        #expect(await Self.collect(await rig.chat.send("still fine?")).last.map { if case .final = $0 { true } else { false } } == true)
        try h.gateway.expectNoViolations()
    }
}
