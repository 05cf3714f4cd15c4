import Foundation
import TalkTestSupport
import Testing

/// `bench gateway --json` run once with short settings, and the README's lists of figures: every figure the
/// README promises is in the output (`bench audio --json` is run beside the other audio commands, in
/// `AudioCommandLineTests`, which must not share the speaker with it). The figures themselves are not judged
/// here (`make bench` is for them). `bench talk` needs a sound server and recognition, so `RunLoopbackTests` runs it.
@Suite(.serialized) struct BenchCommandLineTests {
    /// Each figure as the README's *Benchmarks* section names it, and where it sits in the JSON (`[]` marks
    /// a list whose every element holds the rest of the path).
    static let audioFigures: [(readme: String, paths: [String])] = [
        ("Opus encode/decode µs per 20 ms frame", ["opus.encodeMicrosecondsMedian", "opus.encodeMicrosecondsP95",
                                                  "opus.decodeMicrosecondsMedian", "opus.decodeMicrosecondsP95"]),
        ("bytes per second", ["opus.bytesPerSecond"]),
        ("resampler cost", ["opus.resampler.[].microsecondsPerAudioSecond"]),
        ("PulseAudio capture latency", ["pulse.captureLatencyP50Ms", "pulse.captureLatencyP95Ms"]),
        ("idle capture CPU", ["pulse.idleCaptureCPUPercent"]),
        ("playback start and stop latency", ["pulse.playbackStartLatencyMs.median", "pulse.playbackStopLatencyMs.median"]),
    ]
    static let gatewayFigures: [(readme: String, paths: [String])] = [
        ("connect time to `hello-ok` (ws and wss)", ["connectToHelloOkMs.ws.median", "connectToHelloOkMs.wss.median"]),
        ("reconnect time after a Gateway restart", ["reconnectAfterRestartMs.afterGatewayBack.median"]),
        ("memory per connection", ["memoryPerConnectionKiB.ws", "memoryPerConnectionKiB.wss"]),
        ("`talk.speak` decode CPU ms per second of audio for each format (median and p90 of 10)",
         ["pcm_24000", "pcm_44100", "opus", "wav", "mp3"].map { "talkSpeakDecode.\($0).decodeMsPerAudioSecond.median" }),
        ("`chat.send` time to its ack and to the first delta (p50 and p95, the agent answering at once)",
         ["chatSendMs.toAck.p50", "chatSendMs.toAck.p95", "chatSendMs.toFirstDelta.p50", "chatSendMs.toFirstDelta.p95"]),
    ]

    static let talkFigures: [(readme: String, paths: [String])] = [
        ("the Talk loop through `run` on the dev corpus with the reference Gateway answering at once", ["clips", "transcriptsSent", "bargeIns"]),
        ("end of the user's speech to transcript sent (p50 and p95)", ["speechEndToTranscriptSentMs.p50", "speechEndToTranscriptSentMs.p95"]),
        ("to first reply audio (p50 and p95)", ["speechEndToFirstReplyAudioMs.p50", "speechEndToFirstReplyAudioMs.p95", "agentMs.p95"]),
        ("barge-in decision to playback silent (p50 and p95)", ["bargeInToSilentMs.p50", "bargeInToSilentMs.p95"]),
        ("ERLE of the reply's voice on the loopback", ["live.erleDb"]),
        ("CPU of a live session idle and while speaking", ["live.cpuPercent.idle.p50", "live.cpuPercent.speaking.p50"]),
        ("how often the reply's echo cut it off or came back as a turn with echo cancellation on and off",
         ["webrtc", "off"].flatMap { ["live.selfEcho.\($0).selfInterruptions", "live.selfEcho.\($0).echoTurns", "live.selfEcho.\($0).trials"] }),
        ("how often a user speaking over the reply stopped it with their words and how soon (recall, each trial's WER, and detection p50 and p95)",
         ["live.bargeIn.trials", "live.bargeIn.recall", "live.bargeIn.wer.[]", "live.bargeIn.detectionMs.p50", "live.bargeIn.detectionMs.p95"]),
        ("the live conditions (sound server, voice, reply length)", ["live.conditions.replyWords"]),
    ]

    /// The lines of docs/DEVELOPMENT.md (*Benchmarks*, where the README's list of figures moved) that describe
    /// `<file>`, joined (a description may wrap onto following lines).
    static func readmeDescription(of file: String) throws -> String {
        let readme = try String(contentsOfFile: TestInputs.packageRoot + "/docs/DEVELOPMENT.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("- `\(file)`") }) else { return "" }
        let rest = lines[(start + 1)...].prefix { !$0.hasPrefix("- ") && !$0.isEmpty }
        return ([lines[start]] + rest).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// The finite numbers found at `path` (several below a `[]`); empty when the path is missing, null, or
    /// anything but a finite number ("nan", "inf"): an unmeasured figure is a failure of the bench, not a value.
    static func numbers(at path: String, in json: Any) -> [Double] {
        var values: [Any] = [json]
        for key in path.split(separator: ".").map(String.init) {
            values = values.flatMap { value -> [Any] in
                if key == "[]" { return value as? [Any] ?? [] }
                return (value as? [String: Any])?[key].map { [$0] } ?? []
            }
        }
        let numbers = values.compactMap { value -> Double? in
            guard let number = value as? NSNumber else { return nil }
            return number.doubleValue.isFinite ? number.doubleValue : nil
        }
        return numbers.count == values.count ? numbers : []
    }

    static func check(_ figures: [(readme: String, paths: [String])], readmeFile: String, output: String) throws {
        let description = try readmeDescription(of: readmeFile)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)), "not JSON: \(output)")
        for figure in figures {
            #expect(description.contains(figure.readme), "the README no longer lists '\(figure.readme)' for \(readmeFile): update this test")
            for path in figure.paths {
                #expect(!numbers(at: path, in: json).isEmpty, "'\(figure.readme)': no number at \(path) in \(output)")
            }
        }
    }

    @Test func `the README's figure lists are the ones checked here`() throws {
        // Every comma-separated item of the README's description has its entry above.
        for (file, figures) in [("bench-audio.json", Self.audioFigures), ("bench-gateway.json", Self.gatewayFigures), ("bench-talk.json", Self.talkFigures)] {
            let description = try Self.readmeDescription(of: file)
            let covered = figures.map(\.readme).reduce(description) { $0.replacingOccurrences(of: $1, with: "") }
            let leftover = covered.replacingOccurrences(of: "- `\(file)`:", with: "")
                .components(separatedBy: CharacterSet(charactersIn: ",;.")).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && $0 != "and" }
            #expect(leftover.isEmpty, "README items for \(file) without a checked field: \(leftover)")
        }
    }

    @Test(.requires(.builtBinary)) func `bench gateway --json gives every figure the README lists`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(["bench", "gateway", "--json", "--rounds", "2", "--connections", "2",
                                       "--repository", TestInputs.packageRoot])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        try Self.check(Self.gatewayFigures, readmeFile: "bench-gateway.json", output: r.stdout)
    }
}
