/// Text the Gateway controls (error codes and messages, close reasons, the status line of a refused
/// upgrade, pairing request ids) made safe to print: a hostile Gateway must not move the cursor,
/// retitle the terminal, hide text with bidirectional overrides or flood the screen.
package enum GatewayText {
    /// The longest Gateway string shown, in characters, before it is cut with "…".
    package static let defaultLimit = 200

    /// `text` with control characters (C0, DEL, C1, so every escape sequence loses its ESC or CSI),
    /// bidirectional controls and other invisible format characters written as `\u{XX}`, and cut to
    /// `limit` characters.
    package static func neutralized(_ text: String, limit: Int = defaultLimit) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else {
                out += "…"
                break
            }
            if isUnsafe(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out
    }

    /// Whether `id` looks like a pairing request id (a UUID or a similar token: letters, digits, `-`, `_`,
    /// `.`, at most 128 characters, starting with a letter or digit), so it may be shown inside a command
    /// the user pastes into a shell (`openclaw devices approve <id>`).
    package static func isRequestId(_ id: String) -> Bool {
        let scalars = Array(id.unicodeScalars)
        guard (1...128).contains(scalars.count), let first = scalars.first, isAlphanumeric(first) else { return false }
        return scalars.allSatisfy { isAlphanumeric($0) || $0 == "-" || $0 == "_" || $0 == "." }
    }

    private static func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s)
    }

    private static func isUnsafe(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0 (ESC, BEL, CR, LF, TAB), DEL, C1 (CSI, OSC)
        case 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: true  // zero-width, line/bidi controls
        default: s.properties.generalCategory == .format || s.properties.generalCategory == .unassigned
        }
    }
}
