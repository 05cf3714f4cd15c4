import COggOpus
import COpus

/// What went wrong encoding or decoding Opus, raw or in Ogg; library failures carry the library's own text.
package enum OpusError: Error, Equatable, CustomStringConvertible {
    case unsupportedSampleRate(Int)
    case invalidSetting(name: String, value: Int)
    case wrongFrameSize(expected: Int, got: Int)
    /// libopus failed; `message` is `opus_strerror(code)`.
    case libopus(operation: String, code: Int32, message: String)
    /// libopusenc failed writing Ogg Opus; `message` is `ope_strerror(code)`.
    case oggWriter(destination: String, operation: String, code: Int32, message: String)
    /// opusfile could not read the stream.
    case oggReader(source: String, code: Int32, message: String)
    case finished(destination: String)
    /// The directory for recorded utterances cannot be created or written.
    case recordingDirectory(path: String, reason: String)

    package var description: String {
        switch self {
        case .unsupportedSampleRate(let rate):
            return "Opus cannot run at \(rate) Hz; use 8000, 12000, 16000, 24000 or 48000"
        case .invalidSetting(let name, let value):
            return "Opus \(name) \(value) is out of range"
        case .wrongFrameSize(let expected, let got):
            return "Opus frames must hold exactly \(expected) samples (20 ms); got \(got)"
        case .libopus(let operation, let code, let message):
            return "libopus failed to \(operation): \(message) (error \(code))"
        case .oggWriter(let destination, let operation, let code, let message):
            return "Cannot \(operation) Ogg Opus \(destination): \(message) (libopusenc error \(code))"
        case .oggReader(let source, let code, let message):
            return "Cannot read Ogg Opus \(source): \(message) (opusfile error \(code))"
        case .finished(let destination):
            return "Ogg Opus \(destination) is already finished; start a new writer"
        case .recordingDirectory(let path, let reason):
            return "Cannot record utterances into \(path): \(reason); choose a writable directory"
        }
    }

    static func libopus(_ operation: String, _ code: Int32) -> OpusError {
        .libopus(operation: operation, code: code, message: String(cString: opus_strerror(code)))
    }

    /// opusfile has no strerror: its codes, in its own header's words.
    static func opusfileMessage(_ code: Int32) -> String {
        switch code {
        case -1: return "the request did not succeed"
        case -3: return "there is a hole in the data (missing or corrupt pages)"
        case -128: return "an underlying read, seek or tell operation failed"
        case -129: return "a memory allocation failed or an internal error occurred"
        case -130: return "the stream uses a feature opusfile does not implement"
        case -131: return "an invalid argument was given"
        case -132: return "this is not Ogg Opus data (no Ogg stream with an Opus header found)"
        case -133: return "the Opus header is malformed"
        case -134: return "the Opus header has an unrecognised version"
        case -136: return "an audio packet failed to decode"
        case -137: return "no audio data was found in a link of the stream"
        case -139: return "the timestamps in the stream are invalid"
        default: return "unknown error"
        }
    }
}
