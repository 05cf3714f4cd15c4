import AudioIO
import Foundation
import SessionBridge
import TalkLogging

/// `bench uplink`'s measurements of the relay uplinks over a set of clips: bytes per second on the wire (base64 in
/// the appendAudio request frame, with its WebSocket header), encoder CPU per second of audio (`measureWire`, no
/// Gateway), and end of speech → the relay's final with the reference Gateway (`measureLatency`).
package enum UplinkBenchmark {
    /// The uplinks measured: Opus 16 kHz, PCM16 24 kHz, µ-law 8 kHz.
    package static let contracts: [UplinkContract] = [
        try! UplinkContract(encoding: .opus, sampleRate: 16_000), .pcm16At24k, .muLawAt8k,
    ]

    /// One uplink's figures.
    package struct Figures: Sendable {
        package var contract: UplinkContract
        package init(contract: UplinkContract) { self.contract = contract }
        package var audioSeconds = 0.0
        package var wireBytes = 0
        package var payloadBytes = 0
        package var appends = 0
        package var cpuNs: UInt64 = 0
        package var latenciesMs: [Double] = []
        package var recognised = 0
        package var streamed = 0
        package var wireBytesPerSecond: Double { audioSeconds > 0 ? Double(wireBytes) / audioSeconds : 0 }
        package var coreShare: Double { audioSeconds > 0 ? Double(cpuNs) / 1e9 / audioSeconds : 0 }
        package var medianLatency: Double? { BenchStatistics.percentile(latenciesMs, 0.5) }
    }

    /// Encodes every clip in 20 ms frames and frames each chunk as the append request it would be.
    package static func measureWire(_ contract: UplinkContract, clips: [[Int16]]) throws -> Figures {
        var figures = Figures(contract: contract)
        let encoder = try UplinkEncoder(contract: contract)
        let sessionId = UUID().uuidString.lowercased()
        func account(_ chunk: UplinkChunk?) {
            guard let chunk else { return }
            figures.appends += 1
            figures.payloadBytes += chunk.bytes.count
            let params: JSONValue = ["sessionId": .string(sessionId), "audioBase64": .string(Data(chunk.bytes).base64EncodedString())]
            let text = GatewayFrame.request(id: "r1-\(figures.appends)", method: "talk.session.appendAudio", params: params)
            figures.wireBytes += text.utf8.count + webSocketHeader(text.utf8.count)
        }
        for clip in clips {
            figures.audioSeconds += Double(clip.count) / Double(AudioFrame.sampleRate)
            for start in stride(from: 0, to: clip.count, by: AudioFrame.samplesPerFrame) {
                var frame = Array(clip[start..<min(start + AudioFrame.samplesPerFrame, clip.count)])
                if frame.count < AudioFrame.samplesPerFrame { frame += [Int16](repeating: 0, count: AudioFrame.samplesPerFrame - frame.count) }
                let began = threadCPUNanoseconds()
                let chunk = try encoder.append(frame)
                figures.cpuNs += threadCPUNanoseconds() - began
                account(chunk)
            }
            let began = threadCPUNanoseconds()
            let tail = try encoder.finish()
            figures.cpuNs += threadCPUNanoseconds() - began
            account(tail)
        }
        return figures
    }

    /// A client's masked frame header: 2 bytes, 4 more for lengths over 125 (8 over 65535), and the 4-byte mask.
    static func webSocketHeader(_ length: Int) -> Int { (length < 126 ? 2 : length < 65_536 ? 4 : 10) + 4 }

    /// Streams clips in real time to the relay under this contract; times the end of each clip to its final.
    package static func measureLatency(_ figures: inout Figures, clips: [(transcript: String, samples: [Int16])], repository: String, logger: Logger) async throws {
        let contract = figures.contract
        let gateway = try await ReferenceGatewayProcess.forBenchmark(
            repositoryRoot: repository,
            arguments: ["--print-setup-code", "--auto-approve", "--quiet", "--transcription-uplink", "\(contract.encoding.rawValue)/\(contract.sampleRate)"])
        defer { gateway.stop() }
        let root = try BenchFolder.temporary()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = try await GatewayBenchmark.pair(with: gateway, under: root, logger: logger)
        let session = try GatewaySession.fromStoredSetup(paths: paths, version: "bench", logger: logger)
        let running = Task { await session.run() }
        defer { running.cancel() }
        let connection = session.operatorConnection
        let deadline = ContinuousClock.now + .seconds(15)
        while await connection.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let client = TalkRelayClient(gateway: connection, mode: .transcription, logger: logger)
        let events = await client.events()
        let finals = FinalTimes()
        let reader = Task {
            for await event in events {
                if case .transcript(_, let text, true) = event.kind, !text.isEmpty { await finals.add(text) }
            }
        }
        defer { reader.cancel() }
        let relaySession = try await client.ensureSession()
        let encoder = try UplinkEncoder(contract: try UplinkContract(encodingName: relaySession.inputEncoding, sampleRate: relaySession.inputSampleRateHz))
        for (transcript, samples) in clips {
            let silence = [Int16](repeating: 0, count: AudioFrame.sampleRate * 3 / 2)
            let signal = samples + silence
            let start = ContinuousClock.now
            var endOfSpeech: ContinuousClock.Instant?
            let before = await finals.count
            for (n, offset) in stride(from: 0, to: signal.count - AudioFrame.samplesPerFrame + 1, by: AudioFrame.samplesPerFrame).enumerated() {
                try await Task.sleep(until: start + .milliseconds(20 * (n + 1)), clock: .continuous)
                if let chunk = try encoder.append(Array(signal[offset..<offset + AudioFrame.samplesPerFrame])) {
                    _ = await client.append(chunk.bytes, audioMs: chunk.audioMs)
                }
                if endOfSpeech == nil, offset + AudioFrame.samplesPerFrame >= samples.count { endOfSpeech = ContinuousClock.now }
                if await finals.count > before { break }
            }
            if let chunk = try encoder.finish() { _ = await client.append(chunk.bytes, audioMs: chunk.audioMs) }
            let waitUntil = ContinuousClock.now + .seconds(5)
            while await finals.count == before, ContinuousClock.now < waitUntil { try await Task.sleep(for: .milliseconds(5)) }
            figures.streamed += 1
            if let (text, at) = await finals.last, await finals.count > before, let endOfSpeech {
                figures.latenciesMs.append(GatewayBenchmark.milliseconds(at - endOfSpeech))
                if text == transcript { figures.recognised += 1 }
            }
        }
        await client.close()
    }

    actor FinalTimes {
        private(set) var count = 0
        private(set) var last: (String, ContinuousClock.Instant)?
        func add(_ text: String) {
            count += 1
            last = (text, ContinuousClock.now)
        }
    }

    /// The report `--json` prints over `all` (one entry per uplink, keyed by its description), for `clips` clips.
    package static func report(_ all: [Figures], clips: Int, manifest: String) -> JSONValue {
        let pcm = pcmWireBytesPerSecond(all)
        var out: [String: JSONValue] = ["clips": .int(Int64(clips)), "manifest": .string(manifest)]
        for f in all {
            var entry: [String: JSONValue] = [
                "wireBytesPerSecond": .double(f.wireBytesPerSecond.rounded()),
                "payloadBytesPerSecond": .double((Double(f.payloadBytes) / f.audioSeconds).rounded()),
                "appendsPerSecond": .double((Double(f.appends) / f.audioSeconds * 10).rounded() / 10),
                "ratioToPcm16": .double(pcm > 0 ? (f.wireBytesPerSecond / pcm * 1000).rounded() / 1000 : 0),
                "cpuCoreShare": .double((f.coreShare * 1e5).rounded() / 1e5),
                "audioSeconds": .double((f.audioSeconds * 10).rounded() / 10),
            ]
            if let median = f.medianLatency {
                entry["speechEndToFinalMs"] = ["median": .double(median.rounded()), "max": .double(f.latenciesMs.max()!.rounded()),
                                               "clips": .int(Int64(f.streamed)), "recognised": .int(Int64(f.recognised))]
            }
            out[f.contract.description] = .object(entry)
        }
        return .object(out)
    }

    /// The report in words, a line an uplink.
    package static func lines(_ all: [Figures]) -> [String] {
        let pcm = pcmWireBytesPerSecond(all)
        return all.map { f in
            var line = String(format: "%@: %.0f B/s on the wire (%.3f of PCM16), %.3f %% of a core", f.contract.description,
                              f.wireBytesPerSecond, pcm > 0 ? f.wireBytesPerSecond / pcm : 0, f.coreShare * 100)
            if let median = f.medianLatency {
                line += String(format: "; end of speech to final: median %.0f ms over %d clips (%d recognised)", median, f.streamed, f.recognised)
            }
            return line
        }
    }

    private static func pcmWireBytesPerSecond(_ all: [Figures]) -> Double {
        all.first { $0.contract.encoding == .pcm16 }?.wireBytesPerSecond ?? 0
    }
}
