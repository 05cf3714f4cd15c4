import TalkLogging

/// The parts of the daemon (the instance lock and runtime, the Gateway sockets, the audio devices, the control socket,
/// the Talk loop), started in order and stopped in reverse, once, on every way out of `run`: a clean stop, a failed
/// start, an error while running. swift-service-lifecycle's `ServiceGroup`, small: the parts here are opened and
/// closed rather than run, so a part is what `start` returned and the closure that stops it.
///
/// Once the stop fired (a signal, `stop`, the deadline), nothing more is started: `start` throws `Stopped`, which
/// `run` takes for a clean end.
final class ServiceGroup {
    /// A stop came while the daemon was starting: the parts not yet started never are.
    struct Stopped: Error, CustomStringConvertible {
        var reason: String
        var before: String
        var description: String { "stopped (\(reason)) before \(before) started" }
    }

    private var running: [(name: String, stop: () async -> Void)] = []
    private let stop: StopSignal
    private let logger: Logger

    private init(stop: StopSignal, logger: Logger) {
        self.stop = stop
        self.logger = logger
    }

    /// Runs `body` with a group whose parts are stopped, last first, whichever way `body` ends. `signals` are read
    /// into `stop` the whole time, shutdown included (a second signal then exits at once).
    static func run<T>(signals: UnixSignals, stop: StopSignal, logger: Logger,
                       _ body: (ServiceGroup) async throws -> T?) async throws -> T? {
        let follower = Task { await stop.follow(signals) }
        defer { follower.cancel() }
        let group = ServiceGroup(stop: stop, logger: logger)
        do {
            let result = try await body(group)
            await group.shutdown()
            return result
        } catch let stopped as Stopped {
            logger.info("\(stopped)")
            await group.shutdown()
            return nil
        } catch {
            await group.shutdown()
            throw error
        }
    }

    /// Starts one part (unless the stop already fired) and keeps `stop` to close it at shutdown.
    func start<Part>(_ name: String, _ open: () async throws -> Part, stop close: @escaping (Part) async -> Void) async throws -> Part {
        try checkNotStopped(before: name)
        let part = try await open()
        running.append((name, { await close(part) }))
        return part
    }

    /// A part that is already running (a task), with what stops it.
    func started(_ name: String, stop close: @escaping () async -> Void) {
        running.append((name, close))
    }

    /// Throws `Stopped` if the stop fired: the next part is not started.
    func checkNotStopped(before name: String) throws {
        if let reason = stop.reason { throw Stopped(reason: reason, before: name) }
    }

    /// Stops the parts, last started first; each once.
    func shutdown() async {
        while let last = running.popLast() {
            logger.debug("stopping", metadata: ["service": "\(last.name)"])
            await last.stop()
        }
    }
}
