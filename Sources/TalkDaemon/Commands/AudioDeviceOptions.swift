import AudioIO
import TalkLogging

/// Where the microphone and the speaker are, shared by `run`, `listen`, `say`, `play` and the bench commands as
/// swift-argument-parser's `@OptionGroup` shares a `ParsableArguments` struct: a sound server's source and sink by
/// name (`--source`, `--sink`), or a file standing in for either end (`--input` with `--fast`, `--output`). Each
/// command takes the options it has (`Ends`); the conflicts are checked here once, with one wording, so every
/// command accepts the same spellings and refuses the same mistakes the same way.
struct AudioDeviceOptions: Sendable, Equatable {
    /// Which of the options a command takes.
    struct Ends: OptionSet, Sendable {
        let rawValue: Int
        /// `--source NAME`.
        static let source = Ends(rawValue: 1 << 0)
        /// `--input FILE` and `--fast`.
        static let input = Ends(rawValue: 1 << 1)
        /// `--sink NAME`.
        static let sink = Ends(rawValue: 1 << 2)
        /// `--output FILE.wav`.
        static let output = Ends(rawValue: 1 << 3)

        static let microphone: Ends = [.source, .input]
        static let speaker: Ends = [.sink, .output]
        /// A sound server's devices only (the live benchmarks).
        static let devices: Ends = [.source, .sink]
    }

    /// The options' help, where a command says more than the default (what its file holds, which source hears).
    struct Help: Sendable {
        var source = "The PulseAudio source to listen on (default: the server's default)."
        var input = "Use this audio file (.wav, .raw, .opus) as the microphone, paced in real time."
        var fast = "With --input: feed the file as fast as possible instead of in real time."
        var sink = "The PulseAudio sink to play to (default: the server's default)."
        var output = "Write what would be played to this WAV file instead of a sound card."

        /// The live benchmarks': a sink played into and a source that hears it.
        static let loopback = Help(
            source: "The source that hears the sink (default: the sink's monitor).",
            sink: "The sink to play into (default: the server's default).")
    }

    /// `--source`: nil for the server's default.
    var source: String?
    /// `--input`: the file that is the microphone.
    var input: String?
    /// `--fast`: the input file as fast as it can be read, not in real time.
    var fast = false
    /// `--sink`: nil for the server's default.
    var sink: String?
    /// `--output`: the WAV file that is the speaker.
    var output: String?

    /// The option table entries for `ends`, in the order help lists them.
    static func options(_ ends: Ends, help: Help = Help()) -> [OptionSpec] {
        var specs: [OptionSpec] = []
        if ends.contains(.source) { specs.append(.option("source", value: "name", help: help.source)) }
        if ends.contains(.input) {
            specs.append(.option("input", value: "file", help: help.input))
            specs.append(.flag("fast", help: help.fast))
        }
        if ends.contains(.sink) { specs.append(.option("sink", value: "name", help: help.sink)) }
        if ends.contains(.output) { specs.append(.option("output", value: "file.wav", help: help.output)) }
        return specs
    }

    init(source: String? = nil, input: String? = nil, fast: Bool = false, sink: String? = nil, output: String? = nil) {
        (self.source, self.input, self.fast, self.sink, self.output) = (source, input, fast, sink, output)
    }

    /// Binds the options of `ends` (the same set the command's table took from `options(_:)`: another option of the
    /// same name, such as `bench aec --output`, is the command's own) and refuses an end given twice.
    /// - Throws: `ValidationError` naming both options and saying why.
    init(_ parsed: ParsedArguments, _ ends: Ends) throws {
        self.init(
            source: ends.contains(.source) ? parsed.option("source") : nil,
            input: ends.contains(.input) ? parsed.option("input") : nil,
            fast: ends.contains(.input) && parsed.flag("fast"),
            sink: ends.contains(.sink) ? parsed.option("sink") : nil,
            output: ends.contains(.output) ? parsed.option("output") : nil)
        try validate()
    }

    /// The conflicts, with the words a user sees.
    func validate() throws {
        if input != nil, source != nil { throw Self.conflict(file: "input", device: "source", end: "microphone") }
        if output != nil, sink != nil { throw Self.conflict(file: "output", device: "sink", end: "speaker") }
        if fast, input == nil { throw ValidationError("'--fast' needs '--input FILE'") }
    }

    private static func conflict(file: String, device: String, end: String) -> ValidationError {
        ValidationError("'--\(file)' and '--\(device)' cannot be used together: the \(end) is a file or a sound server's \(device), not both")
    }

    /// The microphone: the input file (in real time unless `--fast`; `endlessSilence` goes on with silence after it,
    /// as a quiet room, until stopped) or the source.
    func capture(endlessSilence: Bool = false, logger: Logger) -> any AudioCaptureDevice {
        guard let input else { return PulseCapture(source: source, logger: logger) }
        let options = FileCaptureDevice.Options(pacing: fast ? .asFastAsPossible : .realTime, endlessSilence: endlessSilence && !fast)
        return FileCaptureDevice(path: input, options: options, logger: logger)
    }

    /// The speaker: the output file, written at `sampleRate`, or the sink; what it plays goes to `echoReference` as
    /// it is heard, when an echo canceller needs it.
    /// - Throws: the file's or the sound server's error.
    func playback(sampleRate: Int, echoReference: EchoReference? = nil, logger: Logger) throws -> any AudioPlaybackDevice {
        // PulsePlayback taps what the server says is heard, more exactly than a wrapper could.
        guard let output else { return try PulsePlayback(sink: sink, echoReference: echoReference, logger: logger) }
        let file = try WAVFileSink(path: output, sampleRate: sampleRate, logger: logger)
        return echoReference.map { EchoReferencePlayback(file, reference: $0, logger: logger) } ?? file
    }

    /// The microphone as status and logs name it: `file:PATH`, the source, or `default`.
    var captureName: String { input.map { "file:" + $0 } ?? source ?? "default" }
    /// The speaker as status and logs name it: `file:PATH`, the sink, or `default`.
    var playbackName: String { output.map { "file:" + $0 } ?? sink ?? "default" }
}
