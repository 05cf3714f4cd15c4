import Foundation

/// The string a device signs to prove it holds its key during `connect` (pipe-joined, no trailing pipe).
/// v3 binds the platform and device family too; v2 is the fallback for Gateways that reject v3.
package struct DeviceAuthPayload: Sendable, Equatable {
    package enum Version: String, Sendable { case v2, v3 }

    package var version: Version
    package var deviceId: String
    package var clientId: String
    package var clientMode: String
    package var role: String
    package var scopes: [String]
    package var signedAtMs: Int64
    /// What the Gateway resolves as the signature token: auth.token ?? auth.deviceToken ?? auth.bootstrapToken ?? "".
    package var token: String
    package var nonce: String
    package var platform: String
    package var deviceFamily: String

    /// The text to sign.
    package var text: String {
        var parts = [version.rawValue, deviceId, clientId, clientMode, role, scopes.joined(separator: ","),
                     String(signedAtMs), token, nonce]
        if version == .v3 { parts += [Self.normalize(platform), Self.normalize(deviceFamily)] }
        return parts.joined(separator: "|")
    }

    /// Trimmed, ASCII A-Z lowercased (the Gateway normalizes v3 metadata the same way).
    static func normalize(_ s: String) -> String {
        String(s.trimmingCharacters(in: .whitespaces).unicodeScalars.map { c in
            ("A"..."Z").contains(c) ? Character(Unicode.Scalar(c.value + 32) ?? c) : Character(c)
        })
    }
}
