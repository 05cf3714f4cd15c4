import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk {
    /// Plays an audio file through the playback path: to a PulseAudio sink, or into a WAV file with `--output`.
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
            abstract: "Play an audio file (WAV, raw 16 kHz PCM, Ogg Opus) through the playback path.",
            options: AudioDeviceOptions.options(.speaker),
            arguments: [ArgumentSpec(name: "file", help: "The audio file to play (.wav, .raw, .opus, .ogg).")]
        )

        var file: String
        /// `--sink` or `--output`.
        var devices: AudioDeviceOptions

        init(_ parsed: ParsedArguments) throws {
            file = parsed.argument("file") ?? ""
            devices = try AudioDeviceOptions(parsed, .speaker)
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.play")
            // Files are read at their own rate (any of them) so the playback device sees what a producer hands over.
            let audio = try AudioFileReader.readMono(path: file, sampleRate: nil)
            // A file is written at WAVFileSink's own rate (24 kHz), the one a reply's audio comes at.
            let device = try devices.playback(sampleRate: 24_000, logger: logger)
            let outcome: PlaybackOutcome
            do {
                outcome = try await device.play(audio)
            } catch {
                await device.close()
                throw error
            }
            await device.close()
            let seconds = String(format: "%.2f", audio.durationSeconds)
            if let output = devices.output {
                print("Wrote \(seconds) s to \(output)")
            } else {
                print("Played \(seconds) s to \(devices.sink ?? "the default sink") (\(outcome))")
            }
        }
    }
}
