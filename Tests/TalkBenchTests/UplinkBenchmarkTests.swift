import AudioIO
import SessionBridge
import TalkBench
import Testing

/// `bench uplink`'s wire figures without the command line or a Gateway: what each uplink costs on the wire for
/// the same speech, as the report gives it.
@Suite struct UplinkBenchmarkTests {
    static let speech = [SpeechLikeSignal.generate(seconds: 2), SpeechLikeSignal.generate(seconds: 1)]

    @Test func `each uplink's payload is its encoding's rate, and the wire adds base64 and the frame around it`() throws {
        let figures = try UplinkBenchmark.contracts.map { try UplinkBenchmark.measureWire($0, clips: Self.speech) }
        let byEncoding = Dictionary(uniqueKeysWithValues: figures.map { ($0.contract.encoding, $0) })
        let pcm = try #require(byEncoding[.pcm16])
        let muLaw = try #require(byEncoding[.g711ulaw])
        let opus = try #require(byEncoding[.opus])
        for f in figures {
            #expect(f.audioSeconds == 3, "\(f.contract)")
            // base64 alone is 4/3 of the payload; the request's JSON and the WebSocket header add more.
            #expect(Double(f.wireBytes) > Double(f.payloadBytes) * 4 / 3, "\(f.contract)")
            #expect(f.appends > 0 && f.cpuNs > 0, "\(f.contract)")
        }
        // PCM16 at 24 kHz is 48,000 bytes a second of audio, µ-law at 8 kHz 8,000 (resampling may round a few off).
        #expect(abs(Double(pcm.payloadBytes) / pcm.audioSeconds - 48_000) < 200, "\(pcm.payloadBytes)")
        #expect(abs(Double(muLaw.payloadBytes) / muLaw.audioSeconds - 8_000) < 100, "\(muLaw.payloadBytes)")
        #expect(opus.wireBytesPerSecond < muLaw.wireBytesPerSecond, "Opus \(opus.wireBytesPerSecond) B/s, µ-law \(muLaw.wireBytesPerSecond)")
    }

    @Test func `the report compares every uplink with PCM16 and has no latency it did not measure`() throws {
        let figures = try UplinkBenchmark.contracts.map { try UplinkBenchmark.measureWire($0, clips: Self.speech) }
        guard case .object(let report) = UplinkBenchmark.report(figures, clips: 2, manifest: "m.tsv") else {
            Issue.record("not an object")
            return
        }
        #expect(report["clips"] == .int(2) && report["manifest"] == .string("m.tsv"))
        for f in figures {
            guard case .object(let entry) = report[f.contract.description] else {
                Issue.record("no entry for \(f.contract.description): \(report.keys.sorted())")
                continue
            }
            let ratio = f.wireBytesPerSecond / figures.first { $0.contract.encoding == .pcm16 }!.wireBytesPerSecond
            #expect(entry["ratioToPcm16"] == .double((ratio * 1000).rounded() / 1000), "\(f.contract)")
            #expect(entry["speechEndToFinalMs"] == nil, "\(f.contract)")
        }
        let lines = UplinkBenchmark.lines(figures)
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains("B/s on the wire") && !$0.contains("end of speech") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("pcm16 24 kHz:") && $0.contains("(1.000 of PCM16)") }, "\(lines)")
    }
}
