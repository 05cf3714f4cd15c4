import TalkLogging

/// Where the microphone and the speaker are: for each end, a sound server's device by name, or a file standing in
/// for it. Every command with audio ends (`run`, `listen`, `say`, `play`, the live benchmarks) holds one; the rules
/// for what may go together (`conflict`) and how the devices are built from it are here, once.
package struct AudioDeviceChoice: Sendable, Equatable {
    /// The source: nil for the server's default.
    package var source: String?
    /// The file that is the microphone.
    package var input: String?
    /// The input file as fast as it can be read, not in real time.
    package var fast = false
    /// The sink: nil for the server's default.
    package var sink: String?
    /// The WAV file that is the speaker.
    package var output: String?

    package init(source: String? = nil, input: String? = nil, fast: Bool = false, sink: String? = nil, output: String? = nil) {
        (self.source, self.input, self.fast, self.sink, self.output) = (source, input, fast, sink, output)
    }

    /// A choice that cannot be built; a command words it in its own options' names.
    package enum Conflict: Error, Sendable, Equatable {
        /// The microphone named twice: a file and a source.
        case microphoneTwice
        /// The speaker named twice: a file and a sink.
        case speakerTwice
        /// Fast reading without a file to read.
        case fastWithoutFile
        /// PulseAudio's echo canceller (a module between a sink and a source) over a file end.
        case serverEchoCancelOverFile
    }

    /// The first rule `self` breaks, nil when it can be built.
    package var conflict: Conflict? {
        if input != nil, source != nil { return .microphoneTwice }
        if output != nil, sink != nil { return .speakerTwice }
        if fast, input == nil { return .fastWithoutFile }
        return nil
    }

    /// Both ends are a sound server's devices (no file at either end).
    package var bothOnServer: Bool { input == nil && output == nil }

    /// The microphone: the input file (in real time unless `fast`; `endlessSilence` goes on with silence after it,
    /// as a quiet room, until stopped) or the source on `server` (nil: libpulse's default).
    package func capture(endlessSilence: Bool = false, server: String? = nil, logger: Logger) -> any AudioCaptureDevice {
        guard let input else { return PulseCapture(source: source, server: server, logger: logger) }
        let options = FileCaptureDevice.Options(pacing: fast ? .asFastAsPossible : .realTime, endlessSilence: endlessSilence && !fast)
        return FileCaptureDevice(path: input, options: options, logger: logger)
    }

    /// The speaker: the output file, written at `sampleRate`, or the sink on `server`; what it plays goes to
    /// `echoReference` as it is heard, when an echo canceller needs it.
    /// - Throws: the file's or the sound server's error.
    package func playback(sampleRate: Int, echoReference: EchoReference? = nil, server: String? = nil, logger: Logger) throws
        -> any AudioPlaybackDevice
    {
        // PulsePlayback taps what the server says is heard, more exactly than a wrapper could.
        guard let output else { return try PulsePlayback(sink: sink, server: server, echoReference: echoReference, logger: logger) }
        let file = try WAVFileSink(path: output, sampleRate: sampleRate, logger: logger)
        return echoReference.map { EchoReferencePlayback(file, reference: $0, logger: logger) } ?? file
    }

    /// The microphone as status and logs name it: `file:PATH`, the source, or `default`.
    package var captureName: String { input.map { "file:" + $0 } ?? source ?? "default" }
    /// The speaker as status and logs name it: `file:PATH`, the sink, or `default`.
    package var playbackName: String { output.map { "file:" + $0 } ?? sink ?? "default" }
}
