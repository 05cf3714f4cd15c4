import CPocketSphinx
import Foundation

/// Owns one `ps_decoder_t` and the calls made on it. Not thread-safe, like the C handle: exactly one actor
/// (`PocketSphinxRecognizer`) holds it. Frames are 10 ms (PocketSphinx's default frame rate of 100/s).
final class PocketSphinxDecoder {
    private let decoder: OpaquePointer
    private let logMath: OpaquePointer?
    /// The search the decoder was built with (the mode's own: the language model, a grammar file, wake phrases).
    let defaultSearch: String

    static let millisecondsPerFrame = 10

    /// Builds the decoder from argv-style arguments, surfacing PocketSphinx's own error lines on failure.
    init(arguments: [String], mode: RecognitionMode, models: ModelPaths) throws {
        let (made, messages) = PocketSphinxLog.collectingMessages { () -> OpaquePointer? in
            Self.makeDecoder(arguments: arguments)
        }
        guard let made else { throw Self.initError(mode: mode, models: models, messages: messages) }
        decoder = made
        logMath = ps_get_logmath(made)
        defaultSearch = ps_get_search(made).map { String(cString: $0) } ?? "_default"
    }

    deinit {
        ps_free(decoder)
    }

    private static func makeDecoder(arguments: [String]) -> OpaquePointer? {
        // cmd_ln_parse_r skips argv[0] like a program name.
        let argv = (["openclaw-talk"] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pointers: [UnsafeMutablePointer<CChar>?] = argv
        guard
            let config = pointers.withUnsafeMutableBufferPointer({ buffer in
                ocl_ps_config_from_argv(Int32(buffer.count), buffer.baseAddress)
            })
        else { return nil }
        // ps_init takes its own reference to the configuration.
        defer { cmd_ln_free_r(config) }
        return ps_init(config)
    }

    private static func initError(mode: RecognitionMode, models: ModelPaths, messages: [String])
        -> SpeechRecognitionError
    {
        let errors = messages.filter { $0.hasPrefix("ERROR") || $0.hasPrefix("FATAL") }
        let details = (errors.isEmpty ? messages : errors).map(Self.stripSourceLocation)
        // A failure naming a model file is the model's fault, whatever the mode.
        for path in [models.acousticModel, models.dictionary, models.languageModel].compactMap({ $0 })
        where details.contains(where: { $0.contains(path) }) {
            return .modelBroken(path: path, reason: details.joined(separator: "; "))
        }
        switch mode {
        case .grammar(let path): return .grammarInvalid(path: path, details: details)
        case .keyphrase(let phrase, _): return .keyphraseInvalid(phrase: phrase, details: details)
        case .keywordList(let path): return .keyphraseInvalid(phrase: "keyword list \(path)", details: details)
        case .dictation: return .decoderInitFailed(details: details)
        }
    }

    /// `ERROR: "fsg_search.c", line 123: text` -> `text`: the C file and line mean nothing to a user.
    static func stripSourceLocation(_ line: String) -> String {
        guard let range = line.range(of: #"^[A-Z]+: "[^"]*", line \d+: "#, options: .regularExpression) else {
            return line
        }
        return String(line[range.upperBound...])
    }

    // MARK: - Searches

    /// The search decoding the next utterance.
    var currentSearch: String { ps_get_search(decoder).map { String(cString: $0) } ?? defaultSearch }

    /// Adds (or replaces) search `name` with a JSGF grammar given as text. It must not be the current search:
    /// PocketSphinx frees a replaced search while the decoder still points at it.
    func addGrammar(name: String, jsgf: String) throws {
        precondition(name != currentSearch, "replacing the search in use")
        let (code, messages) = PocketSphinxLog.collectingMessages { ps_set_jsgf_string(decoder, name, jsgf) }
        if code < 0 {
            let errors = messages.filter { $0.hasPrefix("ERROR") || $0.hasPrefix("FATAL") }
            throw SpeechRecognitionError.grammarInvalid(path: "(answers grammar)", details: errors.map(Self.stripSourceLocation))
        }
    }

    /// Adds search `name`, a free loop of the acoustic model's phones weighted by the phone n-gram model at `path`
    /// (`OutOfGrammarCheck`'s reference).
    func addPhoneLoop(name: String, languageModel path: String) throws {
        let (code, messages) = PocketSphinxLog.collectingMessages { ps_set_allphone_file(decoder, name, path) }
        if code < 0 {
            let errors = messages.filter { $0.hasPrefix("ERROR") || $0.hasPrefix("FATAL") }
            throw SpeechRecognitionError.modelBroken(path: path, reason: errors.map(Self.stripSourceLocation).joined(separator: "; "))
        }
    }

    /// Makes `name` the search of the next utterance; only between utterances.
    func useSearch(_ name: String) throws {
        let code = ps_set_search(decoder, name)
        if code < 0 { throw SpeechRecognitionError.decodeFailed(operation: "ps_set_search", code: Int(code)) }
    }

    /// Drops a search that is not in use.
    func removeSearch(_ name: String) {
        guard name != currentSearch, name != defaultSearch else { return }
        _ = ps_unset_search(decoder, name)
    }

    /// The words the decoder's dictionary has no pronunciation for.
    func wordsMissingFromDictionary(_ words: [String]) -> [String] {
        words.filter { word in
            guard let pronunciation = ps_lookup_word(decoder, word) else { return true }
            free(pronunciation)
            return false
        }
    }

    /// Starts an utterance as a new stream, so its word times count from its first sample (PocketSphinx
    /// otherwise counts frames from the first utterance). The acoustic model's cepstral mean is kept.
    func startUtterance() throws {
        _ = ps_start_stream(decoder)
        let code = ps_start_utt(decoder)
        if code < 0 { throw SpeechRecognitionError.decodeFailed(operation: "ps_start_utt", code: Int(code)) }
    }

    /// Decodes the samples now, so little is left to do when the utterance ends.
    func process(_ samples: [Int16]) throws {
        guard !samples.isEmpty else { return }
        let code = samples.withUnsafeBufferPointer { buffer in
            ps_process_raw(decoder, buffer.baseAddress, buffer.count, 0, 0)
        }
        if code < 0 { throw SpeechRecognitionError.decodeFailed(operation: "ps_process_raw", code: Int(code)) }
    }

    var inSpeech: Bool { ps_get_in_speech(decoder) != 0 }

    func endUtterance() throws {
        let code = ps_end_utt(decoder)
        if code < 0 { throw SpeechRecognitionError.decodeFailed(operation: "ps_end_utt", code: Int(code)) }
    }

    /// The best hypothesis text so far (during an utterance) or the final one (after it ended).
    func hypothesisText() -> String {
        var score: Int32 = 0
        guard let text = ps_get_hyp(decoder, &score) else { return "" }
        return String(cString: text)
    }

    /// Posterior probability of the final hypothesis, when the search computed one.
    func hypothesisProbability() -> Double? {
        probability(ps_get_prob(decoder))
    }

    /// Words of the current best path with frame-accurate times, fillers and silences removed.
    func segments() -> [RecognizedWord] {
        var words: [RecognizedWord] = []
        var seg = ps_seg_iter(decoder)
        while let current = seg {
            if let cWord = ps_seg_word(current) {
                let word = String(cString: cWord)
                if let base = Self.spokenWord(word) {
                    var startFrame: Int32 = 0
                    var endFrame: Int32 = 0
                    ps_seg_frames(current, &startFrame, &endFrame)
                    var acoustic: Int32 = 0
                    var language: Int32 = 0
                    var backoff: Int32 = 0
                    let posterior = ps_seg_prob(current, &acoustic, &language, &backoff)
                    words.append(
                        RecognizedWord(
                            word: base,
                            startMs: Int(startFrame) * Self.millisecondsPerFrame,
                            endMs: (Int(endFrame) + 1) * Self.millisecondsPerFrame,
                            confidence: probability(posterior)
                        )
                    )
                }
            }
            seg = ps_seg_next(current)
        }
        return words
    }

    /// Every segment of the best path (silences and fillers too) with its frames and acoustic score.
    func scoredSegments() -> [OutOfGrammarCheck.Segment] {
        var segments: [OutOfGrammarCheck.Segment] = []
        var seg = ps_seg_iter(decoder)
        while let current = seg {
            var startFrame: Int32 = 0, endFrame: Int32 = 0
            ps_seg_frames(current, &startFrame, &endFrame)
            var acoustic: Int32 = 0, language: Int32 = 0, backoff: Int32 = 0
            _ = ps_seg_prob(current, &acoustic, &language, &backoff)
            let label = ps_seg_word(current).map { String(cString: $0) } ?? ""
            segments.append(OutOfGrammarCheck.Segment(label, Int(startFrame), Int(endFrame), Int(acoustic)))
            seg = ps_seg_next(current)
        }
        return segments
    }

    /// How many phones the dictionary's pronunciation of `word` (a segment label, `read(2)` included) has; nil when
    /// the dictionary lacks it.
    func pronunciationPhones(_ word: String) -> Int? {
        guard let phones = ps_lookup_word(decoder, word) else { return nil }
        defer { free(phones) }
        return String(cString: phones).split(separator: " ").count
    }

    /// The dictionary word for a segment label, or nil for silences and fillers (`<s>`, `<sil>`, `[NOISE]`,
    /// `++BREATH++`). Alternate pronunciations (`read(2)`) map to their base word.
    static func spokenWord(_ label: String) -> String? {
        if label.hasPrefix("<") || label.hasPrefix("[") || label.hasPrefix("++") || label.isEmpty { return nil }
        if let paren = label.firstIndex(of: "("), label.hasSuffix(")") { return String(label[..<paren]) }
        return label
    }

    private func probability(_ logValue: Int32) -> Double? {
        guard let logMath else { return nil }
        let value = logmath_exp(logMath, logValue)
        return value.isFinite ? min(1, max(0, value)) : nil
    }
}
