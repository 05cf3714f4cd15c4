import CPulse

/// Waits for a named source or sink to exist, so a stream that fell back to the default device can go
/// back to the one it was asked for. It polls the device list on the retry cadence rather than subscribing
/// to server events: a poll needs no state that a server restart would wipe, so the same code covers a
/// device unloaded and loaded again and one that appears only some time after a restart.
///
/// Confined to its loop: call it only on the loop thread or with `PulseMainloop.withLock` held.
final class PulseDeviceWatch {
    private let loop: PulseMainloop
    private let kind: PulseDeviceKind
    private let name: String
    private let interval: Duration
    private var timer: OpaquePointer?
    private var context: () -> OpaquePointer? = { nil }
    private var onReturn: ((OpaquePointer) -> Void)?
    /// Bumped by `cancel`: an answer to a query sent before it is stale.
    private var generation = 0

    init(loop: PulseMainloop, kind: PulseDeviceKind, name: String, interval: Duration) {
        self.loop = loop
        self.kind = kind
        self.name = name
        self.interval = interval
    }

    /// Whether a watch is running.
    var isWatching: Bool { onReturn != nil }

    /// Looks for the device every `interval` on whatever context `context` gives (none while the server is
    /// away) and calls `onReturn` once, with that context, when the device is there. Replaces a running watch.
    func watch(context: @escaping () -> OpaquePointer?, onReturn: @escaping (OpaquePointer) -> Void) {
        cancel()
        self.context = context
        self.onReturn = onReturn
        schedule()
    }

    /// Stops watching; a query in flight is ignored when it answers.
    func cancel() {
        generation &+= 1
        onReturn = nil
        context = { nil }
        if let timer { loop.removeTimer(timer) }
        timer = nil
    }

    private func schedule() {
        guard timer == nil else { return }
        timer = loop.addTimer(after: interval, userdata: Unmanaged.passUnretained(self).toOpaque()) { _, _, _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseDeviceWatch>.fromOpaque(userdata).takeUnretainedValue().fired()
        }
    }

    /// The next poll is armed before the query is sent: a query on a context that dies never answers, and
    /// the watch must outlive that.
    private func fired() {
        if let timer { loop.removeTimer(timer) }
        timer = nil
        guard onReturn != nil else { return }
        schedule()
        guard let current = context() else { return }
        let mine = generation
        PulseIntrospection.devices(kind, current) { [weak self, name] devices in
            guard let self, mine == generation, devices.contains(where: { $0.name == name }), let onReturn else { return }
            cancel()
            onReturn(current)
        }
    }
}
