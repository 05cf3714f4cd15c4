import AudioIO
import Foundation
import SessionBridge
import TalkLogging

extension GatewayBenchmark {
    /// What decoding one `talk.speak` clip format costs.
    package struct SpeakDecodeFigure: Sendable {
        package var format: String
        package var audioSeconds: Double
        package var clipBytes: Int
        /// Thread CPU milliseconds per second of audio, one value per decode.
        package var msPerAudioSecond: Stats

        package var json: JSONValue {
            ["audioSeconds": .double(round2(audioSeconds)), "clipBytes": .int(Int64(clipBytes)),
             "decodeMsPerAudioSecond": ["median": .double(round2(msPerAudioSecond.median)), "p90": .double(round2(msPerAudioSecond.p90))]]
        }
        package var text: String { String(format: "%@ %.2f ms/s", format, msPerAudioSecond.median) }
        func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }
    }

    package static let speakFormats = ["pcm_24000", "pcm_44100", "opus", "wav", "mp3"]
    static let speakSentence = "The Gateway speaks this sentence in every format, so each decoder gets a few seconds of the same speech."

    /// Fetches one clip per format through `talk.speak` from refgw (espeak-ng speech encoded with sox, opusenc
    /// or lame), then decodes it `rounds` times on a thread of its own, timing each decode's thread CPU.
    package static func measureSpeakDecode(rounds: Int, repository: String, logger: Logger) async throws -> [SpeakDecodeFigure] {
        let token = "bench-speak"
        let gateway = try await ReferenceGatewayProcess.forBenchmark(repositoryRoot: repository, arguments: ["--token", token, "--auto-approve"])
        defer { gateway.stop() }
        let connection = try gateway.connection(
            token: token, profile: .operator(scopes: ["operator.read", "operator.talk"], displayName: "bench", version: "bench"),
            logger: logger)
        let run = Task { await connection.run() }
        defer { run.cancel() }
        try await waitConnected(connection)
        let speech = TalkSpeechClient(gateway: connection, logger: logger)
        var figures: [SpeakDecodeFigure] = []
        for format in speakFormats {
            try gateway.control("talk-speak \(format)")
            guard case .clip(let clip) = try await speech.speak(speakSentence) else { throw SpeakBenchError.noClip(format) }
            let (seconds, cpu) = try await decodeTimes(clip, rounds: rounds)
            figures.append(SpeakDecodeFigure(format: format, audioSeconds: seconds, clipBytes: clip.audio.count,
                                             msPerAudioSecond: Stats(values: cpu.map { $0 / seconds })))
        }
        return figures
    }

    /// (audio seconds, thread CPU ms per decode), decoding on a dedicated thread as the Talk loop does.
    static func decodeTimes(_ clip: TalkClip, rounds: Int) async throws -> (Double, [Double]) {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<(Double, [Double]), any Error>) in
            let thread = Thread {
                done.resume(with: Result {
                    var times: [Double] = []
                    var seconds = 0.0
                    for _ in 0..<rounds {
                        let start = threadCPUNanoseconds()
                        let pcm = try AudioClipDecoder.decode(
                            clip.audio, outputFormat: clip.outputFormat, mimeType: clip.mimeType, fileExtension: clip.fileExtension)
                        times.append(Double(threadCPUNanoseconds() - start) / 1e6)
                        seconds = pcm.durationSeconds
                    }
                    return (seconds, times)
                })
            }
            thread.name = "bench-clip-decode"
            thread.start()
        }
    }

    enum SpeakBenchError: Error, CustomStringConvertible {
        case noClip(String)
        package var description: String {
            switch self {
            case .noClip(let format):
                "The reference Gateway did not return a \(format) clip (are espeak-ng, sox, opusenc and lame installed?)."
            }
        }
    }
}
