import Foundation
import TalkLogging

/// Keeps the Gateway's wake phrases current: `voicewake.get` on the operator socket each time it connects
/// (a node caller is refused upstream), and every `voicewake.changed` on either socket, including the one the
/// Gateway pushes to a node right after `hello-ok`. Until a list arrives, the Gateway's documented defaults apply.
/// The Talk loop follows `updates()` to re-arm its wake-phrase search.
package actor VoiceWakeTracker {
    /// The Gateway's own defaults, until it says otherwise (docs nodes/voicewake.md).
    package static let defaultTriggers = ["openclaw", "claude", "computer"]
    /// The Gateway's bounds: a longer list or phrase can only come from a hostile peer.
    static let maxTriggers = 32
    static let maxTriggerUTF16 = 64

    private let reader: any GatewayCalling
    private let listeners: [any GatewayCalling]
    private let logger: Logger
    package private(set) var triggers: [String]
    private var subscribers: [Int: AsyncStream<[String]>.Continuation] = [:]
    private var nextSubscriber = 0
    private var followed: (events: [AsyncStream<GatewayFrame.Event>], states: AsyncStream<ConnectionState>)?

    /// - Parameters:
    ///   - reader: the socket `voicewake.get` goes to (the operator's).
    ///   - listeners: the sockets whose `voicewake.changed` events count (node and operator); `reader` when empty.
    package init(reader: any GatewayCalling, listeners: [any GatewayCalling] = [], initial: [String] = VoiceWakeTracker.defaultTriggers,
                 logger: Logger) {
        self.reader = reader
        self.listeners = listeners.isEmpty ? [reader] : listeners
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

    /// Subscribes to the sockets' events and the reader's states. Call it before the sockets connect: the list a
    /// node is sent right after `hello-ok` reaches only the subscribers already there. `run()` calls it if needed.
    package func subscribe() async {
        guard followed == nil else { return }
        var events: [AsyncStream<GatewayFrame.Event>] = []
        for socket in listeners { events.append(await socket.eventUpdates()) }
        followed = (events, await reader.stateUpdates())
    }

    /// Follows the sockets until the task is cancelled or the connections' streams end.
    package func run() async {
        await subscribe()
        guard let (events, states) = followed else { return }
        await withTaskGroup(of: Void.self) { group in
            for stream in events {
                group.addTask {
                    for await event in stream where event.name == "voicewake.changed" {
                        await self.apply(event.payload, source: "voicewake.changed")
                    }
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
            let reply = try await reader.request(method: "voicewake.get", params: .object([:]), timeout: nil)
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
