import Foundation
import Glibc
import Synchronization

/// One log line, as handed to a `LogHandler`.
package struct LogEvent: Sendable {
    package var level: Logger.Level
    package var message: Logger.Message
    package var metadata: Logger.Metadata
    package var label: String
    package var source: String
    package var file: String
    package var function: String
    package var line: UInt

    package init(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata, label: String, source: String,
                 file: String, function: String, line: UInt) {
        self.level = level
        self.message = message
        self.metadata = metadata
        self.label = label
        self.source = source
        self.file = file
        self.function = function
        self.line = line
    }
}

/// Where log lines go. A value type: a copied logger given another level leaves the original alone.
package protocol LogHandler: Sendable {
    var logLevel: Logger.Level { get set }
    var metadata: Logger.Metadata { get set }
    func log(event: LogEvent)
}

/// Installs the handler factory once, at start-up; every `Logger(label:)` made afterwards uses it.
package enum LoggingSystem {
    private static let factory = Mutex<@Sendable (String) -> any LogHandler>({ StreamLogHandler.standardError(label: $0) })

    package static func bootstrap(_ make: @escaping @Sendable (String) -> any LogHandler) {
        factory.withLock { $0 = make }
    }

    static func makeHandler(_ label: String) -> any LogHandler { factory.withLock { $0 }(label) }
}

/// swift-log's stream handler line: `timestamp level label: metadata [source] message`, to stderr so that
/// stdout carries command results only (and journald gets the logs).
package struct StreamLogHandler: LogHandler {
    private static let writeLock = Mutex(())
    /// The console shows notices and above unless `OPENCLAW_TALK_LOG_LEVEL` (trace ... critical) says otherwise:
    /// libraries log routine events at info, which belongs in a daemon's journal, not in a command's output.
    package static let defaultLevel: Logger.Level =
        ProcessInfo.processInfo.environment["OPENCLAW_TALK_LOG_LEVEL"].flatMap(Logger.Level.init(caseInsensitive:)) ?? .notice
    package var logLevel: Logger.Level = StreamLogHandler.defaultLevel
    /// A message or metadata value longer than this many UTF-8 bytes is cut with "…": one line stays readable and
    /// a peer's megabytes do not fill the journal.
    package static let maxLineBytes = 16 * 1024
    package var metadata: Logger.Metadata = [:]
    private let label: String

    package init(label: String) { self.label = label }

    package static func standardError(label: String) -> StreamLogHandler { StreamLogHandler(label: label) }

    /// Under systemd stderr goes to the journal, which reads a `<N>` sd-daemon(3) priority at the start of a line.
    package static let journalPrefixes: Bool = {
        let env = ProcessInfo.processInfo.environment
        return env["JOURNAL_STREAM"] != nil || env["INVOCATION_ID"] != nil
    }()

    package func log(event: LogEvent) {
        let line = Self.line(for: event, label: label, timestamp: Self.timestamp(), journal: Self.journalPrefixes)
        Self.writeLock.withLock { _ in StandardStream.write(line, to: STDERR_FILENO) }
    }

    /// The line written for `event`, its newline included: every message and metadata value neutralised
    /// (`LogText`) here, in the handler, so no caller can forget it for text a peer chose.
    package static func line(for event: LogEvent, label: String, timestamp: String, journal: Bool) -> String {
        func safe(_ text: String) -> String {
            LogText.isClean(text, limit: maxLineBytes) ? text : LogText.neutralized(text, limit: maxLineBytes)
        }
        let meta = event.metadata.isEmpty ? "" : " " + event.metadata.sorted { $0.key < $1.key }
            .map { "\(safe($0.key))=\(safe($0.value.description))" }.joined(separator: " ")
        let prefix = journal ? "<\(event.level.syslogPriority)>" : ""
        let line = "\(timestamp) \(event.level.rawValue) \(label):\(meta) [\(event.source)] \(safe(event.message.description))"
        // The whole line within the bound too, however many metadata values it has.
        return prefix + (line.utf8.count <= maxLineBytes + 64 ? line : LogText.neutralized(line, limit: maxLineBytes)) + "\n"
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var tmv = tm()
        var secs = now.tv_sec
        gmtime_r(&secs, &tmv)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday,
                      tmv.tm_hour, tmv.tm_min, tmv.tm_sec, Int(now.tv_nsec / 1_000_000))
    }
}

/// Keeps lines in memory so tests can assert what was (and was not) logged.
package struct InMemoryLogHandler: LogHandler {
    package final class Store: Sendable {
        private let lines = Mutex<[LogEvent]>([])
        package init() {}
        package func append(_ e: LogEvent) { lines.withLock { $0.append(e) } }
        package var events: [LogEvent] { lines.withLock { $0 } }
        package var text: String {
            events.map { e in "\(e.level.rawValue) \(e.message) \(e.metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))" }
                .joined(separator: "\n")
        }
    }

    package var logLevel: Logger.Level = .trace
    package var metadata: Logger.Metadata = [:]
    package let store: Store

    package init(store: Store = Store()) { self.store = store }
    package func log(event: LogEvent) { store.append(event) }
}

extension Logger.Level {
    /// syslog's priority for the level (sd-daemon's `<N>` prefix): debug 7 ... critical 2.
    package var syslogPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

/// Writes to stdout or stderr without ever taking the process down: a terminal that went away answers EIO, a
/// closed pipe EPIPE (SIGPIPE is ignored), and FileHandle's `write` traps on both. A failed write is dropped.
package enum StandardStream {
    package static func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}
