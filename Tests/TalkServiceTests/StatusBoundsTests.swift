import Foundation
import Glibc
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing
@testable import TalkService

/// What the daemon publishes is bounded whatever a Gateway or agent sends, and a bar can show it as it is.
@Suite struct StatusBoundsTests {
    static let logger = Logger(label: "test", handler: InMemoryLogHandler())

    @Test func `a huge transcript, reply or error is shortened in status.json and on the socket`() async throws {
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let published = Mutex<[ServiceStatus]>([])
        var hooks = StatusPublisher.Hooks()
        hooks.publish = { s in published.withLock { $0.append(s) } }
        let status = StatusPublisher(file: StatusFile(path: folder.paths.statusPath), hooks: hooks, logger: Self.logger)
        var s = SessionSnapshot()
        // A realtime transcript grew to 25 MiB; 1 MiB a field is enough to show it (and spares the CPU of the tests
        // running beside this one: at 25 MiB, status.json's encoding alone crashed the test runner before the fix).
        let huge = String(repeating: "blah ", count: 1 << 18)
        s.lastTranscript = huge
        s.lastReply = huge
        s.error = huge
        s.serverVersion = huge
        s.runningTool = huge
        s.attention = huge
        s.audioSource = huge
        await status.update(s)
        var info = stat()
        #expect(stat(folder.paths.statusPath, &info) == 0 && info.st_size < 16 * 1024, "status.json is \(info.st_size) bytes")
        let last = try #require(published.withLock { $0.last })
        let line = ControlService.statusEvent(last).line()
        #expect(line.count < 16 * 1024, "a status event of \(line.count) bytes")
        #expect(last.lastReply?.hasSuffix("…") == true)
    }

    @Test func `an event line over the subscriber limit does not disconnect the subscribers`() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let subscribed = Mutex(false)
        let follower = Task {
            try await offPool { () -> [ControlJSON] in
                let client = try ControlClient(path: path)
                guard case .success = try client.call("events").outcome else { throw ControlClientError.badReply("events") }
                subscribed.withLock { $0 = true }
                var lines: [ControlJSON] = []
                while !lines.contains(where: { $0["event"] == .string("after") }) { lines.append(try client.readJSONLine()) }
                return lines
            }
        }
        while !subscribed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
        h.session.emit(SessionEvent(kind: "transcript", detail: ["text": String(repeating: "x", count: 2 << 20)]))
        h.session.emit(SessionEvent(kind: "after"))
        let lines = try await follower.value
        let transcript = try #require(lines.first { $0["event"] == .string("transcript") })
        #expect((transcript["text"]?.stringValue?.count ?? 0) < 16 * 1024)
    }

    @Test func `the waybar tooltip is Pango markup with what the agent said escaped`() throws {
        var status = ServiceStatus(state: "speaking", talk: .init(active: true), gateway: .init(connected: true, state: "connected"),
                                   audio: .init(), pid: getpid(), stale: false)
        status.lastTranscript = "is 3 < 4 & 5 > 2?"
        status.lastReply = "<span foreground='red' size='90000'>PWNED</span> &amp; <b>bold</b>"
        status.error = "it's \"quoted\""
        let line = StatusReading.live(status).waybarLine
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        let tooltip = try #require(json["tooltip"])
        #expect(!tooltip.contains("<") && !tooltip.contains(">"), "\(tooltip)")
        #expect(tooltip.contains("3 &lt; 4 &amp; 5 &gt; 2?"))
        #expect(tooltip.contains("&lt;span foreground=&apos;red&apos;"))
        #expect(tooltip.contains("&amp;amp;"))
        #expect(tooltip.contains("it&apos;s &quot;quoted&quot;"))
        #expect(json["text"] == "Talk speaking")
    }

    /// `talk start` answers once the session started, not after the presence beacon (a network round trip of up to
    /// 15 s, while the CLI waits 10).
    @Test func `talk start is answered while the presence beacon is still on its way`() async throws {
        let release = AsyncStream<Void>.makeStream()
        let beaconStarted = AsyncStream<Void>.makeStream()
        let releasedByTimeout = Atomic<Bool>(false)
        var hooks = StatusPublisher.Hooks()
        hooks.alive = {
            beaconStarted.continuation.yield()
            for await _ in release.stream {}
        }
        let status = StatusPublisher(file: nil, hooks: hooks, logger: Self.logger)
        let session = FakeSession()
        await session.set { $0.connection = .connected }
        let service = ControlService(session: session, status: status, onStop: {})
        // Without an answer in 10 s, the beacon is let go so the test ends (and fails) rather than hangs.
        let timeout = Task {
            try? await Task.sleep(for: .seconds(10))
            if !Task.isCancelled { releasedByTimeout.store(true, ordering: .releasing) }
            release.continuation.finish()
        }
        let reply = await service.handle(ControlRequest(id: .number(1), cmd: "talk.start", args: [:]))
        let timedOut = releasedByTimeout.load(ordering: .acquiring)
        #expect(!timedOut, "talk.start waited for the presence beacon")
        var beacons = beaconStarted.stream.makeAsyncIterator()
        _ = await beacons.next()
        timeout.cancel()
        release.continuation.finish()
        guard case .respond(let response) = reply else { Issue.record("\(reply)"); return }
        #expect(response.outcome == .success(.null))
        #expect(await status.current.talk.active)
    }
}
