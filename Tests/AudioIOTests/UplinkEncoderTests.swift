import TalkTestSupport
import Testing

@testable import AudioIO

@Suite struct UplinkEncoderTests {
    // CPU-heavy checks run off the cooperative pool (two threads here), so they never starve the suites beside them.
    @Test func `the µ-law tables agree with G.711 for every sample and byte`() async throws {
        let mismatches = try await computeOffPool {
            (Int(Int16.min)...Int(Int16.max)).filter { MuLaw.encode(Int16($0)) != MuLaw.encodeSlow(Int16($0)) }
        }
        #expect(mismatches.isEmpty, "samples encoded differently: \(mismatches.prefix(10))")
        #expect(MuLaw.encode(0) == 0xFF)
        #expect(MuLaw.encode(Int16.max) == 0x80)
        #expect(MuLaw.encode(Int16.min) == 0x00)
        for byte in 0...255 {
            let linear = MuLaw.decode(UInt8(byte))
            // Decoding then encoding gives the byte back (0x7F is -0: the same as 0xFF).
            let again = MuLaw.encode(linear)
            #expect(again == UInt8(byte) || (byte == 0x7F && again == 0xFF), "byte \(byte)")
        }
        // Companding error stays within half a step: at most about 6 % of the value.
        for value in stride(from: -32000, through: 32000, by: 37) {
            let back = Int(MuLaw.decode(MuLaw.encode(Int16(value))))
            #expect(abs(back - value) <= max(16, abs(value) / 16), "\(value) came back as \(back)")
        }
    }

    static let contracts: [UplinkContract] = [
        .pcm16At24k, .muLawAt8k,
        try! UplinkContract(encoding: .opus, sampleRate: 16_000),
        try! UplinkContract(encoding: .opus, sampleRate: 48_000),
        try! UplinkContract(encoding: .pcm16, sampleRate: 16_000),
    ]

    @Test(arguments: contracts)
    func `speech streamed in 20 ms frames decodes to what was captured`(contract: UplinkContract) async throws {
        try await computeOffPool { try Self.streamedSpeechDecodes(contract) }
    }

    private static func streamedSpeechDecodes(_ contract: UplinkContract) throws {
        let speech = try TestAudio.goForward()
        let encoder = try UplinkEncoder(contract: contract)
        var chunks: [UplinkChunk] = []
        for start in stride(from: 0, to: speech.count - 319, by: 320) {
            if let chunk = try encoder.append(Array(speech[start..<start + 320])) { chunks.append(chunk) }
        }
        if let last = try encoder.finish() { chunks.append(last) }
        let wholeMs = speech.count / 320 * 20
        for chunk in chunks.dropLast() { #expect((100...150).contains(chunk.audioMs), "a chunk of \(chunk.audioMs) ms") }
        let totalMs = chunks.reduce(0) { $0 + $1.audioMs }
        #expect(abs(totalMs - wholeMs) <= 40, "\(totalMs) ms sent of \(wholeMs) ms")

        let decoded = try Self.decode(chunks.flatMap(\.bytes), contract: contract)
        let reference = try Resampler.resample(speech, from: 16_000, to: contract.sampleRate)
        let rate = contract.sampleRate
        let best = TestAudio.bestCorrelation(
            original: TestAudio.highPassed(reference, rate: rate),
            decoded: TestAudio.highPassed(decoded, rate: rate), lags: 0...(rate / 20))
        #expect(best.value >= 0.9, "\(contract): correlation \(best.value) at lag \(best.lag)")
    }

    @Test func `bytes per second match the contract`() throws {
        let speech = try TestAudio.goForward()
        let expected: [(UplinkContract, ClosedRange<Double>)] = [
            (.pcm16At24k, 47_500...48_500),
            (.muLawAt8k, 7_900...8_100),
            (try UplinkContract(encoding: .opus, sampleRate: 16_000), 2_000...4_200),
        ]
        for (contract, range) in expected {
            let encoder = try UplinkEncoder(contract: contract)
            for start in stride(from: 0, to: speech.count - 319, by: 320) {
                _ = try encoder.append(Array(speech[start..<start + 320]))
            }
            _ = try encoder.finish()
            #expect(range.contains(encoder.measuredBytesPerSecond), "\(contract): \(encoder.measuredBytesPerSecond) B/s")
            #expect(range.contains(Double(contract.payloadBytesPerSecond())), "\(contract) nominal")
        }
    }

    @Test func `a contract we cannot meet is an error naming it`() {
        #expect(throws: UplinkContractError.unsupportedEncoding("g711_alaw")) {
            try UplinkContract(encodingName: "g711_alaw", sampleRate: 8_000)
        }
        #expect(throws: UplinkContractError.unsupportedRate(encoding: "g711_ulaw", sampleRate: 16_000)) {
            try UplinkContract(encodingName: "g711_ulaw", sampleRate: 16_000)
        }
        #expect(throws: UplinkContractError.unsupportedRate(encoding: "opus", sampleRate: 44_100)) {
            try UplinkContract(encodingName: "opus", sampleRate: 44_100)
        }
        #expect("\(UplinkContractError.unsupportedEncoding("g711_alaw"))".contains("\"g711_alaw\""))
        #expect("\(UplinkContractError.unsupportedRate(encoding: "pcm16", sampleRate: 11_025))".contains("pcm16 audio at 11025 Hz"))
    }

    @Test func `the best offered format wins and an offer of nothing usable names the first`() throws {
        let offered = [(encoding: "g711_ulaw", sampleRate: 8_000), ("pcm16", 24_000), ("opus", 48_000)]
        #expect(try UplinkContract.choose(from: offered) == UplinkContract(encoding: .opus, sampleRate: 48_000))
        #expect(try UplinkContract.choose(from: Array(offered.prefix(2))) == .pcm16At24k)
        #expect(throws: UplinkContractError.unsupportedEncoding("speex")) {
            try UplinkContract.choose(from: [("speex", 16_000), ("g711_alaw", 8_000)])
        }
        #expect(throws: UplinkContractError.noFormatOffered) { try UplinkContract.choose(from: []) }
    }

    @Test func `opus packet framing rejects a truncated payload`() {
        let framed = OpusPacketFraming.frame([1, 2, 3]) + OpusPacketFraming.frame([4])
        #expect(OpusPacketFraming.split(framed) == [[1, 2, 3], [4]])
        #expect(OpusPacketFraming.split(Array(framed.dropLast())) == nil)
        #expect(OpusPacketFraming.split([0]) == nil)
    }

    /// The payload as the Gateway reads it, at the contract's rate.
    static func decode(_ bytes: [UInt8], contract: UplinkContract) throws -> [Int16] {
        switch contract.encoding {
        case .pcm16:
            return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        case .g711ulaw:
            return MuLaw.decode(bytes)
        case .opus:
            let decoder = try OpusDecoder(sampleRate: contract.sampleRate)
            let packets = try #require(OpusPacketFraming.split(bytes))
            return try packets.flatMap { try decoder.decode($0) }
        }
    }
}
