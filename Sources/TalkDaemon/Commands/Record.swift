import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk {
    /// Records from a PulseAudio source into a 16 kHz mono WAV file.
    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record",
            abstract: "Record from the microphone (a PulseAudio source) into a WAV file.",
            options: [
                .option("seconds", value: "n", help: "How long to record (default 5)."),
                .option("output", value: "file.wav", help: "The WAV file to write (16 kHz mono, 16-bit)."),
            ] + AudioDeviceOptions.options(.source, help: .init(source: "The PulseAudio source to record from (default: the server's default)."))
        )

        var seconds: Double
        var output: String
        /// `--source`: the microphone is always a sound server's source here (`--output` is the recording, not a speaker).
        var devices: AudioDeviceOptions
        var source: String? { devices.source }

        init(_ parsed: ParsedArguments) throws {
            seconds = try parsed.doubleOption("seconds", range: 0.02...86_400) ?? 5
            guard let output = parsed.option("output") else { throw ValidationError("Missing '--output <file.wav>'") }
            self.output = output
            devices = try AudioDeviceOptions(parsed, .source)
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.record")
            let capture = PulseCapture(source: devices.source, logger: logger)
            let wanted = Int((seconds * 1000 / Double(AudioFrame.durationMs)).rounded(.up))
            var samples: [Int16] = []
            samples.reserveCapacity(wanted * AudioFrame.samplesPerFrame)
            let events = try await capture.start()
            let device = await capture.currentDevice() ?? "default source"
            FileHandle.standardError.write(Data("Recording \(seconds) s from \(device)...\n".utf8))
            var frames = 0
            for await event in events {
                switch event {
                case .frame(let frame):
                    samples.append(contentsOf: frame.samples)
                    frames += 1
                case .interrupted(let reason):
                    FileHandle.standardError.write(Data("Capture interrupted: \(reason); waiting for it to come back\n".utf8))
                case .resumed(let device):
                    FileHandle.standardError.write(Data("Capture resumed on \(device)\n".utf8))
                case .finished:
                    break
                }
                if frames >= wanted { break }
            }
            await capture.stop()
            try WAVAudio(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: samples)).write(path: output)
            print("Wrote \(String(format: "%.2f", Double(samples.count) / Double(AudioFrame.sampleRate))) s to \(output)")
        }
    }
}
