import Foundation

/// A logger with swift-log's shape (label, level, metadata, one method per level), small enough to own.
/// Components receive a `Logger` in `init` and never create one; messages are autoclosures, so a
/// filtered-out line costs nothing. Never log tokens, private keys or setup codes.
package struct Logger: Sendable {
    package let label: String
    package var handler: any LogHandler

    package init(label: String) {
        self.label = label
        self.handler = LoggingSystem.makeHandler(label)
    }

    package init(label: String, handler: any LogHandler) {
        self.label = label
        self.handler = handler
    }

    package var logLevel: Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    package subscript(metadataKey key: String) -> MetadataValue? {
        get { handler.metadata[key] }
        set { handler.metadata[key] = newValue }
    }

    package func log(
        level: Level, _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard level >= handler.logLevel else { return }
        let source = file.split(separator: "/").first.map(String.init) ?? ""
        handler.log(
            event: LogEvent(
                level: level, message: message(), metadata: handler.metadata.merging(metadata() ?? [:]) { $1 },
                label: label, source: source, file: file, function: function, line: line))
    }

    package func trace(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                       file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .trace, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func debug(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                       file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .debug, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func info(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                      file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .info, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func notice(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                        file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .notice, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func warning(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                         file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .warning, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func error(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                       file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .error, m(), metadata: metadata(), file: file, function: function, line: line)
    }
    package func critical(_ m: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
                          file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(level: .critical, m(), metadata: metadata(), file: file, function: function, line: line)
    }
}

extension Logger {
    package enum Level: String, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        package init?(caseInsensitive text: String) { self.init(rawValue: text.lowercased()) }

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        package static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    package struct Message: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
        package let description: String
        package init(stringLiteral value: String) { description = value }
        package init(stringInterpolation: DefaultStringInterpolation) { description = String(stringInterpolation: stringInterpolation) }
    }

    package typealias Metadata = [String: MetadataValue]

    package enum MetadataValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral
    {
        case string(String)
        case array([MetadataValue])

        package init(stringLiteral value: String) { self = .string(value) }
        package init(integerLiteral value: Int) { self = .string(String(value)) }
        package init(stringInterpolation: DefaultStringInterpolation) { self = .string(String(stringInterpolation: stringInterpolation)) }

        package var description: String {
            switch self {
            case .string(let s): return s
            case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
            }
        }
    }
}
