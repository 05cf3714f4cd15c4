import Foundation
import TalkLogging

/// Transcripts not yet acknowledged by the Gateway, with their idempotency keys: in memory and in a small
/// owner-only file (`chat-outbox.json`, 0600 in the 0700 state folder) so a daemon restart re-sends
/// them with the same key instead of losing them. Bounded in count and in age: a transcript is a
/// spoken request, and one answered hours later would surprise the user more than one lost.
package actor ChatOutbox {
    /// One waiting transcript.
    package struct Entry: Sendable, Equatable, Codable {
        package var idempotencyKey: String
        /// Resolved at the first send and kept, so a resend goes to the same session.
        package var sessionKey: String?
        package var message: String
        /// Wall-clock milliseconds when the transcript was queued.
        package var createdAtMs: Int64

        package init(idempotencyKey: String, sessionKey: String?, message: String, createdAtMs: Int64) {
            self.idempotencyKey = idempotencyKey
            self.sessionKey = sessionKey
            self.message = message
            self.createdAtMs = createdAtMs
        }
    }

    /// Bounds of the outbox.
    package struct Limits: Sendable {
        /// Entries beyond this many drop the oldest.
        package var maxEntries = 16
        /// Entries older than this are dropped, not sent.
        package var maxAge: Duration = .seconds(300)
        package init() {}
    }

    /// Entries dropped by `add` or `live`, for their replies to end.
    package struct Dropped: Sendable, Equatable {
        package var full: [String] = []
        package var expired: [String] = []
    }

    private let file: String?
    private let limits: Limits
    private let nowMs: @Sendable () -> Int64
    private let logger: Logger
    private var entries: [Entry] = []

    /// Loads `file` when it exists (nil keeps the outbox in memory). A damaged file is logged and
    /// replaced: losing a queued transcript is better than never starting.
    package init(file: String?, limits: Limits = Limits(), nowMs: @escaping @Sendable () -> Int64 = ChatOutbox.wallClockMs, logger: Logger) {
        self.file = file
        self.limits = limits
        self.nowMs = nowMs
        self.logger = logger
        guard let file else { return }
        do {
            if let bytes = try SecureStore.readPrivateFile(file) {
                entries = try JSONDecoder().decode([Entry].self, from: Data(bytes))
            }
        } catch {
            logger.error("the chat outbox could not be read; starting empty", metadata: ["file": "\(file)", "error": "\(error)"])
        }
    }

    /// `<state folder>/chat-outbox.json`.
    package static func file(in paths: StoragePaths) -> String { paths.stateDirectory + "/chat-outbox.json" }

    package static let wallClockMs: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Queues `entry`; the oldest entries beyond the limit are dropped (logged) and returned.
    package func add(_ entry: Entry) -> [String] {
        entries.append(entry)
        var dropped: [String] = []
        while entries.count > max(1, limits.maxEntries) {
            let old = entries.removeFirst()
            dropped.append(old.idempotencyKey)
            logger.warning("the chat outbox is full; dropped its oldest transcript",
                           metadata: ["chat.idempotency_key": "\(old.idempotencyKey)", "chat.limit": "\(limits.maxEntries)"])
        }
        save()
        return dropped
    }

    /// Records the session key an entry was first sent to.
    package func setSessionKey(_ sessionKey: String, for key: String) {
        guard let i = entries.firstIndex(where: { $0.idempotencyKey == key }), entries[i].sessionKey == nil else { return }
        entries[i].sessionKey = sessionKey
        save()
    }

    /// Removes an acknowledged (or abandoned) entry.
    package func remove(_ key: String) {
        let before = entries.count
        entries.removeAll { $0.idempotencyKey == key }
        if entries.count != before { save() }
    }

    /// The entries still worth sending, oldest first, after dropping (and logging) those too old.
    package func live() -> (entries: [Entry], expired: [String]) {
        let oldest = nowMs() - Self.milliseconds(limits.maxAge)
        let expired = entries.filter { $0.createdAtMs < oldest }
        for e in expired {
            logger.warning("a transcript waited too long for the Gateway and was dropped",
                           metadata: ["chat.idempotency_key": "\(e.idempotencyKey)", "chat.age_ms": "\(nowMs() - e.createdAtMs)"])
        }
        if !expired.isEmpty {
            entries.removeAll { $0.createdAtMs < oldest }
            save()
        }
        return (entries, expired.map(\.idempotencyKey))
    }

    package var count: Int { entries.count }

    private func save() {
        guard let file else { return }
        do {
            try SecureStore.preparePrivateDirectory((file as NSString).deletingLastPathComponent)
            try SecureStore.writeFile(file, Array(try JSONEncoder().encode(entries)), mode: 0o600)
        } catch {
            // Kept in memory still: only a daemon restart before the ack would lose it.
            logger.error("the chat outbox could not be written", metadata: ["file": "\(file)", "error": "\(error)"])
        }
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
