import Foundation
import TalkTestSupport
import Testing

@testable import AudioIO

@Suite struct OpusCodecTests {
    /// Encodes whole frames of `samples` (the tail zero-padded) and returns the packets.
    static func encode(_ samples: [Int16], with encoder: OpusEncoder) throws -> [[UInt8]] {
        let n = encoder.frameSize
        let padded = samples + [Int16](repeating: 0, count: (n - samples.count % n) % n)
        return try stride(from: 0, to: padded.count, by: n).map { try encoder.encode(Array(padded[$0..<$0 + n])) }
    }

    /// Decodes packets in order; `lost` packets are replaced by PLC or, with `useFEC`, by FEC from the next one.
    static func decode(_ packets: [[UInt8]], rate: Int, lost: Set<Int> = [], useFEC: Bool = false) throws -> [Int16] {
        let decoder = try OpusDecoder(sampleRate: rate)
        var out: [Int16] = []
        for (i, packet) in packets.enumerated() {
            if !lost.contains(i) {
                out += try decoder.decode(packet)
            } else if useFEC, i + 1 < packets.count, !lost.contains(i + 1) {
                out += try decoder.decodeFEC(from: packets[i + 1])
            } else {
                out += try decoder.decodeMissing()
            }
        }
        return out
    }

    /// Round trip at `rate`: the decoded waveform matches the input once shifted by the encoder's lookahead.
    static func expectWaveformKept(_ speech: [Int16], rate: Int, label: String) throws {
        let encoder = try OpusEncoder(configuration: .init(sampleRate: rate))
        let decoded = try decode(encode(speech, with: encoder), rate: rate)
        #expect(decoded.count >= speech.count)
        let lags = encoder.lookahead - 10...encoder.lookahead + 10
        let best = TestAudio.bestCorrelation(
            original: TestAudio.highPassed(speech, rate: rate), decoded: TestAudio.highPassed(decoded, rate: rate),
            lags: lags)
        print("Opus round trip, \(label) at \(rate) Hz: correlation \(best.value) at lag \(best.lag)")
        // Compared above 120 Hz: in the speech band the corpus scores 0.92-0.99 (full band, clips full of
        // rumble score as low as 0.16, as Opus drops it); a broken path or a wrong delay gives well under 0.5.
        #expect(best.value > 0.85, "\(label) at \(rate) Hz: correlation \(best.value) at lag \(best.lag)")
        #expect(abs(best.lag - encoder.lookahead) <= 2, "\(label): lag \(best.lag), lookahead \(encoder.lookahead)")
    }

    @Test(arguments: [16_000, 24_000])
    func `speech from pocketsphinx-testdata survives a round trip`(rate: Int) async throws {
        try await computeOffPool {
            for path in [TestAudio.goForwardRaw, TestAudio.cardsWav] {
                let speech = try AudioFileReader.readMono(path: path, sampleRate: rate).samples
                try Self.expectWaveformKept(speech, rate: rate, label: path)
            }
        }
    }

    @Test(.requires(.sharedCorpus)) func `speech from the shared corpus survives a round trip`() async throws {
        let dir = URL(fileURLWithPath: try TestInput.sharedCorpus.path())
        try await computeOffPool {
            let manifest = try String(contentsOf: dir.appendingPathComponent("manifest.tsv"), encoding: .utf8)
            let files = manifest.split(separator: "\n").dropFirst().compactMap { $0.split(separator: "\t").first }
            #expect(!files.isEmpty)
            for file in files {
                let speech = try AudioFileReader.readMono(path: dir.appendingPathComponent(String(file)).path).samples
                try Self.expectWaveformKept(speech, rate: 16_000, label: String(file))
            }
        }
    }

    /// The loudest frames in the middle of goforward.raw: voiced speech, where loss is most audible.
    static func voicedFrames(_ speech: [Int16], count: Int) -> [Int] {
        let frames = speech.count / 320
        let energies = (5..<frames - 5).map { ($0, TestAudio.rms(speech[$0 * 320..<($0 + 1) * 320])) }
        return energies.sorted { $0.1 > $1.1 }.prefix(count).map(\.0)
    }

