import COpenSSL

/// SHA-1, SHA-256 and random bytes from OpenSSL's EVP API: the handshake needs SHA-1, pinning SHA-256.
package enum Digest {
    /// SHA-1 of `bytes` (only for the Sec-WebSocket-Accept computation RFC 6455 prescribes).
    package static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1()) }

    /// SHA-256 of `bytes`.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256()) }

    /// Lowercase hex, the form fingerprints are compared and shown in.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `count` bytes from OpenSSL's CSPRNG, falling back to the system generator if it has no entropy.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        if RAND_bytes(&out, Int32(count)) != 1 {
            var generator = SystemRandomNumberGenerator()
            out = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }
        return out
    }

    private static func digest(_ bytes: [UInt8], _ type: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, type, nil)
        }
        // EVP_Digest only fails on allocation failure; an empty digest then fails every comparison.
        return ok == 1 ? Array(out.prefix(Int(length))) : []
    }
}
