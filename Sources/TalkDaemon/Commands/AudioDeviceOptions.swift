import AudioIO

/// Where the microphone and the speaker are, shared by `run`, `listen`, `say`, `play` and the bench commands as
/// swift-argument-parser's `@OptionGroup` shares a `ParsableArguments` struct: a sound server's source and sink by
/// name (`--source`, `--sink`), or a file standing in for either end (`--input` with `--fast`, `--output`). Each
/// command takes the options it has (`Ends`). The choice itself, its rules and the devices built from it are
/// AudioIO's `AudioDeviceChoice`; here are only the options and the words a user sees for a broken rule.
typealias AudioDeviceOptions = AudioDeviceChoice

extension AudioDeviceChoice {
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

    /// Binds the options of `ends` (the same set the command's table took from `options(_:)`: another option of the
    /// same name, such as `bench aec --output`, is the command's own) and refuses a choice that breaks a rule.
    /// - Throws: `ValidationError` naming both options and saying why.
    init(_ parsed: ParsedArguments, _ ends: Ends) throws {
        self.init(
            source: ends.contains(.source) ? parsed.option("source") : nil,
            input: ends.contains(.input) ? parsed.option("input") : nil,
            fast: ends.contains(.input) && parsed.flag("fast"),
            sink: ends.contains(.sink) ? parsed.option("sink") : nil,
            output: ends.contains(.output) ? parsed.option("output") : nil)
        if let conflict { throw ValidationError(conflict) }
    }
}

extension EchoCancelMode {
    /// `--aec`'s value over `devices`.
    /// - Throws: `ValidationError` for a value that is none of the modes, or one the devices cannot take.
    static func parse(_ value: String?, devices: AudioDeviceChoice) throws -> EchoCancelMode {
        guard let value else { return .auto }
        guard let mode = EchoCancelMode(rawValue: value.lowercased()) else {
            throw ValidationError("Invalid value '\(value.prefix(40))' for '--aec': expected auto, webrtc, pulse or off")
        }
        if let conflict = mode.conflict(with: devices) { throw ValidationError(conflict) }
        return mode
    }
}

extension ValidationError {
    /// A broken device rule in the options' words.
    init(_ conflict: AudioDeviceChoice.Conflict) {
        switch conflict {
        case .microphoneTwice: self.init(Self.twice(file: "input", device: "source", end: "microphone"))
        case .speakerTwice: self.init(Self.twice(file: "output", device: "sink", end: "speaker"))
        case .fastWithoutFile: self.init("'--fast' needs '--input FILE'")
        case .serverEchoCancelOverFile:
            self.init("'--aec pulse' needs PulseAudio for both the microphone and the speaker (not '--input' or '--output'); use '--aec webrtc'")
        }
    }

    private static func twice(file: String, device: String, end: String) -> String {
        "'--\(file)' and '--\(device)' cannot be used together: the \(end) is a file or a sound server's \(device), not both"
    }
}
