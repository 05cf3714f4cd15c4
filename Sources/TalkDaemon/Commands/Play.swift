import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk {
    /// Plays an audio file through the playback path: to a PulseAudio sink, or into a WAV file with `--output`.
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
            abstract: "Play an audio file (WAV) through the playback path.",
            options: [
                .option("output", value: "file.wav", help: "Write what would be played to this WAV file instead of a sound card."),
                .option("sink", value: "name", help: "The PulseAudio sink to play to (default: the server's default)."),
            ],
            arguments: [ArgumentSpec(name: "file", help: "The WAV file to play.")]
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
            let audio = try WAVAudio.read(path: file)
            if let output {
                try WAVAudio(audio.mixedToMono()).write(path: output)
                print("Wrote \(String(format: "%.2f", audio.durationSeconds)) s to \(output)")
                return
            }
            let playback = try PulsePlayback(sink: sink, logger: Logger(label: "openclaw-talk.play"))
            let outcome: PlaybackOutcome
            do {
                outcome = try await playback.play(audio.mixedToMono())
            } catch {
                await playback.close()
                throw error
            }
            await playback.close()
            print("Played \(String(format: "%.2f", audio.durationSeconds)) s to \(sink ?? "the default sink") (\(outcome))")
        }
    }
}
