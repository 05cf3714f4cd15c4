import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk {
    /// Plays an audio file through the playback path: to a PulseAudio sink, or into a WAV file with `--output`.
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
            abstract: "Play an audio file (WAV, raw 16 kHz PCM, Ogg Opus) through the playback path.",
            options: [
                .option("output", value: "file.wav", help: "Write what would be played to this WAV file instead of a sound card."),
                .option("sink", value: "name", help: "The PulseAudio sink to play to (default: the server's default)."),
            ],
            arguments: [ArgumentSpec(name: "file", help: "The audio file to play (.wav, .raw, .opus, .ogg).")]
        )

        var file: String
        var output: String?
        var sink: String?

        init(_ parsed: ParsedArguments) throws {
            file = parsed.argument("file") ?? ""
            output = parsed.option("output")
            sink = parsed.option("sink")
            if output != nil, sink != nil { throw ValidationError("'--output' and '--sink' cannot be used together") }
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.play")
            // Files are read at their own rate (any of them) so the playback device sees what a producer hands over.
            let audio = try AudioFileReader.readMono(path: file, sampleRate: nil)
            let device: any AudioPlaybackDevice
            if let output {
                device = try WAVFileSink(path: output, logger: logger)
            } else {
                device = try PulsePlayback(sink: sink, logger: logger)
            }
            let outcome: PlaybackOutcome
            do {
                outcome = try await device.play(audio)
            } catch {
                await device.close()
                throw error
            }
            await device.close()
            let seconds = String(format: "%.2f", audio.durationSeconds)
            if let output {
                print("Wrote \(seconds) s to \(output)")
            } else {
                print("Played \(seconds) s to \(sink ?? "the default sink") (\(outcome))")
            }
        }
    }
}
