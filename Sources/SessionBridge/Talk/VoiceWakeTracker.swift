import Foundation
import TalkLogging

/// Keeps the Gateway's wake phrases current: `voicewake.get` each time the socket connects, then every
/// `voicewake.changed` event. The Talk loop follows `updates()` to re-arm its wake-phrase search.
package actor VoiceWakeTracker {
    /// The Gateway's own defaults, until it says otherwise.
    package static let defaultTriggers = ["openclaw", "claude", "computer"]
    /// The Gateway's bounds: a longer list or phrase can only come from a hostile peer.
    static let maxTriggers = 32
    static let maxTriggerUTF16 = 64

    private let gateway: any GatewayCalling
    private let logger: Logger
    package private(set) var triggers: [String]
    private var subscribers: [Int: AsyncStream<[String]>.Continuation] = [:]
    private var nextSubscriber = 0

    package init(gateway: any GatewayCalling, initial: [String] = VoiceWakeTracker.defaultTriggers, logger: Logger) {
        self.gateway = gateway
        self.logger = logger
        triggers = initial
    }

    /// The current phrases first, then each change.
    package func updates() -> AsyncStream<[String]> {
        let (stream, c) = AsyncStream<[String]>.makeStream(bufferingPolicy: .bufferingNewest(8))
        c.yield(triggers)
        nextSubscriber += 1
        let id = nextSubscriber
        subscribers[id] = c
        c.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    /// Follows the socket until the task is cancelled or the connection's streams end.
    package func run() async {
        let events = await gateway.eventUpdates()
        let states = await gateway.stateUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events where event.name == "voicewake.changed" {
                    await self.apply(event.payload, source: "voicewake.changed")
                }
            }
            group.addTask {
                for await state in states {
                    if case .connected = state { await self.refresh() }
                }
            }
            await group.waitForAll()
        }
        subscribers.values.forEach { $0.finish() }
        subscribers = [:]
    }

    /// Asks the Gateway for the phrases now.
    package func refresh() async {
        do {
            let reply = try await gateway.request(method: "voicewake.get", params: .object([:]), timeout: nil)
            apply(reply, source: "voicewake.get")
        } catch {
            logger.warning("could not read the wake phrases", metadata: ["error": "\(error)"])
        }
    }

    private func apply(_ payload: JSONValue?, source: String) {
        guard let list = payload?["triggers"]?.arrayValue else {
            logger.error("ignored wake phrases without a triggers array", metadata: ["gateway.source": "\(source)"])
            return
        }
        let cleaned = Self.clean(list)
        if !list.isEmpty && cleaned.isEmpty {
            logger.error("ignored a wake phrase list with no usable phrase", metadata: ["gateway.source": "\(source)"])
            return
        }
        if cleaned.count < list.count {
            logger.warning("dropped wake phrases that were not short strings", metadata: [
                "gateway.source": "\(source)", "voicewake.dropped": "\(list.count - cleaned.count)",
            ])
        }
        // An empty list means the Gateway's defaults.
        let next = cleaned.isEmpty ? Self.defaultTriggers : cleaned
        guard next != triggers else { return }
        triggers = next
        logger.debug("wake phrases changed", metadata: ["voicewake.count": "\(next.count)"])
        subscribers.values.forEach { $0.yield(next) }
    }

    /// Trimmed, non-empty strings within the Gateway's bounds.
    static func clean(_ list: [JSONValue]) -> [String] {
        let strings = list.compactMap { $0.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && $0.utf16.count <= maxTriggerUTF16 }
        return Array(strings.prefix(maxTriggers))
    }
}
