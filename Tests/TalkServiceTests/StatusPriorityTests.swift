import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import TalkService

/// "approval needed" is the most urgent thing the status can say, as the iOS Live Activity shows attention over a
/// running tool, voice and the connection: whatever else the session is doing, a waiting approval is what `status`
/// (and a bar reading it) shows.
@Suite struct StatusPriorityTests {
    /// A session state and the word the status shows for it while nothing needs the user.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var word: String
        var snapshot: SessionSnapshot
        var testDescription: String { name }
    }

    static func row(_ name: String, _ word: String, _ change: (inout SessionSnapshot) -> Void) -> Row {
        var s = SessionSnapshot()
        change(&s)
        return Row(name: name, word: word, snapshot: s)
    }

    static let rows: [Row] = [
        row("disconnected", "disconnected") { $0.connection = .disconnected },
        row("connecting", "connecting") { $0.connection = .connecting },
        row("reconnecting with a retry due", "reconnecting") { $0.connection = .reconnecting; $0.nextRetryAt = Date(timeIntervalSince1970: 1_800_000_004) },
        row("connected and idle", "idle") { $0.connection = .connected },
        row("connected with an error", "idle") { $0.connection = .connected; $0.error = "microphone lost" },
        row("Talk active, listening", "listening") { $0.connection = .connected; $0.talkActive = true; $0.voice = .listening },
        row("Talk active, thinking", "thinking") { $0.connection = .connected; $0.talkActive = true; $0.voice = .thinking },
        row("Talk active, speaking", "speaking") { $0.connection = .connected; $0.talkActive = true; $0.voice = .speaking },
        row("Talk active, paused", "paused") { $0.connection = .connected; $0.talkActive = true; $0.voice = .paused },
        row("Talk active with no phase yet", "active") { $0.connection = .connected; $0.talkActive = true },
        row("Talk active while reconnecting", "listening") { $0.connection = .reconnecting; $0.talkActive = true; $0.voice = .listening },
        row("a tool running", "toolRunning") { $0.connection = .connected; $0.runningTool = "web.search" },
        row("a tool running while speaking", "toolRunning") {
            $0.connection = .connected; $0.talkActive = true; $0.voice = .speaking; $0.runningTool = "exec"
        },
        row("a tool running while disconnected", "toolRunning") { $0.connection = .disconnected; $0.runningTool = "exec" },
    ]

    static func publisher() -> StatusPublisher {
        let clock = ManualClock()
        return StatusPublisher(now: clock.closure, file: nil, hooks: StatusPublisher.Hooks(),
                               logger: Logger(label: "test", handler: InMemoryLogHandler()))
    }

    @Test(arguments: rows)
    func `approval needed is shown over every other state`(_ row: Row) async {
        let p = Self.publisher()
        await p.update(row.snapshot)
        #expect(await p.current.state == row.word, "the row's own word")
        var waiting = row.snapshot
        waiting.attention = "approval needed"
        await p.update(waiting)
        #expect(await p.current.state == "approval needed")
        // Answered: the state underneath comes back.
        await p.update(row.snapshot)
        #expect(await p.current.state == row.word)
    }
}
