import AudioIO
import Foundation
import Glibc
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run --mode realtime` as a daemon, driven by its own CLI and control socket against the reference Gateway's
/// realtime relay: the status of a realtime turn, the control commands (pause and resume close and reopen the
/// microphone stream, talk stop and start close and reopen the relay session, reconnect), the commands that do
/// not apply refused with the reason, and `stop`. Real time: this suite runs in `make test`'s second pass.
@Suite(.serialized) struct RealtimeDaemonTests {
    static func statusJSON(_ h: DaemonHarness) async throws -> JSONValue? { try await UplinkStatusTests.statusJSON(h) }

    /// Polls `status --json` until `check` holds; returns that status (nil when it never did).
    static func status(_ h: DaemonHarness, timeout: Duration = .seconds(30), where check: @Sendable (JSONValue) -> Bool) async throws
        -> JSONValue?
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = try await statusJSON(h), check(status) { return status }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    static func relayLog(_ h: DaemonHarness) async throws -> [JSONValue] {
        try await offPool { try h.gateway.control("relay-log") }["log"]?.arrayValue ?? []
    }

    static func date(_ value: JSONValue?) -> Date? {
        value?.stringValue.flatMap { try? Date($0, strategy: .iso8601) }
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `status shows the realtime turn: listening, speaking, the words both ways and a heartbeat-renewed stale date`() async throws {
        let h = try await DaemonHarness.make(config: ["heartbeatSeconds": 5])
        defer { h.tearDown() }
        // The clip after 4 s of silence, and a reply that plays for seconds: a status read every 100 ms (each
        // a process of its own, slow on a busy machine) sees listening before the turn and cannot miss speaking.
        let reply = "you said {text}, and this answer goes on for a while so that it is still playing when the status is read"
        _ = try await offPool {
            try h.gateway.control(#"{"cmd": "talk-relay", "texts": ["go forward ten meters"], "reply": "\#(reply)"}"#)
        }
        let clip = h.command.home + "/late-clip.wav"
        let spoken = try AudioFileReader.readMono(path: try RunCommandTests.clip.path(), sampleRate: 16_000).samples
        try WAVAudio(PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 0, count: 4 * 16_000) + spoken)).write(path: clip)
        let output = h.command.home + "/out.wav"
        let running = try h.command.start(["run", "--mode", "realtime", "--input", clip, "--output", output])
        let listening = try #require(try await Self.status(h) { $0["state"] == "listening" }, "never listening: \(running.stderrSoFar)")
        #expect(listening["talk"]?["active"] == true && listening["talk"]?["mode"] == "realtime", "\(listening)")
        #expect(listening["gateway"]?["connected"] == true && listening["gateway"]?["state"] == "connected", "\(listening)")
        #expect(listening["audio"]?["source"]?.stringValue == "file:" + clip && listening["audio"]?["sink"]?.stringValue == "file:" + output)
        #expect(listening["audio"]?["echoCancellation"]?.stringValue?.isEmpty == false, "\(listening)")
        #expect(listening["audio"]?["uplink"] == "pcm16", "the reference Gateway's realtime contract: \(listening)")
        let beat = try #require(Self.date(listening["heartbeatAt"]), "\(listening)")
        let stale = try #require(Self.date(listening["staleAt"]), "\(listening)")
        #expect(abs(stale.timeIntervalSince(beat) - 300) < 1, "stale 300 s after the heartbeat: \(listening)")

        let speaking = try await Self.status(h) { $0["state"] == "speaking" }
        #expect(speaking != nil, "the relay's answer never showed as speaking")
        let answered = try #require(try await Self.status(h) { $0["state"] == "listening" && $0["lastReply"]?.stringValue != nil },
                                    "no reply shown: \(running.stderrSoFar)")
        #expect(answered["lastTranscript"] == "go forward ten meters", "\(answered)")
        #expect(answered["lastReply"]?.stringValue?.contains("go forward ten meters") == true, "\(answered)")
        let renewed = try #require(try await Self.status(h, timeout: .seconds(15)) {
            (Self.date($0["heartbeatAt"]).map { $0.timeIntervalSince(beat) >= 4 }) == true
        }, "the heartbeat was not renewed")
        #expect(Self.date(renewed["staleAt"]).map { $0 > stale } == true, "the stale date moved on with it: \(renewed)")

        let stop = try await h.run(["stop"])
        #expect(stop.status == 0 && stop.stdout == "Stopping.\n", "\(stop.stderr)")
        let outcome = try await running.finish(timeout: .seconds(60))
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let log = try await Self.relayLog(h)
        #expect(log.contains { $0["kind"] == "closed" && $0["mode"] == "realtime" }, "talk.session.close at the end: \(log)")
        #expect(!FileManager.default.fileExists(atPath: h.paths.socketPath), "its socket is gone")
        #expect(try await h.run(["status"]).status == 3)
        try TestInput.requireSchemaCheck(reportedByGateway: h.gateway.startup.schema, "the schema check of the frames sent")
        #expect(try await offPool { try h.gateway.control("violations") }["count"] == 0)
    }

    /// The native daemon waits for a Gateway that is down; the realtime one gave up after 15 s.
    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a Gateway down when the realtime daemon starts is waited for, then served`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        _ = try await offPool { try h.gateway.control(#"{"cmd": "restart", "downMs": 20000}"#) }
        let clip = try RunCommandTests.clip.path()
        let running = try h.command.start(["run", "--mode", "realtime", "--input", clip, "--output", h.command.home + "/out.wav"])
        try await Task.sleep(for: .seconds(17))
        #expect(running.process.isRunning, "it gave up on the Gateway: \(running.stderrSoFar)")
        #expect(running.stderrSoFar.contains("Waiting for the Gateway"), "\(running.stderrSoFar)")
        let served = try await Self.status(h, timeout: .seconds(60)) {
            $0["state"] == "listening" && $0["gateway"]?["connected"] == true && $0["talk"]?["mode"] == "realtime"
        }
        #expect(served != nil, "never served once the Gateway was back: \(running.stderrSoFar)")
        let sessions = try await offPool { try h.gateway.control("relay-sessions") }["sessions"]?.arrayValue ?? []
        #expect(!sessions.isEmpty, "no relay session once the Gateway was back")
        let stop = try await h.run(["stop"])
        #expect(stop.status == 0, "\(stop.stderr)")
        let outcome = try await running.finish(timeout: .seconds(60))
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
    }

    @Test(.requires(.builtBinary))
    func `start --mode realtime --idle serves detached with Talk off until talk start`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--mode", "realtime", "--idle"] + (try h.fileDevices))
        // `start` returns once the daemon answers on its control socket; it may still be connecting to the Gateway.
        let idle = try #require(try await Self.status(h) { $0["state"] != "connecting" }, "log: \(h.log)")
        #expect(idle["pid"]?.intValue == Int64(pid) && idle["state"] == "idle" && idle["talk"]?["active"] == false, "\(idle)")
        #expect(try await Self.relayLog(h).filter { $0["kind"] == "created" }.isEmpty, "Talk off: no relay session yet")
        let r = try await h.run(["talk", "start"])
        #expect(r.status == 0 && r.stdout == "Talk started.\n", "\(r.stderr)")
        let on = try await Self.statusJSON(h)
        #expect(on?["state"] == "listening" && on?["talk"]?["mode"] == "realtime", "\(String(describing: on))")
        #expect(try await Self.relayLog(h).filter { $0["kind"] == "created" }.count == 1)
        #expect(try await h.run(["stop"]).status == 0)
        #expect(await h.eventually { !DaemonHarness.alive(pid) }, "the daemon exits")
        #expect(try await h.eventually { try await Self.relayLog(h).contains { $0["kind"] == "closed" } }, "the relay session was closed")
        #expect(h.log.contains("stopped"), "\(h.log)")
    }

    /// Without echo cancellation nothing tells the answer's echo from the user: the daemon says at start that the
    /// voice does not stop the answer (`RealtimeTalkSession.Settings.halfDuplex`).
    @Test(.requires(.builtBinary))
    func `run --mode realtime --aec off says at start that barge-in by voice is off`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--mode", "realtime", "--aec", "off"] + (try h.fileDevices))
        #expect(try await Self.status(h) { $0["state"] == "listening" } != nil, "never listening: \(h.log)")
        #expect(h.log.contains("barge-in by voice is off without echo cancellation (--aec off)"), "\(h.log)")
        #expect(try await h.run(["stop"]).status == 0)
        #expect(await h.eventually { !DaemonHarness.alive(pid) }, "the daemon exits")
    }

    @Test(.requires(.builtBinary, DaemonHarness.pulse))
    func `pause, resume, talk stop and start, reconnect, say refused, ptt, and stop, with the real microphone`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let running = try h.command.start(["run", "--mode", "realtime"])
        let first = try #require(try await Self.status(h) { $0["state"] == "listening" }, "never listening: \(running.stderrSoFar)")
        let pid = try #require(first["pid"]?.intValue.map { Int32($0) })
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 1 }, "listening: one capture stream")
        #expect(try await h.eventually { try await Self.relayLog(h).filter { $0["kind"] == "created" }.count == 1 })

        var r = try await h.run(["pause"])
        #expect(r.status == 0 && r.stdout == "Paused.\n", "\(r.stderr)")
        #expect(try await Self.statusJSON(h)?["state"] == "paused")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 0 }, "paused: nothing records")
        r = try await h.run(["resume"])
        #expect(r.status == 0 && r.stdout == "Resumed.\n", "\(r.stderr)")
        #expect(try await Self.statusJSON(h)?["state"] == "listening")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 1 }, "resumed: the stream is back")

        // Typed turns do not apply: refused with the reason, the daemon goes on. Push-to-talk stops the answer (none
        // plays here) and has no capture to stop.
        r = try await h.run(["say", "hello there"])
        #expect(r.status == 1 && r.stderr.contains("does not apply in realtime mode"), "\(r.stdout) \(r.stderr)")
        r = try await h.run(["ptt", "start"])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        r = try await h.run(["ptt", "stop"])
        #expect(r.status == 1 && r.stderr.contains("only stops the answer"), "\(r.stdout) \(r.stderr)")
        #expect(try await Self.statusJSON(h)?["state"] == "listening")

        r = try await h.run(["talk", "stop"])
        #expect(r.status == 0, "\(r.stderr)")
        let off = try await Self.statusJSON(h)
        #expect(off?["talk"]?["active"] == false && off?["talk"]?["mode"] == .null, "\(String(describing: off))")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 0 }, "Talk off: the microphone is closed")
        #expect(try await h.eventually { try await Self.relayLog(h).filter { $0["kind"] == "closed" }.count == 1 },
                "talk stop closes the relay session")
        r = try await h.run(["pause"])
        #expect(r.status == 1 && r.stderr.contains("Talk is off"), "\(r.stderr)")
        r = try await h.run(["talk", "start"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try await Self.statusJSON(h)?["state"] == "listening")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 1 })
        #expect(try await Self.relayLog(h).filter { $0["kind"] == "created" }.count == 2, "talk start opens a new relay session")

        // A reconnect binds the relay session to the new socket: the microphone's next audio opens another.
        let before = try await offPool { try h.gateway.control("relay-sessions") }["sessions"]?.arrayValue?.first?["connId"]
        r = try await h.run(["reconnect"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try await h.eventually {
            let sessions = try await offPool { try h.gateway.control("relay-sessions") }["sessions"]?.arrayValue ?? []
            return sessions.contains { $0["connId"] != before && $0["mode"] == "realtime" }
        }, "no relay session on the new socket")
        #expect(try await Self.status(h) { $0["gateway"]?["state"] == "connected" && $0["state"] == "listening" } != nil)

        // The session open on the new socket (refgw forgets a session once closed, so it is read before the stop).
        let open = try await offPool { try h.gateway.control("relay-sessions") }["sessions"]?.arrayValue?
            .filter { $0["connId"] != before } ?? []
        let last = try #require(open.count == 1 ? open[0]["sessionId"]?.stringValue : nil, "not one relay session on the new socket: \(open)")
        r = try await h.run(["stop"])
        #expect(r.status == 0 && r.stdout == "Stopping.\n", "\(r.stderr)")
        let outcome = try await running.finish(timeout: .seconds(60))
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!DaemonHarness.alive(pid))
        let closed = try await Self.relayLog(h).filter { $0["kind"] == "closed" }.compactMap { $0["sessionId"]?.stringValue }
        #expect(closed.contains(last), "the last relay session \(last) was not closed at the end: closed \(closed)")
        try TestInput.requireSchemaCheck(reportedByGateway: h.gateway.startup.schema, "the schema check of the frames sent")
        #expect(try await offPool { try h.gateway.control("violations") }["count"] == 0)
    }
}
