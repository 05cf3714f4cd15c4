import Foundation
import SessionBridge
import Synchronization
import TalkLogging
import TalkService
import TalkSession

/// `run` as a daemon: one per user (the lock), the control socket, the status with its heartbeat, SIGHUP (a
/// terminal that went away detaches us; once detached it reloads the config), systemd's notifications and the
/// readiness pipe `start` waits on. The Talk loop itself is `run`'s; this is everything around it.
final class DaemonRuntime: Sendable {
    let paths: RuntimePaths
    let config: ConfigStore
    /// The keys the command line set: a reload does not override them.
    private let flagKeys: Set<String>
    private let lock: InstanceLock
    private let readiness: Mutex<ReadinessReport?>
    private let systemd = SystemdNotifications()
    private let logger: Logger
    /// In the foreground with a terminal; false once it went away, when started by `start` or under systemd.
    private let attached: Mutex<Bool>
    private let served = Mutex<Served?>(nil)
    private let shownStatus = Mutex<String>("")

    private struct Served: Sendable {
        var session: any ServedSession
        var status: StatusPublisher
        var server: ControlServer
        var tasks: [Task<Void, Never>]
    }

    /// First thing in `run`: SIGHUP no longer kills us, a second daemon fails here before it touches the Gateway
    /// or the microphone, and `start`'s readiness pipe is taken so any later failure reaches it.
    init(configuration: RunConfiguration, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let readiness = ReadinessReport.fromEnvironment()
        self.readiness = Mutex(readiness)
        self.logger = logger
        paths = RuntimePaths(environment: environment)
        flagKeys = configuration.flagKeys
        let underSystemd = environment["INVOCATION_ID"] != nil || environment["NOTIFY_SOCKET"] != nil
        attached = Mutex(readiness == nil && !underSystemd && (0...2).contains { isatty(Int32($0)) == 1 })
        let file = paths.configPath
        let env = environment
        do {
            config = try ConfigStore { () throws(ConfigError) -> ServiceConfig in
                try ServiceConfig.load(schema: RunConfiguration.schema, file: file, environment: env, flags: [:])
            }
            try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory)
            try RuntimePaths.ensurePrivateDirectory(paths.stateDirectory)
            lock = try InstanceLock.acquire(path: paths.lockPath)
        } catch {
            readiness?.failed(String(describing: error))
            throw error
        }
        if let stale = lock.clearedStalePid {
            logger.notice("cleared the lock of a daemon that died (pid \(stale))")
        }
        _ = try HangupWatch { [weak self] in
            guard let self else { return }
            Task { await self.hangup() }
        }
    }

    /// Tells `start` why the daemon did not come up (it prints it and exits non-zero); `shutdown()` follows.
    func failed(_ error: any Error) {
        readiness.withLock { $0.take() }?.failed(String(describing: error))
    }

    /// Serves the session (the native loop's or the realtime relay's) over the control socket and starts the
    /// heartbeat. `stop` ends the daemon.
    func serve<Session: ServedSession>(session: Session, gateway: GatewaySession, version: String,
                                       displayName: String, stop: StopSignal) async throws -> Session {
        let late = LateServer()
        var hooks = StatusPublisher.Hooks()
        let systemd = systemd
        hooks.publish = { [self] status in
            late.server?.broadcast(ControlService.statusEvent(status))
            let words = StatusReading.live(status).summary
            if shownStatus.withLock({ last in defer { last = words }; return last != words }) { systemd.send { $0.status(words) } }
        }
        let presence = NodePresence(node: gateway.node, profile: .node(displayName: displayName, version: version))
        let logger = logger
        hooks.alive = {
            do {
                try await presence.alive(trigger: .background, sentAtMs: Int64(Date().timeIntervalSince1970 * 1000))
            } catch {
                logger.debug("presence beacon not sent", metadata: ["error": "\(error)"])
            }
        }
        let status = StatusPublisher(settings: .init(config.config), file: StatusFile(path: paths.statusPath),
                                     hooks: hooks, logger: logger)
        let store = config
        let service = ControlService(session: session, status: status, onStop: { stop.fire("the stop command") },
                                     config: { store.config.json })
        let server = try ControlServer.start(path: paths.socketPath, logger: logger) { await service.handle($0) }
        late.server = server
        await session.watchGateway()
        await status.update(await session.snapshot())
        var tasks: [Task<Void, Never>] = [
            Task { await service.relayEvents(to: server) },
            Task { await status.run() },
            Task { [weak self] in await self?.maintain() },
        ]
        if let interval = systemd.watchdogInterval {
            tasks.append(Task {
                while !Task.isCancelled {
                    // Only a daemon whose actors still answer pings systemd's watchdog.
                    _ = await session.snapshot()
                    _ = await status.current
                    systemd.send { $0.watchdog() }
                    do { try await Task.sleep(for: interval) } catch { return }
                }
            })
        }
        served.withLock { $0 = Served(session: session, status: status, server: server, tasks: tasks) }
        logger.notice("serving", metadata: ["control.socket": "\(paths.socketPath)", "pid": "\(getpid())"])
        return session
    }

    /// Once the session runs: `start` returns, systemd marks the unit started.
    func ready() async {
        guard let served = served.withLock({ $0 }) else { return }
        await served.status.update(await served.session.snapshot())
        readiness.withLock { $0.take() }?.ready()
        let words = StatusReading.live(await served.status.current).summary
        systemd.send { $0.ready(status: words) }
    }

    /// After the session stopped (or failed to start): the socket and status go, the lock is released. Once.
    func shutdown() async {
        systemd.send { $0.stopping() }
        guard let served = served.withLock({ s in defer { s = nil }; return s }) else {
            lock.release()
            await systemd.flush()
            return
        }
        served.tasks.forEach { $0.cancel() }
        await served.server.stop()
        await served.session.close()
        // Ended before the file goes: a status update still under way would write it again.
        for task in served.tasks { await task.value }
        StatusFile(path: paths.statusPath).remove()
        lock.release()
        logger.notice("stopped")
        await systemd.flush()
    }

    /// Rotates the log while detached (stdout and stderr are the log file then).
    private func maintain() async {
        let log = LogFile(path: paths.logPath, maxBytes: config.config.integer("logMaxBytes") ?? 8 << 20)
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(5)) } catch { return }
            if !attached.withLock({ $0 }) { _ = try? log.rotateIfNeeded() }
        }
    }

    /// SIGHUP. In the foreground it means the terminal went away: the session goes on, and stdio moves to the
    /// log file (writes to the dead terminal would fail). Detached (or under systemd) it reloads the config.
    private func hangup() async {
        let wasAttached = attached.withLock { a in defer { a = false }; return a }
        if wasAttached {
            do {
                try LogFile(path: paths.logPath).attach()
                logger.notice("the terminal went away: running on detached, logging to \(paths.logPath)")
            } catch {
                // stdio stays on the dead terminal; StandardStream drops what it cannot write.
                logger.error("could not move the output to \(paths.logPath): \(error)")
            }
            return
        }
        systemd.send { $0.reloading() }
        switch config.reload() {
        case .success(let fresh):
            if let served = served.withLock({ $0 }) {
                await served.status.reconfigure(.init(fresh))
                await served.session.reload(fresh, flagKeys: flagKeys)
            }
            logger.notice("configuration reloaded", metadata: ["config.keys": "\(fresh.values.keys.sorted().joined(separator: ","))"])
            systemd.send { $0.ready(status: "configuration reloaded") }
        case .failure(let error):
            logger.error("configuration reload failed, the previous one stays in force: \(error)")
            let why = "reload failed: \(error)"
            systemd.send { $0.ready(status: why) }
        }
    }
}

/// The control server, known only after the status publisher that broadcasts through it is made.
private final class LateServer: Sendable {
    private let value = Mutex<ControlServer?>(nil)
    var server: ControlServer? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
