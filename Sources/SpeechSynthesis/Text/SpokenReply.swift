/// A reply on its way to the speaker: fed the chat deltas as they arrive, it takes off the voice directive (once
/// the first line is complete), reads a response envelope (`ResponseEnvelope`: only its `response` is spoken) and
/// hands out speakable sentences as each is complete. This is the one path from reply text to synthesiser input,
/// used by the Talk loop and by `say`; the reply's whole text (events, status) is the caller's, untouched.
package struct SpokenReply: Sendable {
    /// The reply's voice directive, once its first line has been seen (nil when it has none).
    package private(set) var directive: VoiceDirective?
    /// False while the first line might still turn out to be a directive.
    package private(set) var directiveSettled = false
    /// What the body (the text after any directive) turned out to be: nil while it might still be an envelope.
    package private(set) var envelope: ResponseEnvelope.Reading?

    private var raw = ""
    private var segmenter: SentenceSegmenter

    package init(softLimit: Int = 72) {
        segmenter = SentenceSegmenter(softLimit: softLimit)
    }

    /// A chat delta (`deltaText`, appended).
    package mutating func append(_ delta: String) -> [String] {
        switch (directiveSettled, envelope) {
        case (true, .text?):
            return segmenter.append(delta)
        case (true, .envelope?):
            return []   // the rest of an envelope is not spoken
        default:
            raw += delta
            return settle(complete: false)
        }
    }

    /// A snapshot of the whole reply (`replace: true`).
    package mutating func replace(with snapshot: String) -> [String] {
        raw = snapshot
        if directiveSettled, case .envelope? = envelope {
            // A first-line envelope was spoken already; a rewrite of it can only change what follows in speech.
            guard case .envelope(let response) = ResponseEnvelope.read(body(of: raw), complete: false) else { return [] }
            return segmenter.replace(with: response ?? "")
        }
        return settle(complete: false)
    }

    /// The reply is final: the rest of it, in sentences.
    package mutating func finish() -> [String] {
        let settled = envelope == nil || !directiveSettled ? settle(complete: true) : []
        return settled + segmenter.finish()
    }

    /// The speakable sentences of a whole reply at once.
    package static func sentences(of text: String, softLimit: Int = 72) -> (VoiceDirective?, [String]) {
        var reply = SpokenReply(softLimit: softLimit)
        let sentences = reply.replace(with: text) + reply.finish()
        return (reply.directive, sentences)
    }

    private mutating func settle(complete: Bool) -> [String] {
        if !directiveSettled {
            switch VoiceDirective.extract(from: raw, complete: complete) {
            case .pending:
                return []
            case .none:
                directiveSettled = true
            case .found(let found, _):
                directive = found
                directiveSettled = true
            }
        }
        let body = body(of: raw)
        switch envelope ?? ResponseEnvelope.read(body, complete: complete) {
        case .pending:
            return []
        case .text:
            envelope = .text
            return segmenter.replace(with: body)
        case .envelope(let response):
            envelope = .envelope(response: response)
            return segmenter.replace(with: response ?? "")
        }
    }

    /// The text after the directive line, when the reply has one.
    private func body(of text: String) -> String {
        guard directive != nil, case .found(_, let offset) = VoiceDirective.extract(from: text, complete: true) else {
            return text
        }
        return String(text.dropFirst(offset))
    }
}
