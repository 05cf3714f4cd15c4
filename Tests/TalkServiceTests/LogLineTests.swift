import Foundation
import TalkLogging
import Testing

/// Text a Gateway or an agent chose reaches the log in messages and metadata values; the handler itself writes
/// control characters out, so no line can be split, start a journal record of its own or drive a terminal.
@Suite struct LogLineTests {
    static func line(_ message: Logger.Message, metadata: Logger.Metadata = [:], journal: Bool = true) -> String {
        let event = LogEvent(level: .warning, message: message, metadata: metadata, label: "openclaw-talk", source: "Test",
                             file: "Test/x.swift", function: "f", line: 1)
        return StreamLogHandler.line(for: event, label: "openclaw-talk", timestamp: "2025-01-01T00:00:00.000Z", journal: journal)
    }

    @Test func `a reply cannot start a journal record of its own or send a terminal escape`() {
        let hostile = "fine\n<0>EMERGENCY: the disk is on fire\r\u{1B}[2J\u{1B}]0;owned\u{07}\u{9B}31m\u{202E}txt.exe\u{0}"
        for text in [Self.line("reply: \(hostile)"), Self.line("speech failed", metadata: ["error": "\(hostile)", "talk.voice": "\(hostile)"])] {
            // One line, ended by the one newline the handler adds, starting with our own priority.
            #expect(text.hasPrefix("<4>"))
            #expect(text.filter { $0 == "\n" }.count == 1 && text.hasSuffix("\n"), "\(text.debugDescription)")
            let body = text.dropLast()
            let unsafe = body.unicodeScalars.filter {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.generalCategory == .format
            }
            #expect(unsafe.isEmpty, "control characters left: \(unsafe.map { String($0.value, radix: 16) })")
            // Written out, so the line still says what came.
            #expect(body.contains("\\n<0>EMERGENCY") && body.contains("\\u{1B}[2J"))
        }
    }

    @Test func `ordinary text is left as it was`() {
        let text = Self.line("said “héllo wörld” — 100 % ok ✓", metadata: ["path": "/tmp/a b/c.wav"], journal: false)
        #expect(text == "2025-01-01T00:00:00.000Z warning openclaw-talk: path=/tmp/a b/c.wav [Test] said “héllo wörld” — 100 % ok ✓\n")
    }

    @Test func `a line has a bounded length whatever it is given`() {
        let text = Self.line("\(String(repeating: "x", count: 1_000_000))", metadata: ["error": "\(String(repeating: "y", count: 1_000_000))"])
        #expect(text.utf8.count <= StreamLogHandler.maxLineBytes + 64, "\(text.utf8.count) bytes")
        #expect(text.hasSuffix("…\n"))
    }
}
