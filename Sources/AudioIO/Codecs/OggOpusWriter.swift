import COggOpus
import Foundation
import Glibc

/// Writes mono 16-bit PCM as an Ogg Opus stream (RFC 7845) with libopusenc, to a file or to memory.
///
/// Input may be at any sample rate: libopusenc resamples to Opus's 48 kHz and records the original rate
/// in the header. Pre-skip and end trimming are written, so a reader gets back exactly the duration put in.
/// Call `finish()` to flush the last page; a writer dropped without it leaves a truncated stream.
/// Not thread-safe: confine it to its owner.
package final class OggOpusWriter {
    /// Where the stream goes.
    package enum Destination: Sendable, Equatable {
        case file(path: String)
        case memory
    }

    /// Encoder settings for speech.
    package struct Settings: Sendable, Equatable {
        package var bitrate: Int
        package var complexity: Int

        package init(bitrate: Int = 24_000, complexity: Int = 5) {
            self.bitrate = bitrate
            self.complexity = complexity
        }
    }

    package let destination: Destination
    package let sampleRate: Int
    private var encoder: OpaquePointer?
    private let sink = ByteSink()
    private var samplesWritten = 0

    /// - Throws: `OpusError` when the rate or settings are refused or the file cannot be created.
    package init(to destination: Destination, sampleRate: Int, settings: Settings = Settings()) throws {
        self.destination = destination
        self.sampleRate = sampleRate
        let name = Self.describe(destination)
        guard (8_000...192_000).contains(sampleRate) else { throw OpusError.unsupportedSampleRate(sampleRate) }
        guard let comments = ope_comments_create() else {
            throw OpusError.oggWriter(
                destination: name,
                operation: "create",
                code: OPE_ALLOC_FAIL,
                message: "out of memory"
            )
        }
        defer { ope_comments_destroy(comments) }
        var error: Int32 = 0
        if case .file(let path) = destination {
            // Our own descriptor rather than libopusenc's fopen: the file is owner-only (`PrivateFile`).
            do { sink.fd = try PrivateFile.create(path) } catch {
                throw OpusError.oggWriter(destination: name, operation: "create", code: OPE_CANNOT_OPEN, message: "\(error)")
            }
        }
        var callbacks = OpusEncCallbacks(write: ByteSink.write, close: ByteSink.close)
        let context = Unmanaged.passUnretained(sink).toOpaque()
        encoder = ope_encoder_create_callbacks(&callbacks, context, comments, Int32(sampleRate), 1, 0, &error)
        guard let encoder, error == OPE_OK else { throw Self.failure(name, "create", error) }
        for (operation, code) in [
            ("set the bitrate of", cogg_set_bitrate(encoder, Int32(settings.bitrate))),
            ("set the complexity of", cogg_set_complexity(encoder, Int32(settings.complexity))),
            ("set the signal type of", cogg_set_signal(encoder, OPUS_SIGNAL_VOICE)),
        ] where code != OPE_OK {
            throw Self.failure(name, operation, code)
        }
    }

    deinit {
        if let encoder { ope_encoder_destroy(encoder) }
    }

    /// Seconds of audio written so far.
    package var durationSeconds: Double { Double(samplesWritten) / Double(sampleRate) }

    /// The stream so far (all of it after `finish()`); empty for a file destination.
    package var bytes: [UInt8] { sink.bytes }

    /// Encodes more samples (any count; libopusenc frames them).
    package func write(_ samples: [Int16]) throws {
        guard let encoder else { throw OpusError.finished(destination: Self.describe(destination)) }
        if samples.isEmpty { return }
        let code = samples.withUnsafeBufferPointer { ope_encoder_write(encoder, $0.baseAddress, Int32($0.count)) }
        guard code == OPE_OK else { throw Self.failure(Self.describe(destination), "write", code) }
        samplesWritten += samples.count
    }

    /// Flushes the last frames and closes the stream (and the file). Idempotent.
    package func finish() throws {
        guard let encoder else { return }
        self.encoder = nil
        defer { ope_encoder_destroy(encoder) }
        // libopusenc 0.2.1 fails an assertion (aborting the process) when draining a stream that holds no
        // audio at all, at least when it carries comments; one silent sample makes an empty stream safe.
        if samplesWritten == 0 {
            var silence: Int16 = 0
            _ = ope_encoder_write(encoder, &silence, 1)
        }
        let code = ope_encoder_drain(encoder)
        guard code == OPE_OK else { throw Self.failure(Self.describe(destination), "finish", code) }
    }

    private static func describe(_ destination: Destination) -> String {
        switch destination {
        case .file(let path): return "file \(path)"
        case .memory: return "stream in memory"
        }
    }

    private static func failure(_ destination: String, _ operation: String, _ code: Int32) -> OpusError {
        .oggWriter(
            destination: destination,
            operation: operation,
            code: code,
            message: String(cString: ope_strerror(code))
        )
    }
}

@available(*, unavailable)
extension OggOpusWriter: Sendable {}

/// Takes the pages libopusenc hands to its write callback: into memory, or to the file's descriptor.
private final class ByteSink {
    var bytes: [UInt8] = []
    /// The file written to, when the destination is a file.
    var fd: Int32 = -1

    deinit { if fd >= 0 { Glibc.close(fd) } }

    static let write: ope_write_func = { context, pointer, length in
        guard let context, let pointer, length >= 0 else { return 1 }
        let sink = Unmanaged<ByteSink>.fromOpaque(context).takeUnretainedValue()
        let pages = UnsafeRawBufferPointer(start: pointer, count: Int(length))
        if sink.fd >= 0 { return PrivateFile.write(sink.fd, pages) ? 0 : 1 }
        sink.bytes.append(contentsOf: pages)
        return 0
    }

    static let close: ope_close_func = { context in
        guard let context else { return 0 }
        let sink = Unmanaged<ByteSink>.fromOpaque(context).takeUnretainedValue()
        if sink.fd >= 0 {
            let closed = Glibc.close(sink.fd)
            sink.fd = -1
            return closed == 0 ? 0 : 1
        }
        return 0
    }
}
