import Foundation
import Synchronization
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk status --json` while a relay streams the clip to the reference Gateway: the uplink names the
/// contract the Gateway stated, and its bytes per second fit what the Gateway received (its decoded turn's
/// payload bytes over its length, plus base64 and the request frames). Both relays: `run --stt gateway` and
/// `run --mode realtime`. Real time (the clip plays at its pace): this suite runs in `make test`'s second pass.
@Suite(.serialized) struct UplinkStatusTests {
    /// PCM16 at 24 kHz on the wire (base64): what Opus must stay well under.
    static let pcm16At24kWire = 48_000.0 * 4 / 3

    /// `status --json` as the CLI prints it (nil while no daemon answers).
    static func statusJSON(_ h: DaemonHarness) async throws -> JSONValue? {
        let r = try await h.run(["status", "--json"], timeout: .seconds(20))
        guard r.status == 0 else { return nil }
        return JSONValue.parse(Array(r.stdout.utf8))
    }

    /// The first status (polled through the CLI) whose audio names an uplink.
    static func statusWithUplink(_ h: DaemonHarness, timeout: Duration = .seconds(40)) async throws -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = try await statusJSON(h), status["audio"]?["uplink"]?.stringValue != nil { return status }
            try await Task.sleep(for: .milliseconds(150))
        }
        return nil
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    /// Runs `run` with `options` beside the Gateway of `h`, reads the status while the relay streams, stops the
    /// daemon with `stop` and returns that status, the Gateway's longest turn of `mode` and the run's exit status.
    static func streamedStatus(_ h: DaemonHarness, mode: String, options: [String]) async throws
        -> (status: JSONValue, turn: JSONValue, sessionsWhileStreaming: [JSONValue], exit: Int32, stderr: String)
    {
        let running = try h.command.start(["run", "--input", try RunCommandTests.clip.path(), "--output", h.command.home + "/out.wav",
                                           "--seconds", "60"] + options)
        let status = try await statusWithUplink(h)
        let sessions = try await offPool { try h.gateway.control("relay-sessions") }["sessions"]?.arrayValue ?? []
        // The turn is over once the Gateway has it (its final follows the clip's end).
        let deadline = ContinuousClock.now + .seconds(30)
        var turns: [JSONValue] = []
        while ContinuousClock.now < deadline {
            turns = (try await offPool { try h.gateway.control("relay-turns") }["turns"]?.arrayValue ?? []).filter { $0["mode"]?.stringValue == mode }
            if turns.contains(where: { ($0["durationMs"]?.intValue ?? 0) >= 2_500 }) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let stop = try await h.run(["stop"])
        #expect(stop.status == 0, "stop: \(stop.stdout) \(stop.stderr)\nlog: \(h.log)")
        let outcome = try await running.finish(timeout: .seconds(60))
        let uplinkStatus = try #require(status, "no status named an uplink; stderr: \(outcome.stderr)")
        let turn = try #require(turns.max { ($0["durationMs"]?.intValue ?? 0) < ($1["durationMs"]?.intValue ?? 0) },
                                "the Gateway got no \(mode) turn; stderr: \(outcome.stderr)")
        return (uplinkStatus, turn, sessions, outcome.status, outcome.stderr)
    }

    /// The uplink's payload bytes per second as the Gateway received them.
    static func received(_ turn: JSONValue) throws -> Double {
        let bytes = try #require(number(turn["bytes"]))
        let ms = try #require(number(turn["durationMs"]))
        return bytes * 1000 / ms
    }

    /// Checks the status figure against what the Gateway received: at least the base64 of it (Opus: 0.8 of it, as
    /// its rate varies with the sound), at most 1.1 times that (Opus: 1.5) plus 3 kB/s of request frames; Opus well
    /// under a fifth of PCM16's rate.
    static func expectPlausible(_ bytesPerSecond: Double, received: Double, encoding: String, _ context: String) {
        let base64 = received * 4 / 3
        switch encoding {
        case "g711_ulaw": #expect(abs(received - 8_000) < 400, "µ-law 8 kHz is 8,000 B/s of audio: \(received) (\(context))")
        case "pcm16": #expect(abs(received - 48_000) < 2_400, "PCM16 24 kHz is 48,000 B/s of audio: \(received) (\(context))")
        default: #expect(bytesPerSecond < Self.pcm16At24kWire / 5, "Opus under a fifth of PCM16: \(bytesPerSecond) (\(context))")
        }
        let (floor, ceiling) = encoding == "opus" ? (base64 * 0.8, base64 * 1.5 + 3_000) : (base64, base64 * 1.1 + 3_000)
        #expect(bytesPerSecond >= floor && bytesPerSecond <= ceiling,
                "status says \(bytesPerSecond) B/s on the wire; the Gateway received \(received) B/s of \(encoding) (\(context))")
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip), arguments: ["opus/16000", "g711_ulaw/8000", "pcm16/24000"])
    func `run --stt gateway: status names the transcription uplink and a plausible rate while it streams`(uplink: String) async throws {
        let h = try await DaemonHarness.make(gatewayArguments: ["--transcription-uplink", uplink])
        defer { h.tearDown() }
        _ = try await offPool { try h.gateway.control(#"{"cmd": "talk-relay", "texts": ["the relay heard this"]}"#) }
        let encoding = String(uplink.prefix { $0 != "/" })
        let r = try await Self.streamedStatus(h, mode: "transcription", options: ["--stt", "gateway"])
        #expect(r.exit == 0, "stderr: \(r.stderr)")
        #expect(r.status["talk"]?["mode"] == "continuous")
        #expect(r.status["audio"]?["uplink"]?.stringValue == encoding, "\(r.status)")
        #expect(r.sessionsWhileStreaming.contains { $0["mode"] == "transcription" && $0["encoding"]?.stringValue == encoding },
                "the relay session was live when the status was read: \(r.sessionsWhileStreaming)")
        #expect(r.turn["encoding"]?.stringValue == encoding)
        let bytesPerSecond = try #require(Self.number(r.status["audio"]?["uplinkBytesPerSecond"]), "\(r.status)")
        Self.expectPlausible(bytesPerSecond, received: try Self.received(r.turn), encoding: encoding, "\(r.turn)")
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip), arguments: ["opus/16000", "g711_ulaw/8000", "pcm16/24000"])
    func `run --mode realtime: status names the realtime uplink and a plausible rate while it streams`(uplink: String) async throws {
        let h = try await DaemonHarness.make(gatewayArguments: ["--realtime-uplink", uplink])
        defer { h.tearDown() }
        _ = try await offPool { try h.gateway.control(#"{"cmd": "talk-relay", "texts": ["go forward ten meters"]}"#) }
        let encoding = String(uplink.prefix { $0 != "/" })
        let r = try await Self.streamedStatus(h, mode: "realtime", options: ["--mode", "realtime"])
        #expect(r.exit == 0, "stderr: \(r.stderr)")
        #expect(r.status["talk"]?["mode"] == "realtime", "\(r.status)")
        #expect(r.status["audio"]?["uplink"]?.stringValue == encoding, "\(r.status)")
        #expect(r.sessionsWhileStreaming.contains { $0["mode"] == "realtime" && $0["encoding"]?.stringValue == encoding },
                "the relay session was live when the status was read: \(r.sessionsWhileStreaming)")
        let bytesPerSecond = try #require(Self.number(r.status["audio"]?["uplinkBytesPerSecond"]), "\(r.status)")
        Self.expectPlausible(bytesPerSecond, received: try Self.received(r.turn), encoding: encoding, "\(r.turn)")
    }
}