    @Test func `concealment fills a lost packet with sound like its neighbours, without a click`() async throws {
        try await computeOffPool {
            let speech = try TestAudio.goForward()
            let packets = try Self.encode(speech, with: OpusEncoder())
            let reference = try Self.decode(packets, rate: 16_000)
            for lost in Self.voicedFrames(speech, count: 5) {
                let concealed = try Self.decode(packets, rate: 16_000, lost: [lost])
                #expect(concealed.count == reference.count)
                let frame = concealed[lost * 320..<(lost + 1) * 320]
                let before = TestAudio.rms(concealed[(lost - 1) * 320..<lost * 320])
                let energy = TestAudio.rms(frame)
                #expect(energy > 0.2 * before && energy < 2 * before, "frame \(lost): RMS \(energy) after \(before)")
                // A click is a jump between samples far larger than the signal's own steps around it.
                let window = (lost - 2) * 320..<(lost + 3) * 320
                let steps = Self.largestStep(concealed[window])
                let ownSteps = Self.largestStep(reference[window])
                #expect(steps <= 2 * ownSteps + 200, "frame \(lost): largest step \(steps), undamaged \(ownSteps)")
            }
        }
    }

    static func largestStep(_ x: ArraySlice<Int16>) -> Int {
        zip(x.dropFirst(), x).map { (a: Int16, b: Int16) -> Int in abs(Int(a) - Int(b)) }.max() ?? 0
    }

    @Test func `FEC recovers a lost packet better than concealment alone`() async throws {
        try await computeOffPool {
            let speech = try TestAudio.goForward()
            let encoder = try OpusEncoder(configuration: .init(inbandFEC: true, expectedPacketLossPercent: 20))
            let packets = try Self.encode(speech, with: encoder)
            let reference = try Self.decode(packets, rate: 16_000)
            var plcError = 0.0
            var fecError = 0.0
            for lost in Self.voicedFrames(speech, count: 10) {
                let range = lost * 320..<(lost + 1) * 320
                let plc = try Self.decode(packets, rate: 16_000, lost: [lost])
                let fec = try Self.decode(packets, rate: 16_000, lost: [lost], useFEC: true)
                plcError += zip(plc[range], reference[range]).reduce(0.0) { $0 + pow(Double($1.0) - Double($1.1), 2) }
                fecError += zip(fec[range], reference[range]).reduce(0.0) { $0 + pow(Double($1.0) - Double($1.1), 2) }
            }
            print("Lost-packet error energy over 10 voiced frames: FEC \(fecError), PLC only \(plcError)")
            #expect(fecError < plcError * 0.7, "error energy with FEC \(fecError), with PLC only \(plcError)")
        }
    }

    @Test func `DTX sends tiny packets for silence`() async throws {
        try await computeOffPool {
            let encoder = try OpusEncoder(configuration: .init(dtx: true))
            let packets = try Self.encode([Int16](repeating: 0, count: 320 * 50), with: encoder)
            let tiny = packets.filter(OpusEncoder.isDTXPacket).count
            // libopus enters DTX after 200 ms (10 frames) of silence.
            #expect(tiny >= 35, "\(tiny) of 50 silent frames were DTX packets")
            #expect(try Self.decode(packets, rate: 16_000).count == 320 * 50)
        }
    }

    @Test func `the bitrate setting governs the packet size`() async throws {
        try await computeOffPool {
            let speech = try TestAudio.goForward()
            var bytesPerSecond: [Int] = []
            for bitrate in [12_000, 24_000, 48_000] {
                let packets = try Self.encode(speech, with: OpusEncoder(configuration: .init(bitrate: bitrate)))
                let rate = packets.reduce(0) { $0 + $1.count } * 50 / packets.count
                #expect(Double(rate) < Double(bitrate) / 8 * 1.3, "\(rate) B/s at \(bitrate) bit/s")
                bytesPerSecond.append(rate)
            }
            #expect(bytesPerSecond == bytesPerSecond.sorted() && Set(bytesPerSecond).count == 3)
        }
    }

    @Test func `bad settings and frames give errors with libopus's words`() async throws {
        try await computeOffPool {
            #expect(throws: OpusError.unsupportedSampleRate(22_050)) {
                try OpusEncoder(configuration: .init(sampleRate: 22_050))
            }
            #expect(throws: OpusError.unsupportedSampleRate(44_100)) { try OpusDecoder(sampleRate: 44_100) }
            #expect(throws: OpusError.invalidSetting(name: "complexity", value: 11)) {
                try OpusEncoder(configuration: .init(complexity: 11))
            }
            let encoder = try OpusEncoder()
            #expect(throws: OpusError.wrongFrameSize(expected: 320, got: 100)) {
                try encoder.encode([Int16](repeating: 0, count: 100))
            }
            let decoder = try OpusDecoder()
            // A TOC byte announcing a code-3 packet with no frame count: libopus rejects it as corrupt.
            #expect { try decoder.decode([0x03]) } throws: { error in
                guard case OpusError.libopus(_, let code, let message) = error else { return false }
                return code < 0 && !message.isEmpty && "\(error)".contains(message)
            }
        }
    }
}
