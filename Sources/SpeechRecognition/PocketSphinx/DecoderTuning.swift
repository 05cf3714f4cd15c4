/// PocketSphinx search settings that trade accuracy against speed; nil leaves the library's default.
/// `recommended` holds the values that gave the lowest word error rate on the project's real-speech dev set
/// (see models/README.md for the measurements).
package struct DecoderTuning: Sendable, Equatable {
    /// Main beam width (`-beam`); smaller keeps more hypotheses alive.
    package var beam: Double?
    /// Word-exit beam (`-wbeam`).
    package var wordBeam: Double?
    /// Language model weight (`-lw`).
    package var languageWeight: Double?
    /// Word insertion penalty (`-wip`).
    package var wordInsertionPenalty: Double?
    /// Phone insertion penalty (`-pip`).
    package var phoneInsertionPenalty: Double?
    /// Whether to run the flat-lexicon second pass (`-fwdflat`).
    package var flatLexiconPass: Bool?
    /// Whether to rescore the word lattice for the final hypothesis (`-bestpath`).
    package var bestPath: Bool?
    /// How far above the noise floor a frame must be to count as speech (`-vad_threshold`, log ratio). Frames
    /// below it are dropped before the search; the dev set's WER rose sharply from 3.5 upwards.
    package var voiceThreshold: Double?
    /// Initial cepstral mean (`-cmninit`), a comma-separated vector; applied after the model's `feat.params`.
    package var cepstralMeanInit: String?
    /// Further PocketSphinx options as name/value pairs (`["-maxhmmpf", "10000"]`), passed through unchecked.
    package var additionalArguments: [String]

    package init(
        beam: Double? = nil,
        wordBeam: Double? = nil,
        languageWeight: Double? = nil,
        wordInsertionPenalty: Double? = nil,
        phoneInsertionPenalty: Double? = nil,
        flatLexiconPass: Bool? = nil,
        bestPath: Bool? = nil,
        voiceThreshold: Double? = nil,
        cepstralMeanInit: String? = nil,
        additionalArguments: [String] = []
    ) {
        self.beam = beam
        self.wordBeam = wordBeam
        self.languageWeight = languageWeight
        self.wordInsertionPenalty = wordInsertionPenalty
        self.phoneInsertionPenalty = phoneInsertionPenalty
        self.flatLexiconPass = flatLexiconPass
        self.bestPath = bestPath
        self.voiceThreshold = voiceThreshold
        self.cepstralMeanInit = cepstralMeanInit
        self.additionalArguments = additionalArguments
    }

    /// PocketSphinx's own defaults, as `pocketsphinx_continuous` uses them.
    package static let libraryDefaults = DecoderTuning()

    /// The best settings measured for a mode: on the real-speech dev set for dictation, on the digit and
    /// command clips for grammars (a lower word insertion penalty stops grammars with repeats such as
    /// `<digit>+` from inserting words).
    package static func recommended(for mode: RecognitionMode) -> DecoderTuning {
        switch mode {
        // No flat-lexicon pass and a slightly stricter voice detector: dev-set WER 41.4 % against 42.6 % with
        // the library defaults (a few words of 324, partly noise), and faster. At most 10 word exits a frame
        // keeps the lattice small, so the final best-path search of a 25 s utterance takes under 50 ms
        // instead of up to 2 s, for about one more word wrong in 100.
        case .dictation:
            return DecoderTuning(
                flatLexiconPass: false,
                voiceThreshold: 2.5,
                additionalArguments: ["-maxwpf", "10"]
            )
        case .grammar: return DecoderTuning(wordInsertionPenalty: 1e-3)
        case .keyphrase, .keywordList: return DecoderTuning()
        }
    }

    /// The settings as command-line style pairs, in a fixed order.
    var arguments: [(String, String)] {
        var pairs: [(String, String)] = []
        func add(_ name: String, _ value: Double?) {
            if let value { pairs.append((name, String(value))) }
        }
        add("-beam", beam)
        add("-wbeam", wordBeam)
        add("-lw", languageWeight)
        add("-wip", wordInsertionPenalty)
        add("-pip", phoneInsertionPenalty)
        add("-vad_threshold", voiceThreshold)
        if let flatLexiconPass { pairs.append(("-fwdflat", flatLexiconPass ? "yes" : "no")) }
        if let bestPath { pairs.append(("-bestpath", bestPath ? "yes" : "no")) }
        if let cepstralMeanInit { pairs.append(("-cmninit", cepstralMeanInit)) }
        for index in stride(from: 0, to: additionalArguments.count - 1, by: 2) {
            // A later value for the same name replaces the earlier one: PocketSphinx's strict parsing
            // rejects a name given twice.
            let name = additionalArguments[index]
            pairs.removeAll { $0.0 == name }
            pairs.append((name, additionalArguments[index + 1]))
        }
        return pairs
    }
}
