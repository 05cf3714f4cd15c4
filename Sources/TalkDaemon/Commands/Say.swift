import AudioIO
import Foundation
import SpeechSynthesis
import TalkLogging
import TalkSession

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
                .flag("json", help: "Print what was said as JSON, with the milliseconds to the first sentence's audio."),
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
        var json: Bool

        init(_ parsed: ParsedArguments) throws {
            listVoices = parsed.flag("list-voices")
            json = parsed.flag("json")
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
            let began = ContinuousClock.now
            let (directive, sentences) = SpokenReply.sentences(of: input)
            var voice = directive?.applied(to: settings) ?? settings
            if voiceGiven { voice.voice = settings.voice }
            if rateGiven { voice.rateWPM = settings.rateWPM }
            let synthesizer = try EspeakSynthesizer(logger: logger)
            let device = try devices.playback(sampleRate: synthesizer.sampleRate, logger: logger)
            let spoken = await SentenceSpeaker.speakLocally(sentences, voice: voice, synthesizer: synthesizer, player: device)
            await device.close()
            if let failure = spoken.failure { throw failure.error }
            let duration = String(format: "%.2f", spoken.seconds)
            if json {
                let first = spoken.firstAudio.map { Self.milliseconds(began.duration(to: $0)) }
                let object: [String: Any] = [
                    "sentences": sentences.count, "seconds": spoken.seconds, "firstAudioMs": first ?? NSNull(),
                    "totalMs": Self.milliseconds(began.duration(to: .now)),
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if let output = devices.output {
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

        static func milliseconds(_ duration: Duration) -> Double {
            let (seconds, attoseconds) = duration.components
            return (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded()
        }
    }
}
