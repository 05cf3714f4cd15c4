extension DecoderTuning {
    /// Settings for the live pipeline, where the final hypothesis must be ready within 100 ms of the
    /// endpoint and decoding must keep well ahead of real time. In dictation: no flat-lexicon pass
    /// (`-fwdflat` runs over the whole utterance only once it has ended); a narrower word-exit beam
    /// (`-wbeam 1e-20`, library default 7e-29) so best-path rescoring of the lattice stays fast and peak RSS
    /// under 150 MB; at most 10 000 active HMMs a frame (`-maxhmmpf`), which bounds the CPU spent on hard
    /// audio. Measured with `bench` on the 36-clip real-speech dev set (2-core machine shared with other
    /// builds): library defaults WER 44.8 %, rtf 0.27-0.32, finalize p95 1190 ms, RSS 161 MB; these settings
    /// WER 44.4-45.1 %, rtf 0.14-0.19, finalize p95 15-43 ms, RSS 134 MB (pocketsphinx_continuous: WER 46.6 %).
    /// `-maxhmmpf 6000` gave rtf 0.14 at WER 45.4 %, 3000 rtf 0.09 at WER 47.8 %.
    /// The stricter voice threshold `recommended` uses for whole files (2.5) costs here: the endpointer has
    /// already trimmed the silence, so PocketSphinx's own VAD keeps its default (WER 44.4 % against 46.0 %).
    /// The default word beam too would give 43.8 %, at 145 MB peak RSS (too close to the 150 MB budget).
    /// Other modes keep `recommended(for:)`: their searches are small.
    package static func streaming(for mode: RecognitionMode) -> DecoderTuning {
        guard case .dictation = mode else { return recommended(for: mode) }
        var tuning = recommended(for: mode)
        tuning.wordBeam = 1e-20
        tuning.flatLexiconPass = false
        tuning.bestPath = true
        tuning.voiceThreshold = nil
        tuning.additionalArguments = ["-maxhmmpf", "10000"]
        return tuning
    }
}
