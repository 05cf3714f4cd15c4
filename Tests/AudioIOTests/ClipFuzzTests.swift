import Foundation
import TalkTestSupport
import Testing

@testable import AudioIO

/// `talk.speak` clips as a hostile Gateway would send them, in every format the client plays: forged headers, huge
/// declared lengths, streams of empty frames, odd rates, and random mutations of valid clips. Each one decodes to at
/// most `AudioClipDecoder.maxSeconds` of audio or fails with a clear error; none crashes the process, and the peak
/// resident size stays under a bound. `make test` runs it in its pass of solo suites (the name ends in FuzzTests).
@Suite(.serialized) struct ClipFuzzTests {
    /// The bound on how far the process's peak resident size may rise over the whole pass (70-130 MiB measured). The
    /// largest clips accepted decode to 600 s: 58 MB at 48 kHz, held a few times over while they are mixed and
    /// resampled; before the limit, the 18 MiB clip of empty frames alone would have decoded to 13 days (110 GB).
    static let peakBoundKiB = 300_000

    struct Clip {
        var bytes: [UInt8]
        var outputFormat: String?
        var mimeType: String?
        var fileExtension: String?
        var label: String
    }

    static func byteMutation(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = input
        switch rng.next() % 5 {
        case 0: return Array(b.prefix(Int(rng.next() % UInt64(max(b.count, 1)))))
        case 1: for _ in 0..<(1 + rng.next() % 8) where !b.isEmpty { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
        case 2: if !b.isEmpty { b.removeSubrange(Int(rng.next() % UInt64(b.count))..<b.count) }
        case 3: b.insert(contentsOf: (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: Int(rng.next() % UInt64(b.count + 1)))
        default: return (0..<Int(rng.next() % 2000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
        return b
    }

    /// Ogg Opus: forged granules (CRC kept valid), forged OpusHead fields, empty-frame streams claiming hours, and
    /// byte mutations of a real stream.
    static func oggCases(_ rng: inout SplitMix64) throws -> [Clip] {
        let writer = try OggOpusWriter(to: .memory, sampleRate: 24_000)
        try writer.write(TestAudio.sineInt16(frequency: 300, rate: 24_000, seconds: 1))
        try writer.finish()
        let valid = writer.bytes
        var out: [Clip] = []
        func add(_ bytes: [UInt8], _ label: String) { out.append(Clip(bytes: bytes, mimeType: "audio/ogg", label: label)) }
        for granule: Int64 in [1 << 50, .max, -1, 0, 1, 1 << 62, 48_000 * 3600 * 24] {
            add(OggPages.forgingLastGranule(valid, granule), "last granule \(granule)")
            var pages = OggPages.parse(valid)
            for i in pages.indices where i >= 2 { pages[i].granule = granule &- Int64(i) }
            add(OggPages.encode(pages), "every granule \(granule)")
        }
        for head in [OggPages.opusHead(channels: 0), OggPages.opusHead(channels: 2), OggPages.opusHead(channels: 255, mapping: 255),
                     OggPages.opusHead(channels: 8, mapping: 1), OggPages.opusHead(preSkip: 65_535), OggPages.opusHead(inputRate: 0),
                     OggPages.opusHead(inputRate: 1), OggPages.opusHead(inputRate: .max), OggPages.opusHead(gain: .max),
                     OggPages.opusHead(gain: .min), Array(OggPages.opusHead().prefix(10)), Array("OpusHead".utf8) + [0xFF, 1]] {
            add(OggPages.stream(head: head, packet: OggPages.emptyFrames120ms, packets: 300, samplesPerPacket: 5760), "head \(head.count) bytes")
        }
        // Empty frames: 300 packets claiming anything; then streams of them past the limit.
        for (packet, samples) in [([0x1B, 0x02] as [UInt8], Int64(5760)), ([0xF8], 960), ([0xFB, 0x30], 5760 * 8), ([0x1B, 0x02], -5760), ([0x1B], 0)] {
            add(OggPages.stream(packet: packet, packets: 300, samplesPerPacket: samples), "empty frames \(packet)")
        }
        // 18 MiB of empty frames, as a Gateway could send: 9.4 million packets, 13 days of audio claimed.
        add(OggPages.stream(packet: OggPages.emptyFrames120ms, packets: 9_400_000, samplesPerPacket: 5760), "18 MiB of empty frames")
        add(OggPages.stream(packet: OggPages.emptyFrames120ms, packets: 8000, samplesPerPacket: 5760), "16 min of empty frames")
        // A page of 255 lacing values of 255 (one packet never ended), and a page with no packets.
        add(OggPages.encode([OggPages.page([OggPages.opusHead()], granule: 0, sequence: 0, headerType: 2),
                             OggPages.page([OggPages.opusTags], granule: 0, sequence: 1),
                             OggPages.Page(headerType: 0, granule: 960, serial: 0x5EC2_5EC2, sequence: 2, lacing: [UInt8](repeating: 255, count: 255),
                                           body: [UInt8](repeating: 0xF8, count: 255 * 255)),
                             OggPages.Page(headerType: 4, granule: 1920, serial: 0x5EC2_5EC2, sequence: 3, lacing: [], body: [])]), "unended packet")
        for i in 0..<600 {
            var mutated = byteMutation(valid, &rng)
            if i % 2 == 0 { mutated = OggPages.encode(OggPages.parse(mutated)) }  // CRC made valid again
            add(mutated, "mutated Ogg \(i)")
        }
        return out
    }

    static func wavCases(_ rng: inout SplitMix64) -> [Clip] {
        var out: [Clip] = []
        let samples = [UInt8](repeating: 0x11, count: 16_000)
        func add(_ bytes: [UInt8], _ label: String) { out.append(Clip(bytes: bytes, mimeType: "audio/wav", label: label)) }
        for rate: UInt32 in [0, 1, 999, 1000, 7999, 11_025, 44_100, 768_000, 768_001, .max] {
            add(ForgedWAV.bytes(rate: rate, data: samples), "rate \(rate)")
        }
        for channels: UInt16 in [0, 2, 3, 32, 33, .max] { add(ForgedWAV.bytes(channels: channels, data: samples), "channels \(channels)") }
        for (tag, bits) in [(1, 0), (1, 8), (1, 24), (3, 32), (3, 64), (0xFFFE, 16), (0x55, 16), (6, 8), (1, .max)] as [(UInt16, UInt16)] {
            add(ForgedWAV.bytes(tag: tag, bits: bits, data: samples), "tag \(tag) bits \(bits)")
        }
        for declared: UInt32 in [0, 1, 3, 15_999, 16_001, .max, .max - 7] { add(ForgedWAV.bytes(declaredData: declared, data: samples), "declared \(declared)") }
        add(ForgedWAV.bytes(blockAlign: 0, data: samples), "block align 0")
        add(ForgedWAV.bytes(blockAlign: .max, data: samples), "block align max")
        // A chunk before `data` claiming 4 GiB, an odd-sized one, and the limit from a 1 kHz rate.
        var chunky = Array(ForgedWAV.bytes(data: samples).prefix(36)) + Array("LIST".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + samples
        add(chunky, "huge chunk")
        chunky = Array(ForgedWAV.bytes(data: samples).prefix(36)) + Array("junk".utf8) + [3, 0, 0, 0, 1, 2, 3, 0] + Array(ForgedWAV.bytes(data: samples).suffix(from: 36))
        add(chunky, "odd chunk")
        add(ForgedWAV.bytes(rate: 1000, data: [UInt8](repeating: 0, count: 1_300_000)), "650 s at 1 kHz")
        add(ForgedWAV.bytes(rate: 1000, data: [UInt8](repeating: 0, count: 1_190_000)), "595 s at 1 kHz")
        let valid = ForgedWAV.bytes(rate: 22_050, data: samples)
        for i in 0..<600 { add(byteMutation(valid, &rng), "mutated WAV \(i)") }
        return out
    }

    static func mp3Cases(_ rng: inout SplitMix64) -> [Clip] {
        var out: [Clip] = []
        func add(_ bytes: [UInt8], _ label: String) { out.append(Clip(bytes: bytes, mimeType: "audio/mpeg", label: label)) }
        func frames(_ header: [UInt8], size: Int, count: Int) -> [UInt8] {
            var frame = [UInt8](repeating: 0, count: size)
            frame.replaceSubrange(0..<4, with: header)
            return Array([[UInt8]](repeating: frame, count: count).joined())
        }
        let silence = frames([0xFF, 0xFB, 0x90, 0x00], size: 417, count: 200)
        add(silence, "silent frames")
        // MPEG 2.5 at 8 kHz, 8 kbit/s: 72-byte frames of 576 samples, the most audio per byte: past the limit.
        add(frames([0xFF, 0xE3, 0x18, 0xC4], size: 72, count: 9_000), "MPEG 2.5 at 8 kHz, 10 min+")
        add(frames([0xFF, 0xFB, 0x00, 0x00], size: 1441, count: 50), "free format")
        add(Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + silence, "ID3 claiming 256 MiB")
        add(Array("ID3".utf8) + [4, 0, 0x10, 0, 0, 0, 0] + silence, "ID3 with a footer flag")
        add([UInt8](repeating: 0xFF, count: 20_000), "all sync bytes")
        for i in 0..<600 { add(byteMutation(silence, &rng), "mutated MP3 \(i)") }
        return out
    }

    static func pcmCases(_ rng: inout SplitMix64) -> [Clip] {
        var out: [Clip] = []
        let bytes = [UInt8](repeating: 0x20, count: 32_001)
        for format in ["pcm", "pcm_", "pcm_0", "pcm_1", "pcm_7999", "pcm_8000", "pcm_192000", "pcm_192001", "pcm_-16000",
                       "pcm_16000abc", "pcm_99999999999999999999", "pcm_16000_extra", "PCM_44100", "pcm_44100"] {
            out.append(Clip(bytes: bytes, outputFormat: format, label: format))
            out.append(Clip(bytes: [0x01], outputFormat: format, label: format + " one byte"))
        }
        out.append(Clip(bytes: [UInt8](repeating: 0, count: 601 * 8000 * 2), outputFormat: "pcm_8000", label: "601 s"))
        // Named one way, made another, or named nothing at all.
        for i in 0..<300 {
            let named: (String?, String?, String?) = [("opus", nil, nil), (nil, "audio/wav", nil), (nil, nil, "mp3"), (nil, nil, nil),
                                                      ("mp3_44100_128", "audio/ogg", ".wav")][i % 5]
            out.append(Clip(bytes: byteMutation(bytes, &rng), outputFormat: named.0, mimeType: named.1, fileExtension: named.2, label: "misnamed \(i)"))
        }
        return out
    }

    @Test func `hostile talk.speak clips of every format decode within the limit or fail clearly`() async throws {
        var rng = SplitMix64(state: 0xA0D1_0C11)
        let clips = try Self.oggCases(&rng) + Self.wavCases(&rng) + Self.mp3Cases(&rng) + Self.pcmCases(&rng)
        let resetPeak = HostileMemory.resetPeak()
        let basePeak = HostileMemory.peakKiB() ?? 0
        let started = ContinuousClock.now
        var decoded = 0
        var refused = 0
        var tooLong = 0
        var longest = 0.0
        for (i, clip) in clips.enumerated() {
            // Every tenth clip is also resampled, as playback does, from whatever rate it claims.
            let outcome = await Result {
                try await AudioClipDecoder.decodeOffPool(clip.bytes, outputFormat: clip.outputFormat, mimeType: clip.mimeType,
                                                         fileExtension: clip.fileExtension, sampleRate: i % 10 == 0 ? 16_000 : nil)
            }
            switch outcome {
            case .success(let pcm):
                decoded += 1
                longest = max(longest, pcm.durationSeconds)
                #expect(pcm.durationSeconds <= Double(AudioClipDecoder.maxSeconds), "\(clip.label): \(pcm.durationSeconds) s")
                #expect(pcm.sampleRate > 0, "\(clip.label)")
            case .failure(let error):
                refused += 1
                if error as? AudioClipError == .tooLong(seconds: AudioClipDecoder.maxSeconds) { tooLong += 1 }
                let text = "\(error)"
                #expect(text.count > 10 && text.count < 400, "\(clip.label): not a clear error: \(text)")
            }
        }
        let peakRise = (HostileMemory.peakKiB() ?? 0) - basePeak
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("clip fuzz: \(clips.count) clips (Ogg Opus, WAV, MP3, raw PCM), 0 crashes, \(decoded) decoded (longest "
              + "\(Int(longest)) s), \(refused) refused (\(tooLong) past the \(AudioClipDecoder.maxSeconds) s limit), "
              + "peak resident rise \(peakRise / 1024) MiB\(resetPeak ? "" : " (peak not reset: since start)"), \(Int(seconds)) s")
        #expect(tooLong >= 5, "the clips past the limit: \(tooLong)")
        #expect(decoded > 100 && refused > 100)
        #expect(peakRise < Self.peakBoundKiB, "peak resident size rose by \(peakRise / 1024) MiB")
    }
}

/// The process's peak resident size (VmHWM), which can be reset to the current size (Linux 4.0+).
enum HostileMemory {
    static func peakKiB() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }
}
