import Foundation

/// SHA-256 certificate fingerprints as users type them: `sha256:AB:CD:...`, spaced or plain hex.
package enum Fingerprint {
    /// Lowercase 64-digit hex, or nil when the text does not hold exactly 32 bytes of hex.
    /// A leading `sha256:`/`sha-256` is dropped, then every non-hex character (colons, spaces).
    package static func normalize(_ text: String) -> String? {
        var s = text.trimmingCharacters(in: .whitespaces).lowercased()
        for prefix in ["sha256:", "sha-256:", "sha256", "sha-256"] where s.hasPrefix(prefix) {
            s.removeFirst(prefix.count)
            break
        }
        let hex = s.filter { $0.isHexDigit && $0.isASCII }
        // Anything other than separators means this was not a fingerprint at all.
        let others = s.filter { !$0.isHexDigit && ![":", " ", "-", "."].contains($0) }
        guard hex.count == 64, others.isEmpty else { return nil }
        return hex
    }

    /// `ab:cd:...` groups for showing a fingerprint to a person.
    package static func display(_ hex: String) -> String {
        var groups: [String] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            groups.append(String(hex[i..<j]).uppercased())
            i = j
        }
        return groups.joined(separator: ":")
    }
}
