/// G.711 µ-law: 16-bit linear PCM to 8-bit companded samples and back, through lookup tables.
///
/// The encoder's table is indexed by the sample's top 14 bits (G.711 works on 14-bit linear samples), so
/// one encode is a shift and a load; the decoder's has one entry per byte. Both follow ITU-T G.711 as Sun's
/// reference g711.c does (bias 0x84, clip, bits inverted on the wire): what the transcription relay reads.
package enum MuLaw {
    /// µ-law byte for each 14-bit linear value (index = (sample >> 2) + 8192).
    private static let encodeTable: [UInt8] = (0..<16_384).map { index in
        encodeSlow(Int16(clamping: (index - 8_192) << 2))
    }
    /// Linear value of each µ-law byte.
    private static let decodeTable: [Int16] = (0..<256).map { decodeSlow(UInt8($0)) }

    package static func encode(_ sample: Int16) -> UInt8 {
        encodeTable[(Int(sample) >> 2) + 8_192]
    }

    package static func encode(_ samples: [Int16]) -> [UInt8] {
        samples.map { encodeTable[(Int($0) >> 2) + 8_192] }
    }

    package static func decode(_ byte: UInt8) -> Int16 { decodeTable[Int(byte)] }

    package static func decode(_ bytes: [UInt8]) -> [Int16] { bytes.map { decodeTable[Int($0)] } }

    /// The reference computation the table is built from (Sun's g711.c `linear2ulaw`, on 14 bits).
    static func encodeSlow(_ sample: Int16) -> UInt8 {
        var value = Int(sample) >> 2
        let mask: Int
        if value < 0 {
            value = -value
            mask = 0x7F
        } else {
            mask = 0xFF
        }
        value = min(value, 8_159) + 0x21
        var segment = 0
        while segment < 8 && value > (0x40 << segment) - 1 { segment += 1 }
        if segment >= 8 { return UInt8(0x7F ^ mask) }
        return UInt8(((segment << 4) | ((value >> (segment + 1)) & 0x0F)) ^ mask)
    }

    static func decodeSlow(_ byte: UInt8) -> Int16 {
        let value = Int(~byte)
        let sign = value & 0x80
        let exponent = (value >> 4) & 0x07
        let mantissa = value & 0x0F
        let magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
        return Int16(sign != 0 ? -magnitude : magnitude)
    }
}
