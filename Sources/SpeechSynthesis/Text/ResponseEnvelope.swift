import Foundation

/// A reply meant for a Talk client may come as a response envelope: a JSON object with a `response` key, of which
/// only `response` is spoken (the other keys, such as `display`, `status` or `actions`, are for a screen). As the
/// OpenClaw apps read it (openclaw/openclaw apps/shared/OpenClawKit/Sources/OpenClawKit/TalkResponseEnvelope.swift,
/// apps/android/…/voice/TalkResponseEnvelopeParser.kt), the object is one of: a fenced block (```` ```json ````
/// or ```` ``` ````) spanning the whole trimmed text, the whole trimmed text, or its first non-empty line; the
/// first of these that is a JSON object with a `response` key wins. `response` is spoken trimmed; an empty,
/// null or non-string `response` speaks nothing, and text after a first-line envelope is not spoken either.
/// Anything else is not an envelope and is spoken as text.
package enum ResponseEnvelope {
    /// What a reply (or the part of one streamed so far) says about an envelope.
    package enum Reading: Sendable, Equatable {
        /// It may still turn out to be an envelope: hold speech until more text (or the end) decides.
        case pending
        /// Not an envelope: speak the text as it is.
        case text
        /// An envelope: speak `response` only (nil: speak nothing).
        case envelope(response: String?)
    }

    /// Text held undecided beyond this is spoken as text: a hostile reply cannot make us hold speech (and
    /// memory) for ever. Envelopes are short: a sentence or two and a few fields.
    package static let maximumHeldCharacters = 64 * 1024

    /// Reads `text` (a whole reply when `complete`, else the part streamed so far). Before the end only what is
    /// certain is decided: plain text at once, a first-line envelope once that line is complete; a reply that
    /// could still be a whole-text or fenced envelope is held to the end.
    package static func read(_ text: String, complete: Bool) -> Reading {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let trimmed = normalized.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = trimmed.first else { return complete ? .text : .pending }
        guard first == "{" || first == "`" else { return .text }
        if complete { return parse(normalized) }
        guard trimmed.count <= maximumHeldCharacters else { return .text }
        let lineEnd = trimmed.firstIndex(of: "\n")
        let firstLine = String(trimmed[..<(lineEnd ?? trimmed.endIndex)]).trimmingCharacters(in: .whitespaces)
        if first == "`" {
            let fence = firstLine.lowercased()
            if lineEnd == nil { return "```json".hasPrefix(fence) ? .pending : .text }
            return fence == "```" || fence == "```json" ? .pending : .text
        }
        // A complete first line that is a JSON object decides: the whole text cannot be another object.
        guard lineEnd != nil, let object = object(firstLine) else { return .pending }
        return object.keys.contains("response") ? .envelope(response: response(object)) : .text
    }

    /// The apps' reading of a whole reply.
    private static func parse(_ normalized: String) -> Reading {
        let trimmed = normalized.trimmingCharacters(in: .whitespacesAndNewlines)
        var candidates: [String] = []
        if let unfenced = unfenced(trimmed) { candidates.append(unfenced) }
        if trimmed.hasPrefix("{"), trimmed.hasSuffix("}") { candidates.append(trimmed) }
        if let line = normalized.split(separator: "\n", omittingEmptySubsequences: false)
            .lazy.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }).first(where: { !$0.isEmpty }),
            line.hasPrefix("{"), line.hasSuffix("}")
        {
            candidates.append(line)
        }
        for candidate in candidates {
            if let object = object(candidate), object.keys.contains("response") { return .envelope(response: response(object)) }
        }
        return .text
    }

    /// The inside of a fenced block spanning the whole text (at least three lines, ```` ``` ```` or ```` ```json ```` first).
    private static func unfenced(_ trimmed: String) -> String? {
        let lines = trimmed.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3,
              let open = lines.first?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(), open == "```" || open == "```json",
              lines.last?.trimmingCharacters(in: .whitespacesAndNewlines) == "```"
        else { return nil }
        return lines.dropFirst().dropLast().joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func object(_ candidate: String) -> [String: Any]? {
        guard candidate.count <= maximumHeldCharacters else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(candidate.utf8))) as? [String: Any]
    }

    private static func response(_ object: [String: Any]) -> String? {
        let spoken = (object["response"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines)
        return spoken?.isEmpty == false ? spoken : nil
    }
}
