import Foundation
import TalkTestSupport
import Glibc
import Synchronization
import Testing
import TalkLogging
@testable import TalkService

@Suite struct StatusTests {
    private func publisher(_ clock: ManualClock, file: StatusFile? = nil, beats: Counter = Counter())
        -> StatusPublisher {
        var hooks = StatusPublisher.Hooks()
        hooks.alive = { beats.bump() }
        return StatusPublisher(now: clock.closure, file: file, hooks: hooks,
                               logger: Logger(label: "test", handler: InMemoryLogHandler()))
    }

    @Test func theHeartbeatRenewsTheStaleDateWhileTalkIsActive() async throws {
        let clock = ManualClock()
        let beats = Counter()
        let p = publisher(clock, beats: beats)
        var s = SessionSnapshot()
        s.connection = .connected
        await p.update(s)
        #expect(await p.current.staleAt == nil)

        s.talkActive = true
        s.voice = .listening
        await p.update(s)
        let start = clock.now
        #expect(await p.current.heartbeatAt == start)
        #expect(await p.current.staleAt == start + 300)
        await p.beaconSent()
        #expect(beats.count == 1)

        clock.advance(239)
        await p.tick()
        #expect(await p.current.staleAt == start + 300)
        clock.advance(1)
        await p.tick()
        #expect(await p.current.staleAt == start + 540)
        #expect(await p.current.stale == false)
        await p.beaconSent()
        #expect(beats.count == 2)

        // A daemon that stops beating (suspended, hung) goes stale once staleAt passes.
        clock.advance(301)
        #expect(await p.current.stale == true)

        s.talkActive = false
        await p.update(s)
        #expect(await p.current.staleAt == nil)
        #expect(await p.current.state == "idle")
    }

    @Test func reconnectingCarriesItsOwnShorterStaleDateClearedWhenConnected() async throws {
        let clock = ManualClock()
        let p = publisher(clock)
        var s = SessionSnapshot()
        s.connection = .reconnecting
        s.nextRetryAt = clock.now + 4
        await p.update(s)
        let entered = clock.now
        var status = await p.current
        #expect(status.state == "reconnecting")
        #expect(status.staleAt == entered + 120)
        #expect(status.gateway.staleAt == entered + 120)
        #expect(status.gateway.nextRetryAt == entered + 4)

        // Still reconnecting later: the date is the one set on entering, not renewed by each update.
        clock.advance(60)
        await p.update(s)
        #expect(await p.current.staleAt == entered + 120)
        clock.advance(61)
        #expect(await p.current.stale == true)

        s.connection = .connected
        await p.update(s)
        status = await p.current
        #expect(status.gateway.staleAt == nil)
        #expect(status.staleAt == nil)
        #expect(status.gateway.connected)
    }

    @Test func theMostUrgentThingWins() {
        var s = SessionSnapshot()
        s.connection = .connecting
        #expect(StatusArbiter.shown(s) == .connection)
        s.talkActive = true
        #expect(StatusArbiter.shown(s) == .voice)
        s.runningTool = "web.search"
        #expect(StatusArbiter.shown(s) == .tool)
        s.attention = "approve exec"
        #expect(StatusArbiter.shown(s) == .attention)
        #expect(StatusArbiter.shown(s).word(s) == "approve exec")
    }

    @Test func aReaderReportsStaleAndDeadDaemons() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var s = ServiceStatus(
            state: "listening", talk: .init(active: true), gateway: .init(connected: true, state: "connected"),
            audio: .init(), pid: getpid(), heartbeatAt: now - 100, staleAt: now + 200, stale: false)
        #expect(StatusReading.evaluate(s, now: now) == .live(s))
        let later = now + 201
        guard case .stale(let stale) = StatusReading.evaluate(s, now: later) else { Issue.record("not stale"); return }
        #expect(stale.stale)
        #expect(StatusReading.evaluate(s, now: later).waybarLine.contains("\"class\":\"stale\""))

        s.pid = 999_999_999
        let dead = StatusReading.evaluate(s, now: now)
        guard case .notRunning = dead else { Issue.record("dead pid reported running"); return }
        #expect(dead.summary == "not running (stale status from \((now - 100).formatted(.iso8601)))")
        let bar = try JSONDecoder().decode([String: String].self, from: Data(dead.waybarLine.utf8))
        #expect(bar["class"] == "stopped")
        #expect(bar.keys.sorted() == ["class", "text", "tooltip"])
        #expect(!dead.waybarLine.contains("\n"))
    }

    @Test func statusJSONHasEveryKeyWithISOTimesAndNoSecrets() async throws {
        let clock = ManualClock()
        let p = publisher(clock)
        var s = SessionSnapshot()
        s.gatewayURL = "wss://me:SECRET-PASS@gw.example:18789/ws?token=SECRET-TOKEN#SECRET-FRAG"
        s.connection = .connected
        s.talkActive = true
        await p.update(s)
        let text = String(decoding: try await p.current.jsonData(), as: UTF8.self)
        #expect(!text.contains("SECRET"))
        #expect(text.contains("\"url\":\"wss://gw.example:18789/ws\""))
        let value = try JSONDecoder().decode(ControlJSON.self, from: Data(text.utf8))
        for key in ["state", "talk", "gateway", "audio", "pid", "heartbeatAt", "staleAt", "stale", "lastTranscript",
                    "lastReply", "error"] { #expect(value[key] != nil, "missing \(key)") }
        #expect(value["audio"]?["uplink"] == .null)
        #expect(value["gateway"]?.objectValue?.keys.sorted()
                == ["connected", "nextRetryAt", "protocol", "staleAt", "state", "url", "version"])
        #expect(value["heartbeatAt"] == .string("2027-01-15T08:00:00Z"))
    }

    /// A reader parsing status.json as fast as it can while it is rewritten never sees a torn file. The reader
    /// must have raced the writer: it counts the versions it saw (each update names its number), and the
    /// writer goes on until it saw `racedVersions` of them, so a reader that only ran after the last write
    /// (or a file never rewritten) fails the test instead of passing it with one clean read.
    @Test func theStatusFileIsValidJSONAtEveryInstant() async throws {
        let racedVersions = 200
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let file = StatusFile(path: folder.paths.statusPath)
        let clock = ManualClock()
        let p = publisher(clock, file: file)
        await p.update(SessionSnapshot())
        let done = Mutex(false)
        let versionsSeen = Mutex(0)
        let reader = Task {
            try await offPool { () -> (reads: Int, torn: Int) in
                var reads = 0, torn = 0
                var last: String?
                while !done.withLock({ $0 }) {
                    reads += 1
                    guard let status = try? file.read() else {
                        torn += 1
                        continue
                    }
                    if status.lastTranscript != last {
                        last = status.lastTranscript
                        versionsSeen.withLock { $0 += 1 }
                    }
                }
                return (reads, torn)
            }
        }
        var s = SessionSnapshot()
        var updates = 0
        // Bounded only so a reader that never runs ends the test (as a failure) instead of hanging it.
        while versionsSeen.withLock({ $0 }) < racedVersions && updates < 200_000 {
            updates += 1
            s.lastTranscript = "update \(updates) " + String(repeating: "word ", count: updates % 50)
            s.talkActive = updates % 7 != 0
            clock.advance(1)
            await p.update(s)
        }
        done.withLock { $0 = true }
        let result = try await reader.value
        #expect(result.torn == 0, "\(result.torn) of \(result.reads) reads were torn")
        #expect(versionsSeen.withLock { $0 } >= racedVersions, "the reader saw \(versionsSeen.withLock { $0 }) versions in \(updates) updates")
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}
