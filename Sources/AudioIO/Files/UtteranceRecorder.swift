import Foundation
import TalkLogging

/// Records each utterance to its own Ogg Opus file in one directory (`--record-dir DIR`), 16 kHz mono at
/// the project's speech settings: `begin`, `append` every frame of the utterance, `finish` for the URL.
/// The directory is created (0700) if missing; each file is 0600. A file is complete (and playable) once `finish` returns.
package actor UtteranceRecorder {
    package let directory: URL
    private let settings: OggOpusWriter.Settings
    private let now: @Sendable () -> Date
    private let logger: Logger
    private var current: (url: URL, writer: OggOpusWriter)?
    private var count = 0

    /// - Throws: `OpusError.recordingDirectory` when the directory cannot be created.
    package init(
        directory: URL,
        settings: OggOpusWriter.Settings = .init(),
        now: @escaping @Sendable () -> Date = Date.init,
        logger: Logger
    ) throws {
        do {
            // A folder made here is owner-only, as each recording in it is (`PrivateFile`); one that exists is the user's.
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw OpusError.recordingDirectory(path: directory.path, reason: (error as NSError).localizedDescription)
        }
        guard FileManager.default.isWritableFile(atPath: directory.path) else {
            throw OpusError.recordingDirectory(path: directory.path, reason: "it is not writable")
        }
        self.directory = directory
        self.settings = settings
        self.now = now
        self.logger = logger
    }

    /// Whether an utterance is being recorded.
    package var isRecording: Bool { current != nil }

    /// Starts a new file, named `name` (made safe for a file name) or after the UTC time and a counter.
    /// An utterance still open is finished first. Returns where the file will be.
    @discardableResult
    package func begin(name: String? = nil) throws -> URL {
        if current != nil { _ = try finish() }
        count += 1
        let base = name.map(Self.safeFileName) ?? "utterance-\(Self.timestamp(now()))-\(String(format: "%04d", count))"
        var url = directory.appendingPathComponent(base + ".opus")
        var suffix = 2
        while FileManager.default.fileExists(atPath: url.path) {
            url = directory.appendingPathComponent("\(base)-\(suffix).opus")
            suffix += 1
        }
        let writer = try OggOpusWriter(to: .file(path: url.path), sampleRate: AudioFrame.sampleRate, settings: settings)
        current = (url, writer)
        return url
    }

    /// Adds a captured frame to the open utterance; ignored when none is open.
    package func append(_ frame: AudioFrame) throws {
        try current?.writer.write(frame.samples)
    }

    /// Closes the open utterance's file and returns its URL; nil when none was open.
    package func finish() throws -> URL? {
        guard let (url, writer) = current else { return nil }
        current = nil
        try writer.finish()
        logger.debug(
            "Recorded utterance",
            metadata: ["audio.file": "\(url.path)", "audio.seconds": "\(writer.durationSeconds)"]
        )
        return url
    }

    /// Drops the open utterance and deletes its file.
    package func cancel() {
        guard let (url, writer) = current else { return }
        current = nil
        try? writer.finish()
        try? FileManager.default.removeItem(at: url)
    }

    static func safeFileName(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        var cleaned = String(name.map { allowed.contains($0) ? $0 : "_" }.prefix(100))
        if cleaned.hasSuffix(".opus") { cleaned.removeLast(5) }
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return cleaned.isEmpty ? "utterance" : cleaned
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        return formatter.string(from: date)
    }
}
