import AudioIO
import Foundation
import SpeechSynthesis
import TalkLogging

extension OpenClawTalk {
    /// Speaks text with the local voice through the path a reply takes: directive and markdown stripped, cut into
    /// sentences, synthesised by espeak-ng in process, played to a PulseAudio sink or written to a WAV file.
    struct Say: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "say",
            abstract: "Speak text with the local espeak-ng voice (as a reply is spoken).",
            discussion: "The text is handled like an assistant's reply: a voice-directive JSON first line sets the voice "
                + "and rate, markdown is read as words, code blocks are skipped. '-' reads the text from stdin.",
            options: [
                .option("voice", value: "name", help: "espeak-ng voice or language (default en-us; see espeak-ng --voices)."),
                .option("rate", value: "wpm", help: "Speed in words per minute, 80-450 (default 175)."),
                .option("pitch", value: "n", help: "Pitch 0-100 (default 50)."),
            ] + AudioDeviceOptions.options(.speaker, help: Self.deviceHelp) + [
                .flag("local", help: "Speak here even when a daemon runs (without it, a running daemon gets the text as a typed turn)."),
                .flag("list-voices", help: "List the voices (and variants) a reply's voice directive may choose, and exit."),
            ],
            arguments: [ArgumentSpec(name: "text", help: "What to say ('-' for stdin).", optional: true)]
        )

        static let deviceHelp = AudioDeviceOptions.Help(output: "Write the speech to this WAV file (22 050 Hz) instead of a sound card.")

        var text: String
        var settings: VoiceSettings
        /// Whether --voice/--rate were given: flags beat the reply's directive.
        var voiceGiven: Bool
        var rateGiven: Bool
        /// `--sink` or `--output`.
        var devices: AudioDeviceOptions
        /// No local-voice option given: a running daemon gets the text instead (`SayToDaemon`).
        var toDaemon: Bool
        var listVoices: Bool

        init(_ parsed: ParsedArguments) throws {
            listVoices = parsed.flag("list-voices")
            if !listVoices, parsed.argument("text") == nil { throw ValidationError("Missing expected argument '<text>'") }
            toDaemon = !parsed.flag("local") && ["voice", "rate", "pitch", "output", "sink"].allSatisfy { parsed.option($0) == nil }
            text = parsed.argument("text") ?? ""
            settings = VoiceSettings()
            voiceGiven = parsed.option("voice") != nil
            if let voice = parsed.option("voice") { settings.voice = voice }
            let rate = try parsed.intOption("rate", range: 80...450)
            rateGiven = rate != nil
            if let rate { settings.rateWPM = rate }
            if let pitch = try parsed.intOption("pitch", range: 0...100) { settings.pitch = pitch }
            devices = try AudioDeviceOptions(parsed, .speaker)
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.say")
            if listVoices { return try await Self.printVoices(try EspeakSynthesizer(logger: logger).listVoices()) }
            let input = text == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : text
            if toDaemon, let sent = SayToDaemon.send(input) { return try sent.emit() }
            let (directive, sentences) = SpokenReply.sentences(of: input)
            var voice = directive?.applied(to: settings) ?? settings
            if voiceGiven { voice.voice = settings.voice }
            if rateGiven { voice.rateWPM = settings.rateWPM }
            let synthesizer = try EspeakSynthesizer(logger: logger)
            let device = try devices.playback(sampleRate: synthesizer.sampleRate, logger: logger)
            let seconds: Double
            do {
                seconds = try await Self.speak(sentences, voice: voice, with: synthesizer, on: device)
            } catch {
                await device.close()
                throw error
            }
            await device.close()
            let duration = String(format: "%.2f", seconds)
            if let output = devices.output {
                print("Wrote \(duration) s (\(sentences.count) sentences) to \(output)")
            } else {
                print("Said \(duration) s (\(sentences.count) sentences) to \(devices.sink ?? "the default sink")")
            }
        }

        /// One voice a line: its languages, name and file; then the variants. MBROLA voices are not among them (a
        /// directive may not choose one; `--voice` and the config may).
        static func printVoices(_ list: EspeakVoices) {
            print("Voices a reply's voice directive may choose (by language, name or file; --voice takes any espeak-ng voice):")
            for voice in list.voices.sorted(by: { ($0.languages.first ?? "") < ($1.languages.first ?? "") }) {
                let languages = voice.languages.joined(separator: ",")
                print("  \(languages.padding(toLength: max(18, languages.count), withPad: " ", startingAt: 0)) "
                      + "\(voice.name.padding(toLength: max(30, voice.name.count), withPad: " ", startingAt: 0)) \(voice.identifier)")
            }
            print("Variants (after a voice and '+', e.g. en-us+f3): " + list.variants.sorted().joined(separator: ", "))
        }

        /// Speaks `sentences` as the Talk loop speaks a reply: synthesis runs ahead of playback by the loop's own
        /// `SentenceLookahead`; returns the seconds of speech played.
        static func speak(
            _ sentences: [String], voice: VoiceSettings, with synthesizer: any SpeechSynthesizer,
            on device: any AudioPlaybackDevice
        ) async throws -> Double {
            var lookahead = SentenceLookahead<String>()
            var pending: [Task<SynthesisChunk, any Error>] = []
            func start(_ released: [String]) {
                pending += released.map { sentence in Task { try await synthesizer.synthesizeAll(sentence, settings: voice) } }
            }
            defer { pending.forEach { $0.cancel() } }
            start(lookahead.hold(sentences))
            lookahead.finish()
            var seconds = 0.0
            while !pending.isEmpty {
                let audio = try await pending.removeFirst().value
                start(lookahead.took())
                let buffer = PCMBuffer(sampleRate: audio.sampleRate, samples: audio.samples)
                guard try await device.play(buffer) == .completed else { break }
                seconds += buffer.durationSeconds
            }
            return seconds
        }
    }
}
