import Foundation
import TalkLogging

/// A speaker that records: each played buffer is resampled to one fixed rate and appended to a 16-bit mono
/// WAV file, whose header is brought up to date after every `play`, so the file is valid at any moment.
///
/// Unpaced (the default, for tests and benchmarks) a `play` writes the whole buffer at once and completes;
/// there is nothing left for `stop()` to cut. Paced (given a `PacingClock`) it writes 20 ms at a time in
/// real time, like a sound card; `stop()` ends a `play` in progress after the chunk being "heard", so the
/// file holds exactly what a listener would have heard, and the `play` returns `.stopped`.
/// Calls to `play` are meant to come one at a time, as for a sound card.
package actor WAVFileSink: AudioPlaybackDevice {
    package let path: String
    package let sampleRate: Int
    private let pacing: PacingClock?
    private let logger: Logger
    private var handle: FileHandle?
    private var dataBytes = 0
    /// Bumped by `stop()`: a paced `play` that started under an older generation has been stopped.
    private var generation: UInt64 = 0
    /// The level samples are written at (`setGain`): unpaced, a whole buffer at the level its `play` found.
    private var gain = PlaybackGain()

    /// Creates (or truncates) the file and writes an empty WAV header.
    /// - Throws: `WAVError.unwritable` when the file cannot be created.
    package init(path: String, sampleRate: Int = 24_000, pacing: PacingClock? = nil, logger: Logger) throws {
        guard (1000...768_000).contains(sampleRate) else {
            throw WAVError.unwritable(path: path, reason: "sample rate \(sampleRate) Hz is out of range")
        }
        self.path = path
        self.sampleRate = sampleRate
        self.pacing = pacing
        self.logger = logger
        let header = WAVAudio(sampleRate: sampleRate, channels: 1, samples: []).encoded()
        // Owner-only: the file holds what was said (`PrivateFile`).
        let fd = try PrivateFile.create(path)
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do { try handle.write(contentsOf: header) } catch {
            throw WAVError.unwritable(path: path, reason: (error as NSError).localizedDescription)
        }
        self.handle = handle
    }

    /// Seconds of audio in the file so far.
    package var writtenSeconds: Double { Double(dataBytes / 2) / Double(sampleRate) }

    /// Appends the buffer (resampled to the file's rate); paced, it takes as long as the audio lasts.
    /// - Throws: `WAVError.unwritable` on a write failure or after `close()`; `ResamplerError` for a bad rate.
    package func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        let samples = try Resampler.resample(buffer.samples, from: buffer.sampleRate, to: sampleRate)
        gain.startSound()
        guard let pacing else {
            try append(samples[...])
            return .completed
        }
        let started = generation
        let chunk = sampleRate / 50
        let startNs = pacing.now()
        for (index, offset) in stride(from: 0, to: samples.count, by: chunk).enumerated() {
            try append(samples[offset..<min(offset + chunk, samples.count)])
            do {
                try await pacing.sleepUntil(startNs + UInt64(index + 1) * 20_000_000)
            } catch {
                return .stopped
            }
            if generation != started {
                logger.debug(
                    "Playback to file stopped",
                    metadata: ["audio.file": "\(path)", "audio.seconds": "\(writtenSeconds)"]
                )
                return .stopped
            }
        }
        return .completed
    }

    /// Stops a paced `play` in progress; nothing is written after the chunk being heard.
    package func stop() {
        generation &+= 1
        gain = PlaybackGain()
    }

    package func setGain(_ target: Float) {
        gain.target = target
    }

    /// Closes the file (its header is already final). Idempotent; later plays throw.
    package func close() {
        try? handle?.close()
        handle = nil
    }

    private func append(_ given: ArraySlice<Int16>) throws {
        guard let handle else { throw WAVError.unwritable(path: path, reason: "the sink is closed") }
        if given.isEmpty { return }
        let samples = gain.isUnity ? Array(given) : gain.apply(given, sampleRate: sampleRate).samples
        let body = samples.map(\.littleEndian).withUnsafeBytes { Data($0) }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: body)
            dataBytes += body.count
            // RIFF size at byte 4, data size at byte 40: the canonical 44-byte header written in init.
            try handle.seek(toOffset: 4)
            try handle.write(contentsOf: Self.le32(36 + dataBytes))
            try handle.seek(toOffset: 40)
            try handle.write(contentsOf: Self.le32(dataBytes))
        } catch {
            throw WAVError.unwritable(path: path, reason: (error as NSError).localizedDescription)
        }
    }

    private static func le32(_ value: Int) -> Data {
        Data((0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) })
    }
}
