import Foundation

/// The form certificate pins are compared in: 64 lowercase hex digits of SHA-256 over the leaf's DER.
package enum CertificateFingerprint {
    /// Normalises user input as the iOS app does: a leading `sha256:` or `sha-256` is stripped and every
    /// non-hex character dropped (so `AB:CD:...` works). Throws unless 64 hex digits remain.
    package static func normalize(_ text: String) throws(TransportError) -> String {
        var rest = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
        for prefix in ["sha256:", "sha-256:", "sha-256", "sha256"] where rest.hasPrefix(prefix) {
            rest = rest.dropFirst(prefix.count)
            break
        }
        let hex = String(rest.filter { $0.isHexDigit })
        guard hex.count == 64 else { throw .invalidPin(text) }
        return hex
    }
}
