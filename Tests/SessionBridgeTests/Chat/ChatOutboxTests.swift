import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

struct ChatOutboxTests {
    static func entry(_ key: String, at ms: Int64) -> ChatOutbox.Entry {
        ChatOutbox.Entry(idempotencyKey: key, sessionKey: nil, message: "say \(key)", createdAtMs: ms)
    }

    @Test func `a queued transcript survives a new outbox on the same file, which is owner-only`() async throws {
        let root = try TempDir()
        let file = ChatOutbox.file(in: StoragePaths.under(root.path))
        let first = ChatOutbox(file: file, logger: Logger(label: "t", handler: InMemoryLogHandler()))
        #expect(await first.add(Self.entry("k1", at: ChatOutbox.wallClockMs())).isEmpty)
        await first.setSessionKey("agent:main:main", for: "k1")
        let second = ChatOutbox(file: file, logger: Logger(label: "t", handler: InMemoryLogHandler()))
        let live = await second.live().entries
        #expect(live.map(\.idempotencyKey) == ["k1"])
        #expect(live.first?.sessionKey == "agent:main:main")
        var st = stat()
        stat(file, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        stat((file as NSString).deletingLastPathComponent, &st)
        #expect(st.st_mode & 0o777 == 0o700)
        await second.remove("k1")
        #expect(await ChatOutbox(file: file, logger: Logger(label: "t", handler: InMemoryLogHandler())).count == 0)
    }

    @Test func `beyond the limit the oldest transcript is dropped with a warning`() async {
        let logs = InMemoryLogHandler.Store()
        var limits = ChatOutbox.Limits()
        limits.maxEntries = 2
        let outbox = ChatOutbox(file: nil, limits: limits, logger: Logger(label: "t", handler: InMemoryLogHandler(store: logs)))
        #expect(await outbox.add(Self.entry("a", at: 1)).isEmpty)
        #expect(await outbox.add(Self.entry("b", at: 2)).isEmpty)
        #expect(await outbox.add(Self.entry("c", at: 3)) == ["a"])
        #expect(logs.events.contains { $0.level == .warning && "\($0.message)".contains("full") })
    }

    @Test func `transcripts older than the maximum age are dropped, not sent`() async {
        let now = Mutex<Int64>(1_000_000)
        var limits = ChatOutbox.Limits()
        limits.maxAge = .seconds(60)
        let logs = InMemoryLogHandler.Store()
        let outbox = ChatOutbox(file: nil, limits: limits, nowMs: { now.withLock { $0 } },
                                logger: Logger(label: "t", handler: InMemoryLogHandler(store: logs)))
        _ = await outbox.add(Self.entry("old", at: 1_000_000 - 61_000))
        _ = await outbox.add(Self.entry("fresh", at: 1_000_000 - 1_000))
        let live = await outbox.live()
        #expect(live.entries.map(\.idempotencyKey) == ["fresh"])
        #expect(live.expired == ["old"])
        #expect(logs.events.contains { $0.level == .warning && "\($0.message)".contains("too long") })
    }

    @Test func `a damaged outbox file is logged and replaced, not fatal`() async throws {
        let root = try TempDir()
        let file = root.path + "/chat-outbox.json"
        try SecureStore.writeFile(file, Array("{not json".utf8))
        let logs = InMemoryLogHandler.Store()
        let outbox = ChatOutbox(file: file, logger: Logger(label: "t", handler: InMemoryLogHandler(store: logs)))
        #expect(await outbox.count == 0)
        #expect(logs.events.contains { $0.level == .error })
        _ = await outbox.add(Self.entry("k", at: ChatOutbox.wallClockMs()))
        #expect(await ChatOutbox(file: file, logger: Logger(label: "t", handler: InMemoryLogHandler())).count == 1)
    }
}

/// What a damaged file, a large turn or a forged date does to the outbox.
struct ChatOutboxEdgeTests {
    static func logger(_ store: InMemoryLogHandler.Store = .init()) -> Logger { Logger(label: "t", handler: InMemoryLogHandler(store: store)) }

    @Test func `a damaged or refused file is kept beside as .corrupt, and the log says where`() async throws {
        for (name, make) in [("damaged", { (file: String) in try SecureStore.writeFile(file, Array("{not json".utf8)) }),
                             ("readable by others", { (file: String) in
                                 try SecureStore.writeFile(file, Array("[]".utf8))
                                 chmod(file, 0o644)
                             })] as [(String, (String) throws -> Void)] {
            let root = try TempDir()
            let file = root.path + "/chat-outbox.json"
            try make(file)
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            let logs = InMemoryLogHandler.Store()
            let outbox = ChatOutbox(file: file, logger: Self.logger(logs))
            _ = await outbox.add(ChatOutboxTests.entry("k", at: ChatOutbox.wallClockMs()))
            let kept = try? Data(contentsOf: URL(fileURLWithPath: file + ".corrupt"))
            #expect(kept == before, "\(name): the original was not kept")
            #expect(logs.text.contains(file + ".corrupt"), "\(name): \(logs.text)")
            #expect(await ChatOutbox(file: file, logger: Self.logger()).count == 1, "\(name)")
        }
    }

    @Test func `the file never grows past what a read accepts, and the newest transcripts are kept`() async throws {
        let root = try TempDir()
        let file = root.path + "/chat-outbox.json"
        let outbox = ChatOutbox(file: file, logger: Self.logger())
        let big = String(repeating: "words ", count: 20_000)  // 120 kB: 16 of these are 1.9 MB
        var dropped: [String] = []
        for i in 0..<16 {
            dropped += await outbox.add(ChatOutbox.Entry(idempotencyKey: "k\(i)", sessionKey: nil, message: big,
                                                         createdAtMs: ChatOutbox.wallClockMs()))
        }
        var info = stat()
        #expect(stat(file, &info) == 0 && Int(info.st_size) <= ChatOutbox.Limits().maxFileBytes, "\(info.st_size) bytes")
        let reread = await ChatOutbox(file: file, logger: Self.logger()).live().entries.map(\.idempotencyKey)
        #expect(!reread.isEmpty && reread.last == "k15", "\(reread)")
        #expect(Set(dropped).isDisjoint(with: reread))
        #expect(await outbox.live().entries.map(\.idempotencyKey) == reread, "what is kept in memory is what a restart finds")
    }

    @Test func `forged dates neither trap nor live forever`() async throws {
        let now = Mutex<Int64>(1_800_000_000_000)
        var limits = ChatOutbox.Limits()
        limits.maxAge = .seconds(60)
        let outbox = ChatOutbox(file: nil, limits: limits, nowMs: { now.withLock { $0 } }, logger: Self.logger())
        _ = await outbox.add(ChatOutboxTests.entry("ancient", at: Int64.min))
        _ = await outbox.add(ChatOutboxTests.entry("future", at: Int64.max))
        _ = await outbox.add(ChatOutboxTests.entry("fresh", at: 1_800_000_000_000))
        #expect(await outbox.live().expired == ["ancient"])
        now.withLock { $0 += 61_000 }
        #expect(Set(await outbox.live().expired) == ["future", "fresh"], "a date in the future expires like one made now")
        #expect(await outbox.count == 0)
    }
}
