import AudioIO
import Foundation

extension OpenClawTalk {
    /// Plays an audio file through the playback path: to a PulseAudio sink, or into a WAV file with `--output`.
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
            abstract: "Play an audio file (WAV) through the playback path.",
            options: [
                .option("output", value: "file.wav", help: "Write what would be played to this WAV file instead of a sound card.")
            ],
            arguments: [ArgumentSpec(name: "file", help: "The WAV file to play.")]
        )

        var file: String
        var output: String?

        init(_ parsed: ParsedArguments) throws {
            file = parsed.argument("file") ?? ""
            output = parsed.option("output")
        }

        func run() async throws {
            let audio = try WAVAudio.read(path: file)
            guard let output else { throw ValidationError("Playback to a sound card is not available yet; use --output FILE.wav") }
            try WAVAudio(audio.mixedToMono()).write(path: output)
            print("Wrote \(String(format: "%.2f", audio.durationSeconds)) s to \(output)")
        }
    }
}
