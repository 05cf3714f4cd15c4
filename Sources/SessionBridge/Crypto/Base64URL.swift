import Foundation

/// Base64url without padding (RFC 4648 §5), the encoding of device keys, signatures and setup codes.
package enum Base64URL {
    /// Encodes bytes as base64url with the `=` padding removed.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url (or standard base64), with or without padding; nil when the text is not base64.
    package static func decode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.hasSuffix("=") { s.removeLast() }
        guard s.count % 4 != 1 else { return nil }
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }
}
