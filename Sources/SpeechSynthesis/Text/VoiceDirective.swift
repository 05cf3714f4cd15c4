import Foundation

/// The optional voice directive an assistant may put on the first line of a reply (gateway-protocol.md §4.5):
/// a one-line JSON object such as `{"voice":"en-gb","rate":190,"once":true}`. It is never spoken.
/// Without `once` the voice and model become the session's new default; with it they are for this reply only.
package struct VoiceDirective: Sendable, Equatable {
    package var voice: String?
    package var model: String?
    /// ElevenLabs-style speed factor (0.5...2).
    package var speed: Double?
    /// Words per minute.
    package var rateWPM: Int?
    package var stability: Double?
    package var similarity: Double?
    package var style: Double?
    package var speakerBoost: Bool?
    package var seed: Int?
    package var normalize: String?
    package var language: String?
    package var outputFormat: String?
    package var latencyTier: Int?
    /// True: this reply only.
    package var once: Bool

    package init(
        voice: String? = nil, model: String? = nil, speed: Double? = nil, rateWPM: Int? = nil,
        stability: Double? = nil, similarity: Double? = nil, style: Double? = nil, speakerBoost: Bool? = nil,
        seed: Int? = nil, normalize: String? = nil, language: String? = nil, outputFormat: String? = nil,
        latencyTier: Int? = nil, once: Bool = false
    ) {
        self.voice = voice
        self.model = model
        self.speed = speed
        self.rateWPM = rateWPM
        self.stability = stability
        self.similarity = similarity
        self.style = style
        self.speakerBoost = speakerBoost
        self.seed = seed
        self.normalize = normalize
        self.language = language
        self.outputFormat = outputFormat
        self.latencyTier = latencyTier
        self.once = once
    }

    /// Settings for the local voice with this directive applied: its voice, and its rate (or speed × 175 WPM,
    /// the factor `talk.speak` uses between the two).
    package func applied(to base: VoiceSettings) -> VoiceSettings {
        var settings = base
        if let voice, voice != base.voice {
            settings.configuredVoice = base.configuredVoice ?? base.voice
            settings.voice = voice
        }
        if let rateWPM {
            settings.rateWPM = rateWPM
        } else if let speed, speed.isFinite, speed > 0 {
            settings.rateWPM = Int((speed * 175).rounded())
        }
        return settings
    }
}

extension VoiceDirective {
    /// What the start of a reply says about a directive.
    package enum Extraction: Sendable, Equatable {
        /// The first non-empty line may still become a directive: wait for more text.
        case pending
        /// No directive: the whole text is the body.
        case none
        /// A directive; the body starts after its line (and one blank line after it).
        case found(VoiceDirective, bodyOffset: Int)
    }

    /// A first line longer than this is text, whatever it looks like: a hostile reply cannot make us hold speech.
    static let maximumLineLength = 4096

    /// Looks for a directive at the start of `text` (a whole reply, or the part of one streamed so far).
    /// Like the OpenClaw apps, it is only parsed once the first non-empty line is complete (ended by a newline,
    /// or by the end of a complete reply) and reads `{...}`. A line that is not a JSON object, or an object
    /// with no known key, is not a directive: it is spoken as text. Unknown keys and values of the wrong type
    /// are ignored one by one. `bodyOffset` counts `Character`s.
    package static func extract(from text: String, complete: Bool) -> Extraction {
        let characters = Array(text)
        var lineStart = 0
        while lineStart < characters.count, characters[lineStart].isWhitespace { lineStart += 1 }
        guard lineStart < characters.count else { return complete ? .none : .pending }
        guard characters[lineStart] == "{" else { return .none }
        guard let newline = characters[lineStart...].firstIndex(where: \.isNewline) else {
            if characters.count - lineStart > maximumLineLength { return .none }
            return complete ? parse(String(characters[lineStart...]), bodyOffset: characters.count) : .pending
        }
        guard newline - lineStart <= maximumLineLength else { return .none }
        var bodyOffset = newline + 1
        // One blank line after the directive goes with it, as in the apps.
        var probe = bodyOffset
        while probe < characters.count, characters[probe].isWhitespace, !characters[probe].isNewline { probe += 1 }
        if probe < characters.count, characters[probe].isNewline {
            bodyOffset = probe + 1
        } else if probe == characters.count, !complete {
            return .pending
        }
        return parse(String(characters[lineStart..<newline]), bodyOffset: bodyOffset)
    }

    private static func parse(_ line: String, bodyOffset: Int) -> Extraction {
        let head = line.trimmingCharacters(in: .whitespaces)
        guard head.hasSuffix("}"),
            let object = try? JSONDecoder().decode([String: DirectiveValue].self, from: Data(head.utf8))
        else { return .none }
        let keys = Dictionary(object.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        func string(_ names: String...) -> String? {
            names.lazy.compactMap { keys[$0]?.string }.first
        }
        func number(_ names: String...) -> Double? {
            names.lazy.compactMap { keys[$0]?.number }.first
        }
        func integer(_ names: String...) -> Int? {
            names.lazy.compactMap { keys[$0]?.number }.first.flatMap { $0.isFinite && abs($0) < 1e9 ? Int($0) : nil }
        }
        func bool(_ names: String...) -> Bool? {
            names.lazy.compactMap { keys[$0]?.bool }.first
        }
        let directive = VoiceDirective(
            voice: string("voice", "voice_id", "voiceid"), model: string("model", "model_id", "modelid"),
            speed: number("speed"), rateWPM: integer("rate", "wpm"), stability: number("stability"),
            similarity: number("similarity"), style: number("style"),
            speakerBoost: bool("speakerboost", "speaker_boost"), seed: integer("seed"),
            normalize: string("normalize"), language: string("lang", "language"),
            outputFormat: string("output_format", "outputformat"),
            latencyTier: integer("latency_tier", "latencytier"), once: bool("once") ?? false)
        let once = bool("once")
        guard directive != VoiceDirective() || once != nil else { return .none }
        return .found(directive, bodyOffset: bodyOffset)
    }
}

/// One JSON value of a directive: the types a key may have, anything else kept as `other` (and ignored).
private enum DirectiveValue: Decodable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .other
        }
    }

    var string: String? {
        guard case .string(let s) = self else { return nil }
        let trimmed = s.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    var number: Double? {
        switch self {
        case .number(let n): return n.isFinite ? n : nil
        case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: return nil
        }
    }

    var bool: Bool? {
        guard case .bool(let b) = self else { return nil }
        return b
    }
}
