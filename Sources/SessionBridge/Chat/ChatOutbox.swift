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
        /// The file is never written larger than this: `SecureStore` refuses to read past 1 MiB, and a file it cannot
        /// read would lose every transcript in it. The oldest entries go first.
        package var maxFileBytes = 768 * 1024
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

    /// Loads `file` when it exists (nil keeps the outbox in memory). A damaged or refused file (not JSON, too
    /// large, readable by others) is moved aside to `<file>.corrupt`, where the user can look at it, and the outbox
    /// starts empty: losing a queued transcript is better than never starting, and the next save must not overwrite
    /// what may still be recovered. Dates are brought into range: one in the future counts from now (so it still
    /// expires), none can overflow.
    package init(file: String?, limits: Limits = Limits(), nowMs: @escaping @Sendable () -> Int64 = ChatOutbox.wallClockMs, logger: Logger) {
        self.file = file
        self.limits = limits
        self.nowMs = nowMs
        self.logger = logger
        guard let file else { return }
        do {
            if let bytes = try SecureStore.readPrivateFile(file) {
                let now = nowMs()
                entries = try JSONDecoder().decode([Entry].self, from: Data(bytes)).map { entry in
                    var e = entry
                    e.createdAtMs = min(e.createdAtMs, now)
                    return e
                }
            }
        } catch {
            let kept = file + ".corrupt"
            if rename(file, kept) == 0 {
                logger.error("the chat outbox could not be read; it was kept as \(kept) and the outbox starts empty",
                             metadata: ["file": "\(file)", "error": "\(error)"])
            } else {
                logger.error("the chat outbox could not be read, nor moved aside; starting empty",
                             metadata: ["file": "\(file)", "error": "\(error)", "rename.error": "\(String(cString: strerror(errno)))"])
            }
        }
    }

    /// `<state folder>/chat-outbox.json`.
    package static func file(in paths: StoragePaths) -> String { paths.stateDirectory + "/chat-outbox.json" }

    package static let wallClockMs: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Queues `entry`; the oldest entries beyond the limits (count, then the file's size) are dropped (logged) and
    /// returned. The newest entry always stays, in memory at least.
    package func add(_ entry: Entry) -> [String] {
        var entry = entry
        entry.createdAtMs = min(entry.createdAtMs, nowMs())
        entries.append(entry)
        var dropped: [String] = []
        func drop(_ why: String) {
            let old = entries.removeFirst()
            dropped.append(old.idempotencyKey)
            logger.warning("the chat outbox is full; dropped its oldest transcript",
                           metadata: ["chat.idempotency_key": "\(old.idempotencyKey)", "chat.limit": "\(why)"])
        }
        while entries.count > max(1, limits.maxEntries) { drop("\(limits.maxEntries) transcripts") }
        while entries.count > 1, encodedSize(entries) > limits.maxFileBytes { drop("\(limits.maxFileBytes) bytes") }
        save()
        return dropped
    }

    private func encodedSize(_ list: [Entry]) -> Int { (try? JSONEncoder().encode(list).count) ?? Int.max }

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
        let now = nowMs()
        let oldest = now.subtractingReportingOverflow(Self.milliseconds(limits.maxAge))
        let expired = entries.filter { oldest.overflow || $0.createdAtMs < oldest.partialValue }
        for e in expired {
            let age = now.subtractingReportingOverflow(e.createdAtMs)
            logger.warning("a transcript waited too long for the Gateway and was dropped",
                           metadata: ["chat.idempotency_key": "\(e.idempotencyKey)", "chat.age_ms": "\(age.overflow ? "(overflow)" : "\(age.partialValue)")"])
        }
        if !expired.isEmpty {
            let gone = Set(expired.map(\.idempotencyKey))
            entries.removeAll { gone.contains($0.idempotencyKey) }
            save()
        }
        return (entries, expired.map(\.idempotencyKey))
    }

    package var count: Int { entries.count }

    private func save() {
        guard let file else { return }
        do {
            // The newest entries that fit what a read accepts; a single larger one stays in memory only.
            var kept = entries[...]
            while kept.count > 0, encodedSize(Array(kept)) > limits.maxFileBytes { kept = kept.dropFirst() }
            if kept.count < entries.count {
                logger.warning("a transcript too large for the chat outbox file is kept in memory only",
                               metadata: ["chat.limit": "\(limits.maxFileBytes) bytes"])
            }
            try SecureStore.preparePrivateDirectory((file as NSString).deletingLastPathComponent)
            try SecureStore.writeFile(file, Array(try JSONEncoder().encode(Array(kept))), mode: 0o600)
        } catch {
            // Kept in memory still: only a daemon restart before the ack would lose it.
            logger.error("the chat outbox could not be written", metadata: ["file": "\(file)", "error": "\(error)"])
        }
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
