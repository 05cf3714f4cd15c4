/// Text made safe for one log line, whoever chose it: a Gateway's error message, an agent's reply, a voice name
/// from a directive. Written out instead of passed through: C0 controls (newline, carriage return, tab, ESC, BEL),
/// DEL, C1 controls (CSI, OSC), line and paragraph separators and invisible format characters (bidirectional
/// overrides, zero-width characters). So no text can end the line and start a journal record of its own
/// (`\n<0>`, an emergency under systemd, forwarded to every terminal), move a terminal's cursor or retitle it, or
/// hide what follows it.
package enum LogText {
    /// `text` with those characters written as `\n`, `\r`, `\t` or `\u{XX}`, cut with "…" after `limit` UTF-8 bytes.
    package static func neutralized(_ text: String, limit: Int) -> String {
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            let piece: String
            switch scalar {
            case "\n": piece = "\\n"
            case "\r": piece = "\\r"
            case "\t": piece = "\\t"
            default: piece = isUnsafe(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            }
            bytes += piece.utf8.count
            guard bytes <= limit else {
                out += "…"
                break
            }
            out += piece
        }
        return out
    }

    /// Whether `text` needs nothing written out and is within `limit` (the common case, kept cheap).
    static func isClean(_ text: String, limit: Int) -> Bool {
        text.utf8.count <= limit && !text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\t" || isUnsafe($0) })
    }

    private static func isUnsafe(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        default: s.value >= 0x80 && s.properties.generalCategory == .format
        }
    }
}
