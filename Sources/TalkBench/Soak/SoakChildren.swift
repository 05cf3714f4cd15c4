import Foundation
import Synchronization

/// What `bench soak` has running: the sound server, the reference Gateway and the daemon, stopped in order when
/// the soak is told to stop (the command catches SIGTERM, SIGINT and SIGHUP and calls `stopAll`). A SIGKILLed
/// soak cannot stop them: they die of their parent-death signal (`ChildSpawn`).
package final class SoakChildren: Sendable {
    private struct Parts {
        var sound: SoakSoundServer?
        var gateway: SoakGateway?
        var daemon: TalkChild?
        var stopping = false
    }

    private let parts = Mutex(Parts())

    package init() {}
    /// How long the daemon has for its clean stop before it is killed.
    static let daemonStopBound: Duration = .seconds(10)

    var sound: SoakSoundServer? {
        get { parts.withLock { $0.sound } }
        set { parts.withLock { $0.sound = newValue } }
    }

    var gateway: SoakGateway? {
        get { parts.withLock { $0.gateway } }
        set { parts.withLock { $0.gateway = newValue } }
    }

    var daemon: TalkChild? {
        get { parts.withLock { $0.daemon } }
        set { parts.withLock { $0.daemon = newValue } }
    }

    /// Whether a stop signal came: the soak starts nothing more (a restart in flight gives up).
    package var stopping: Bool { parts.withLock { $0.stopping } }

    /// Once a stop signal came, the soak's own way out (an error from a part the stop ended, or its report) must
    /// not end the process first with another status: this waits for the stop to exit.
    package func holdIfStopping() async {
        while stopping { try? await Task.sleep(for: .seconds(60)) }
    }

    /// The daemon first (its clean stop), then the Gateway and the sound server.
    package func stopAll() async {
        let (sound, gateway, daemon) = parts.withLock { parts in
            parts.stopping = true
            return (parts.sound, parts.gateway, parts.daemon)
        }
        await daemon?.stop(timeout: Self.daemonStopBound)
        await gateway?.halt()
        await sound?.halt()
    }
}
