import COpenSSL

/// Ed25519 signing and SHA-256 through OpenSSL's EVP interface (there is no CryptoKit on Linux).
package enum Ed25519 {
    /// A 32-byte private seed and the 32-byte public key that belongs to it.
    package struct KeyPair: Sendable {
        package let seed: [UInt8]
        package let publicKey: [UInt8]
    }

    /// Makes a fresh key pair from OpenSSL's random generator.
    package static func generate() throws(CryptoError) -> KeyPair {
        var seed = [UInt8](repeating: 0, count: 32)
        guard RAND_bytes(&seed, 32) == 1 else { throw .openSSL("RAND_bytes") }
        return try keyPair(seed: seed)
    }

    /// Derives the public key of a 32-byte seed.
    package static func keyPair(seed: [UInt8]) throws(CryptoError) -> KeyPair {
        guard seed.count == 32 else { throw .badKeyLength(seed.count) }
        let key = try privateKey(seed)
        defer { EVP_PKEY_free(key) }
        var pub = [UInt8](repeating: 0, count: 32)
        var len = 32
        guard EVP_PKEY_get_raw_public_key(key, &pub, &len) == 1, len == 32 else {
            throw .openSSL("EVP_PKEY_get_raw_public_key")
        }
        return KeyPair(seed: seed, publicKey: pub)
    }

    /// Signs `message` with the private seed: a 64-byte signature.
    package static func sign(_ message: [UInt8], seed: [UInt8]) throws(CryptoError) -> [UInt8] {
        let key = try privateKey(seed)
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, nil, nil, key) == 1 else { throw .openSSL("EVP_DigestSignInit") }
        var sig = [UInt8](repeating: 0, count: 64)
        var sigLen = 64
        let ok = message.withUnsafeBufferPointer { EVP_DigestSign(ctx, &sig, &sigLen, $0.baseAddress, $0.count) }
        guard ok == 1, sigLen == 64 else { throw .openSSL("EVP_DigestSign") }
        return sig
    }

    /// True when `signature` is a valid signature of `message` by `publicKey`.
    package static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64,
              let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32)
        else { return false }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, key) == 1 else { return false }
        return message.withUnsafeBufferPointer {
            EVP_DigestVerify(ctx, signature, 64, $0.baseAddress, $0.count) == 1
        }
    }

    private static func privateKey(_ seed: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard seed.count == 32 else { throw .badKeyLength(seed.count) }
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, 32) else {
            throw .openSSL("EVP_PKEY_new_raw_private_key")
        }
        return key
    }
}

/// A failure inside the crypto layer; each names the OpenSSL call that failed.
package enum CryptoError: Error, Equatable, CustomStringConvertible {
    case openSSL(String)
    case badKeyLength(Int)

    package var description: String {
        switch self {
        case .openSSL(let call): "OpenSSL call \(call) failed; is libssl3 (OpenSSL 3) installed?"
        case .badKeyLength(let n): "An Ed25519 key must be 32 bytes, got \(n); the identity file is damaged."
        }
    }
}
