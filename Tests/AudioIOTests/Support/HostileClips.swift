import Foundation
import TalkTestSupport

@testable import AudioIO

/// Ogg pages taken apart and put back together (RFC 3533), so tests can forge what a hostile Gateway would:
/// granule positions, header fields, streams of empty Opus frames, each page with a valid CRC.
enum OggPages {
    struct Page: Equatable {
        var headerType: UInt8
        var granule: Int64
        var serial: UInt32
        var sequence: UInt32
        /// The lacing values, as written.
        var lacing: [UInt8]
        var body: [UInt8]
    }

    /// The pages of a stream; stops at the first byte that does not start a whole page.
    static func parse(_ bytes: [UInt8]) -> [Page] {
        var pages: [Page] = []
        var at = 0
        while at + 27 <= bytes.count, bytes[at..<at + 4].elementsEqual("OggS".utf8) {
            let count = Int(bytes[at + 26])
            guard at + 27 + count <= bytes.count else { break }
            let lacing = Array(bytes[at + 27..<at + 27 + count])
            let size = lacing.reduce(0) { $0 + Int($1) }
            let start = at + 27 + count
            guard start + size <= bytes.count else { break }
            pages.append(Page(headerType: bytes[at + 5], granule: Int64(bitPattern: le(bytes, at + 6, 8)),
                              serial: UInt32(le(bytes, at + 14, 4)), sequence: UInt32(le(bytes, at + 18, 4)),
                              lacing: lacing, body: Array(bytes[start..<start + size])))
            at = start + size
        }
        return pages
    }

    static func encode(_ page: Page) -> [UInt8] {
        var out = Array("OggS".utf8) + [0, page.headerType]
        out += leBytes(UInt64(bitPattern: page.granule), 8) + leBytes(UInt64(page.serial), 4) + leBytes(UInt64(page.sequence), 4)
        out += [0, 0, 0, 0, UInt8(page.lacing.count)] + page.lacing + page.body
        let crc = crc32(out)
        out.replaceSubrange(22..<26, with: leBytes(UInt64(crc), 4))
        return out
    }

    static func encode(_ pages: [Page]) -> [UInt8] { pages.flatMap(encode) }

    /// One page holding whole packets (each under 255 × 255 bytes), the last one ending on the page.
    static func page(_ packets: [[UInt8]], granule: Int64, sequence: UInt32, headerType: UInt8 = 0,
                     serial: UInt32 = 0x5EC2_5EC2) -> Page {
        var lacing: [UInt8] = []
        for packet in packets {
            lacing += [UInt8](repeating: 255, count: packet.count / 255) + [UInt8(packet.count % 255)]
        }
        return Page(headerType: headerType, granule: granule, serial: serial, sequence: sequence, lacing: lacing,
                    body: packets.flatMap { $0 })
    }

    /// `OpusHead` (RFC 7845 §5.1) with the fields given.
    static func opusHead(channels: UInt8 = 1, preSkip: UInt16 = 312, inputRate: UInt32 = 48_000, gain: Int16 = 0,
                         mapping: UInt8 = 0) -> [UInt8] {
        var head = Array("OpusHead".utf8) + [1, channels] + leBytes(UInt64(preSkip), 2) + leBytes(UInt64(inputRate), 4)
        head += leBytes(UInt64(UInt16(bitPattern: gain)), 2) + [mapping]
        if mapping != 0 {
            // Stream count, coupled count, one mapping byte per channel.
            head += [channels, 0] + (0..<channels).map { $0 }
        }
        return head
    }

    static let opusTags: [UInt8] = Array("OpusTags".utf8) + leBytes(4, 4) + Array("test".utf8) + leBytes(0, 4)

    /// A whole Ogg Opus stream of `packets` copies of `packet`, each `samplesPerPacket` at 48 kHz, 255 to a page:
    /// a few bytes per packet that each decode to up to 120 ms (what "an 18 MiB clip of empty frames" is made of).
    static func stream(head: [UInt8] = opusHead(), packet: [UInt8], packets: Int, samplesPerPacket: Int64) -> [UInt8] {
        var pages = [page([head], granule: 0, sequence: 0, headerType: 0x02), page([opusTags], granule: 0, sequence: 1)]
        var written: Int64 = 0
        var left = packets
        while left > 0 {
            let n = min(255, left)
            left -= n
            written += Int64(n) * samplesPerPacket
            pages.append(page(Array(repeating: packet, count: n), granule: written, sequence: UInt32(pages.count),
                              headerType: left == 0 ? 0x04 : 0))
        }
        return encode(pages)
    }

    /// An Opus packet of two empty 60 ms SILK frames (TOC config 3, code 3, CBR, M = 2): 2 bytes, 120 ms of audio.
    static let emptyFrames120ms: [UInt8] = [0x1B, 0x02]

    /// The stream with its last page's granule position set to `granule`, CRC recomputed.
    static func forgingLastGranule(_ bytes: [UInt8], _ granule: Int64) -> [UInt8] {
        var pages = parse(bytes)
        guard !pages.isEmpty else { return bytes }
        pages[pages.count - 1].granule = granule
        return encode(pages)
    }

    private static func le(_ b: [UInt8], _ at: Int, _ n: Int) -> UInt64 {
        (0..<n).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
    }

    static func leBytes(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes {
            crc ^= UInt32(b) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

/// WAV headers with every field chosen by the caller, valid or not.
enum ForgedWAV {
    static func bytes(tag: UInt16 = 1, channels: UInt16 = 1, rate: UInt32 = 16_000, bits: UInt16 = 16,
                      blockAlign: UInt16? = nil, declaredData: UInt32? = nil, data: [UInt8]) -> [UInt8] {
        let align = blockAlign ?? channels &* (bits / 8)
        var out = Array("RIFF".utf8) + OggPages.leBytes(UInt64(36 + data.count), 4) + Array("WAVEfmt ".utf8)
        out += OggPages.leBytes(16, 4) + OggPages.leBytes(UInt64(tag), 2) + OggPages.leBytes(UInt64(channels), 2)
        out += OggPages.leBytes(UInt64(rate), 4) + OggPages.leBytes(UInt64(rate) &* UInt64(align), 4)
        out += OggPages.leBytes(UInt64(align), 2) + OggPages.leBytes(UInt64(bits), 2)
        out += Array("data".utf8) + OggPages.leBytes(UInt64(declaredData ?? UInt32(data.count)), 4) + data
        return out
    }
}
