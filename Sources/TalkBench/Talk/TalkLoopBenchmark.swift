import AudioIO
import Foundation
import SessionBridge
import TalkLogging

/// `bench talk`'s sessions: the Talk loop's own latencies, end to end through `openclaw-talk run` children with the
/// reference Gateway answering at once. File devices time the turns exactly (sample n of the output track plays
/// while sample n of the input is heard); live sessions on the sound server's loopback measure CPU and how often the
/// reply's echo cuts the reply off, with echo cancellation and without (+Live), and barge-in (+BargeIn). The
/// command only parses, calls `run` and prints the report.
package enum TalkLoopBenchmark {
    package static let silenceMs = TalkBenchReport.silenceMs

    /// What to run.
    package struct Plan: Sendable {
        /// The file session's clips (16 kHz), one microphone track.
        package var clips: [String]
        /// Live self-echo sessions with echo cancellation and without, and barge-in sessions (all 0: no live half).
        package var trials: Int
        package var offTrials: Int
        package var bargeInTrials: Int
        package var conditions: TalkBenchConditions
        /// Each live session's echo stages are recorded to record/<session> (`bench aec --replay`).
        package var record: String?
        /// The live half's loopback: the sink played into (nil: the default) and the source that hears it (nil: its monitor).
        package var sink: String?
        package var source: String?
        /// Where the reference Gateway is.
        package var repository: String
        /// `run --stt` for the file session.
        package var stt: String
        /// Keep the sessions' folders (events, logs) for a look afterwards, named on stderr.
        package var keepSessions = false
        /// Another build's `openclaw-talk` whose `run` the sessions use (nil: this binary's): a before binary's
        /// sessions counted and judged by this bench.
        package var runBinary: String?

        package init(clips: [String], trials: Int, offTrials: Int, bargeInTrials: Int, conditions: TalkBenchConditions, record: String?,
                     sink: String?, source: String?, repository: String, stt: String) {
            (self.clips, self.trials, self.offTrials, self.bargeInTrials) = (clips, trials, offTrials, bargeInTrials)
            (self.conditions, self.record, self.sink, self.source, self.repository, self.stt) = (conditions, record, sink, source, repository, stt)
        }
    }

    /// Runs the file session, then the live half (whose failure is reported, not thrown).
    package static func run(_ plan: Plan) async throws -> TalkBenchReport {
        var logger = Logger(label: "openclaw-talk.bench.talk")
        logger.logLevel = .warning
        let root = try BenchFolder.temporary()
        defer {
            if plan.keepSessions {
                FileHandle.standardError.write(Data("bench talk: sessions kept in \(root)\n".utf8))
            } else {
                try? FileManager.default.removeItem(atPath: root)
            }
        }
        let gateway = try await ReferenceGatewayProcess.forBenchmark(repositoryRoot: plan.repository, arguments: ["--token", Self.token, "--auto-approve"])
        defer { gateway.stop() }
        // The file session's turns at once, in the local voice, the short reply: what is timed is this program, not an
        // agent or a Gateway's voice.
        _ = try gateway.control(#"{"cmd": "chat-script", "reply": "\#(TalkBenchConditions.shortReply)", "delayMs": 0}"#)
        _ = try gateway.control(TalkBenchConditions.fileSession.talkConfig(silenceMs: Self.silenceMs))

        var report = try await Self.fileTurns(plan.clips, gateway: gateway, folder: root + "/files", stt: plan.stt, binary: plan.runBinary)
        report.clips = plan.clips.count
        report.runBinary = plan.runBinary
        if plan.trials + plan.offTrials + plan.bargeInTrials > 0 {
            do {
                let (sinkName, sourceName) = try await Self.loopbackDevices(sink: plan.sink, source: plan.source, logger: logger)
                _ = try gateway.control(#"{"cmd": "chat-script", "reply": "\#(plan.conditions.reply)", "delayMs": 0}"#)
                _ = try gateway.control(plan.conditions.talkConfig(silenceMs: Self.silenceMs))
                if plan.conditions.realtime { _ = try gateway.control(plan.conditions.realtimeRelay) }
                let live = LivePlan(
                    trials: plan.trials, offTrials: plan.offTrials, bargeInTrials: plan.bargeInTrials, conditions: plan.conditions,
                    sink: sinkName, source: sourceName, folder: root + "/live", record: plan.record, runBinary: plan.runBinary)
                report.live = try await Self.live(live, gateway: gateway, logger: logger)
            } catch {
                report.liveUnavailable = String(describing: error)
            }
        } else {
            report.liveUnavailable = "skipped (--trials 0)"
        }
        return report
    }

    static let token = "bench-talk-token"

    /// The sink asked for (or the default) and the source asked for (or that sink's monitor).
    package static func loopbackDevices(sink: String?, source: String?, logger: Logger) async throws -> (sink: String, source: String) {
        let all = try await PulseDeviceList(logger: logger).devices()
        guard let sinkName = sink ?? all.first(where: { $0.kind == .sink && $0.isDefault })?.name else {
            throw PulseError.deviceNotFound(kind: .sink, name: "(default)", available: all.map(\.name))
        }
        if let source { return (sinkName, source) }
        let sources = all.filter { $0.kind == .source }
        guard let monitor = sources.first(where: { $0.monitorOfSink == sinkName })?.name else {
            throw PulseError.deviceNotFound(kind: .source, name: "\(sinkName).monitor", available: sources.map(\.name))
        }
        return (sinkName, monitor)
    }

    // MARK: - Turns through files

    /// One session whose microphone is every clip in turn: each next clip starts while the reply to the one
    /// before plays (1.8 s after that reply is due), so every turn is timed and every reply but the last cut.
    package static func fileTurns(
        _ paths: [String], gateway: ReferenceGatewayProcess, folder: String, stt: String, binary: String? = nil
    ) async throws -> TalkBenchReport {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let rate = AudioFrame.sampleRate
        var input = [Int16](repeating: 0, count: 3 * rate)
        for path in paths {
            input += try AudioFileReader.readMono(path: path).samples
            input += [Int16](repeating: 0, count: (silenceMs + 1800) * rate / 1000)
        }
        input += [Int16](repeating: 0, count: 10 * rate)
        let inputPath = folder + "/microphone.wav"
        try WAVAudio(sampleRate: rate, channels: 1, samples: input.map { Float($0) / 32_768 }).encoded()
            .write(to: URL(fileURLWithPath: inputPath))
        let outputPath = folder + "/speaker.wav"
        let seconds = Double(input.count) / Double(rate)
        let child = try await TalkChild(
            ["--gateway", gateway.startup.url, "--token", token, "--input", inputPath, "--output", outputPath, "--json",
             "--silence-ms", "\(silenceMs)", "--seconds", String(format: "%.1f", seconds), "--stt", stt],
            home: folder, binary: binary)
        // The session ends by itself after --seconds; the bound only catches a hang.
        _ = await child.ends(within: .seconds(Int(seconds) + 120))
        await child.stop()
        guard child.exitStatus == 0 else {
            throw TalkBenchFailure("the file session failed (\(child.exitStatus ?? -1)): \(child.stderr.suffix(600))")
        }
        let track = try WAVAudio.read(path: outputPath)
        return TalkBenchReport.turns(events: child.events, track: track.samples, sampleRate: track.sampleRate)
    }
}
