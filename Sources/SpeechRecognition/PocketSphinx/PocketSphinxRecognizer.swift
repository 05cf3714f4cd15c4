import AudioIO
import Foundation
import TalkLogging
import Threading

/// A `SpeechRecognizer` backed by PocketSphinx. The decoder is built once in `init` and kept warm: between
/// utterances only `ps_start_stream`/`ps_start_utt`/`ps_end_utt` run, so the cepstral mean learnt from this
/// speaker and microphone carries over from one utterance to the next, and every frame is decoded as it
/// arrives, leaving only the search's final pass for `endUtterance()`.
///
/// The actor runs on a thread of its own (`ThreadSerialExecutor`, named `decodingThreadName`), so every call on the
/// decoder does too, never one of the cooperative pool's threads; the thread ends when the recogniser is released.
/// The live session's (`DecodingThread.live`) runs realtime where allowed: its runs are bounded, and its long calls
/// (the final pass, a grammar, dropping a long utterance) run on a normal-class companion thread while it waits.
package actor PocketSphinxRecognizer: SpeechRecognizer {
    package nonisolated let configuration: RecognizerConfiguration
    /// The model files in use.
    package nonisolated let models: ModelPaths
    private let decoder: PocketSphinxDecoder
    private let logger: Logger
    private var inUtterance = false
    /// Audio of the current utterance, kept only while the cepstral mean is still warming up.
    private var warmUpAudio: [Int16] = []
    /// Whether the current utterance is decoded a second time at its end (decided when it starts).
    private var redecodeThisUtterance = false
    /// Audio decoded since the decoder was built, in samples; warm-up ends once it passes the configured length.
    private var samplesDecoded = 0
    /// Audio fed to the current utterance, in samples (how long dropping it takes: `DecodingThread.runsRealtime`).
    private var utteranceSamples = 0
    private var cpuNanoseconds: UInt64 = 0
    /// The search the next utterance starts in (`useGrammar`), and the grammar it holds when it is not the default.
    private var wantedSearch: String?
    private var wantedGrammar: String?
    /// Grammar searches are added under a new name each time: PocketSphinx frees a replaced search even while in use.
    private var grammarsAdded = 0
    /// A grammar's result is checked against a free phone loop over the same audio (`OutOfGrammarCheck`): whether
    /// that search is there (nil until a grammar is first asked for; false when the phone model cannot be loaded).
    private var phoneLoopReady: Bool?
    private let outOfGrammar = OutOfGrammarCheck()
    /// The scores of the last grammar result checked (nil when it was not checked or too long): for the figures.
    package private(set) var lastOutOfGrammarScores: OutOfGrammarCheck.Scores?
    /// Whether the current utterance is a grammar's, to be checked; its audio, kept for the check, and whether it
    /// grew past `OutOfGrammarCheck.maximumSamples` (then it is no answer, and no more is kept).
    private var checkThisUtterance = false
    private var checkedAudio: [Int16] = []
    private var checkedAudioTooLong = false
    static let phoneLoopSearch = "phone-loop"
    /// The decoding thread's name, as `/proc/<pid>/task/*/comm` shows it.
    package static let decodingThreadName = "pocketsphinx"
    private let executor: ThreadSerialExecutor

    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The decoding thread's end: it comes once the recogniser is released and its last call has returned.
    package nonisolated var decodingThreadEnd: ThreadSerialExecutor.End { executor.end }

    /// Finds the models and builds the decoder. Throws `SpeechRecognitionError` when a model, grammar or
    /// keyword list is missing or rejected.
    package init(configuration: RecognizerConfiguration, logger: Logger) throws {
        let locator = ModelLocator(modelDirectory: configuration.modelDirectory, language: configuration.language)
        let models = try locator.locate(for: configuration.mode, dictionary: configuration.dictionary)
        let arguments = try DecoderArguments.make(configuration: configuration, models: models)
        let started = ContinuousClock.now
        let decoder = try PocketSphinxDecoder(arguments: arguments, mode: configuration.mode, models: models)
        for phrase in try WakePhrases.phrases(for: configuration.mode) {
            let missing = decoder.wordsMissingFromDictionary(phrase.split(separator: " ").map(String.init))
            if !missing.isEmpty {
                throw SpeechRecognitionError.keyphraseInvalid(
                    phrase: phrase,
                    details: ["not in the dictionary \(models.dictionary): \(missing.joined(separator: ", "))"]
                )
            }
        }
        self.decoder = decoder
        self.configuration = configuration
        self.models = models
        self.logger = logger
        // Last, so a recogniser that could not be built starts no thread.
        executor = switch configuration.decodingThread {
        case .normal: ThreadSerialExecutor(name: Self.decodingThreadName)
        case .live:
            ThreadSerialExecutor(name: Self.decodingThreadName, realtime: BoundedRealtime(
                priority: DecodingThread.realtimePriority, longCallThreadName: DecodingThread.longCallThreadName
            ) { [logger] outcome in Self.log(outcome, logger: logger) })
        }
        logger.debug(
            "PocketSphinx decoder ready",
            metadata: [
                "speech.mode": "\(configuration.mode.name)", "speech.acoustic_model": "\(models.acousticModel)",
                "speech.init_ms": "\((ContinuousClock.now - started).milliseconds)",
            ]
        )
    }

    /// Whether the decoding thread runs realtime (`DecodingThread.live`, where the system allows it).
    package nonisolated var decodesRealtime: Bool { executor.runsRealtime }

    /// The longest the decoding thread has run realtime without blocking (an upper bound; nil where not realtime).
    package nonisolated var longestRealtimeBurst: Duration? { executor.longestRealtimeBurst }

    /// Logs, at info, the longest run the realtime decoding thread made without blocking (`longestRealtimeBurst`) against
    /// the process's `RLIMIT_RTTIME`, past which the kernel kills the process: the margin `RealtimeBurst`'s bound keeps,
    /// read where a developer looks (the daemon's log as the live session ends; `bench talk` keeps it with each
    /// session). Nothing where the thread is not realtime.
    package nonisolated func logRealtimeRuns() {
        guard let longest = longestRealtimeBurst else { return }
        let limit = RealtimeKitClient.currentTimeLimit().soft
        logger.info("The live decoder's longest realtime run", metadata: [
            "speech.thread": "\(Self.decodingThreadName)", "speech.longestRealtimeRunMs": "\(longest.milliseconds)",
            "speech.rttimeLimitMs": "\(limit == .max ? "none" : "\(limit / 1000)")",
        ])
    }

    private static func log(_ outcome: AudioThreadPriority.Outcome, logger: Logger) {
        switch outcome {
        case .realtime: logger.info("The live decoder runs \(outcome)", metadata: ["speech.thread": "\(decodingThreadName)"])
        case .refused: logger.info("The live decoder stays in the normal class: \(outcome)", metadata: ["speech.thread": "\(decodingThreadName)"])
        }
    }

    /// Runs a decoder call where `DecodingThread` puts it: in place, or (a long call on a realtime thread) in the normal
    /// class while the decoding thread waits.
    private func placed<T>(_ call: DecodingThread.Call, _ body: () throws -> T) throws -> T {
        guard !DecodingThread.runsRealtime(call, utteranceSamples: utteranceSamples) else {
            executor.checkRealtimeBurst()
            return try body()
        }
        return try executor.outsideRealtime(body)
    }

    package func startUtterance() throws {
        try placed(inUtterance ? .reset : .start) { try startUtteranceInPlace() }
    }

    private func startUtteranceInPlace() throws {
        try measured {
            if inUtterance { try? decoder.endUtterance() }
            inUtterance = false
            utteranceSamples = 0
            try switchSearch()
            try decoder.startUtterance()
            inUtterance = true
            warmUpAudio = []
            redecodeThisUtterance = warmingUp
            checkThisUtterance = phoneLoopReady == true && decoder.currentSearch.hasPrefix(Self.grammarSearchPrefix)
            checkedAudio = []
            checkedAudioTooLong = false
            lastOutOfGrammarScores = nil
        }
    }

    package func useGrammar(_ jsgf: String?) throws {
        guard jsgf != wantedGrammar else { return }
        try placed(.grammar) { try useGrammarInPlace(jsgf) }
    }

    private func useGrammarInPlace(_ jsgf: String?) throws {
        var name = decoder.defaultSearch
        if let jsgf {
            grammarsAdded += 1
            name = Self.grammarSearchPrefix + "\(grammarsAdded)"
            try measured { try decoder.addGrammar(name: name, jsgf: jsgf) }
            if phoneLoopReady == nil { phoneLoopReady = measured { addPhoneLoop() } }
        }
        // A search asked for before that never came into use is dropped at once (never the default or the current).
        if let pending = wantedSearch { decoder.removeSearch(pending) }
        wantedGrammar = jsgf
        wantedSearch = name
        if !inUtterance { try switchSearch() }
        logger.debug("recognition search chosen", metadata: ["speech.search": "\(name)"])
    }

    static let grammarSearchPrefix = "answers-"

    /// Loads the phone loop the grammars' results are checked against: the language's phone n-gram model
    /// (`en-us-phone.lm.bin`) beside the language model or the acoustic model. False, with a warning, without one:
    /// grammar results then pass unchecked.
    private func addPhoneLoop() -> Bool {
        let name = "\(configuration.language)-phone.lm.bin"
        let folders = [models.languageModel, models.acousticModel].compactMap { $0 }.map { ($0 as NSString).deletingLastPathComponent }
        guard let path = folders.map({ $0 + "/" + name }).first(where: FileManager.default.isReadableFile(atPath:)) else {
            logger.warning("no phone model for the out-of-grammar check; grammar results pass unchecked", metadata: ["speech.looked_in": "\(folders)"])
            return false
        }
        do {
            try decoder.addPhoneLoop(name: Self.phoneLoopSearch, languageModel: path)
            return true
        } catch {
            logger.warning("the out-of-grammar check's phone loop did not load; grammar results pass unchecked", metadata: ["speech.error": "\(error)"])
            return false
        }
    }

    /// Between utterances: the search asked for takes over, and the one it replaces is freed unless it is the default.
    private func switchSearch() throws {
        guard let wanted = wantedSearch else { return }
        let previous = decoder.currentSearch
        wantedSearch = nil
        guard wanted != previous else { return }
        try decoder.useSearch(wanted)
        decoder.removeSearch(previous)
    }

    /// True until the decoder has heard enough speech for its live cepstral mean to fit this microphone.
    private var warmingUp: Bool { samplesDecoded < configuration.cepstralWarmUpSamples }

    package func process(_ samples: [Int16]) throws -> Bool? {
        try placed(.frame) { try processInPlace(samples) }
    }

    private func processInPlace(_ samples: [Int16]) throws -> Bool? {
        try measured {
            guard inUtterance else { throw SpeechRecognitionError.notInUtterance(operation: "process") }
            try decoder.process(samples)
            if redecodeThisUtterance {
                // A long first utterance warms the mean up by itself, and decoding it twice would delay its result.
                if warmUpAudio.count + samples.count > configuration.cepstralWarmUpSamples {
                    redecodeThisUtterance = false
                    warmUpAudio = []
                } else {
                    warmUpAudio += samples
                }
            }
            if checkThisUtterance && !checkedAudioTooLong {
                checkedAudio += samples
                if checkedAudio.count > outOfGrammar.maximumSamples {
                    checkedAudioTooLong = true
                    checkedAudio = []
                }
            }
            samplesDecoded += samples.count
            utteranceSamples += samples.count
            return decoder.inSpeech
        }
    }

    package func partial() -> Hypothesis? {
        guard inUtterance else { return nil }
        executor.checkRealtimeBurst()
        let text = measured { decoder.hypothesisText() }
        return text.isEmpty ? nil : Hypothesis(text: text)
    }

    package func decodeCPUSeconds() -> Double { Double(cpuNanoseconds) / 1e9 }

    /// Runs a decoder call and adds its thread CPU time: the call is synchronous, so it stays on one thread.
    private func measured<T>(_ body: () throws -> T) rethrows -> T {
        let start = threadCPUNanoseconds()
        defer { cpuNanoseconds &+= threadCPUNanoseconds() &- start }
        return try body()
    }


    package func endUtterance() throws -> Hypothesis {
        try placed(.end) { try endUtteranceInPlace() }
    }

    private func endUtteranceInPlace() throws -> Hypothesis {
        try measured {
            guard inUtterance else { throw SpeechRecognitionError.notInUtterance(operation: "endUtterance") }
            inUtterance = false
            try decoder.endUtterance()
            if redecodeThisUtterance && !warmUpAudio.isEmpty {
                // The first pass started from the model's generic cepstral mean; ending it updated the mean from
                // this speaker and microphone, so decoding the same audio again fits it far better. This costs one
                // extra decode, and only for the first few seconds of speech a decoder ever hears.
                let audio = warmUpAudio
                warmUpAudio = []
                logger.trace(
                    "Decoding the utterance again with the adapted cepstral mean",
                    metadata: ["speech.samples": "\(audio.count)"]
                )
                try decoder.startUtterance()
                try decoder.process(audio)
                try decoder.endUtterance()
            }
            let text = decoder.hypothesisText()
            guard !text.isEmpty else { return .empty }
            var hypothesis = Hypothesis(text: text, words: decoder.segments(), confidence: decoder.hypothesisProbability())
            if checkThisUtterance, try !saidInGrammar() { hypothesis.confidence = 0 }
            return hypothesis
        }
    }

    /// `OutOfGrammarCheck` on the utterance just decoded in a grammar: the same audio decoded again in the phone loop.
    private func saidInGrammar() throws -> Bool {
        let audio = checkedAudio
        checkedAudio = []
        checkThisUtterance = false
        lastOutOfGrammarScores = nil
        guard !checkedAudioTooLong else {
            logger.debug("out of grammar: longer than an answer")
            return false
        }
        let grammar = decoder.scoredSegments()
        let grammarSearch = decoder.currentSearch
        try decoder.useSearch(Self.phoneLoopSearch)
        defer { try? decoder.useSearch(grammarSearch) }
        try decoder.startUtterance()
        try decoder.process(audio)
        try decoder.endUtterance()
        let phoneLoop = decoder.scoredSegments()
        let wordPhones = grammar.filter(\.isWord).map { decoder.pronunciationPhones($0.label) }
        let scores = outOfGrammar.scores(grammar: grammar, phoneLoop: phoneLoop,
                                         wordPhones: wordPhones.contains(nil) ? nil : wordPhones.reduce(0) { $0 + ($1 ?? 0) })
        logger.trace("out-of-grammar check paths", metadata: [
            "speech.grammar_path": "\(grammar.map { "\($0.label):\($0.startFrame)-\($0.endFrame):\($0.acousticScore)" }.joined(separator: " "))",
            "speech.phone_loop_path": "\(phoneLoop.map { "\($0.label):\($0.startFrame)-\($0.endFrame):\($0.acousticScore)" }.joined(separator: " "))",
            "speech.samples": "\(audio.count)",
        ])
        let accepted = outOfGrammar.accepts(scores)
        lastOutOfGrammarScores = scores
        logger.debug("out-of-grammar check", metadata: [
            "speech.path_score": "\(scores?.path ?? .nan)", "speech.word_score": "\(scores?.words ?? .nan)",
            "speech.outside_words_frames": "\(scores?.speechOutsideWords ?? -1)",
            "speech.phones_per_word_phone": "\(scores?.phonesPerWordPhone ?? .nan)", "speech.accepted": "\(accepted)",
        ])
        return accepted
    }

    package func reset() {
        guard inUtterance else { return }
        try? placed(.reset) { resetInPlace() }
    }

    private func resetInPlace() {
        inUtterance = false
        warmUpAudio = []
        redecodeThisUtterance = false
        checkThisUtterance = false
        checkedAudio = []
        try? decoder.endUtterance()
    }
}

extension Duration {
    /// Whole milliseconds, for logs and measurements.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
