import Foundation
import Glibc
import Synchronization
import TalkBench

/// What `bench soak` has running: the sound server, the reference Gateway and the daemon, stopped with it when
/// it is told to stop. SIGTERM, SIGINT (Ctrl-C) and SIGHUP (the terminal closed) are caught: the daemon gets its
/// clean stop, the Gateway and the sound server are killed, the run's folder removed, and the soak exits with
/// 128 + the signal. Left to the signal's default action, the soak alone ended: the Gateway and the daemon lead
/// process groups of their own (Foundation's `Process`), PulseAudio was not told, and all ran on.
final class SoakChildren: Sendable {
    private struct Parts {
        var sound: SoakSoundServer?
        var gateway: SoakGateway?
        var daemon: TalkChild?
        var stopping = false
    }

    private let parts = Mutex(Parts())
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
    var stopping: Bool { parts.withLock { $0.stopping } }

    /// Catches the stop signals from now on (call it before anything is started); on the first one, stops every
    /// part, removes `root` (unless `keep`), says so on stderr and exits.
    func stopOnSignals(root: String, keep: Bool) -> Task<Void, Never> {
        let signals = UnixSignals([.sigint, .sigterm, UnixSignal(rawValue: SIGHUP)])
        return Task {
            for await signal in signals {
                await self.stopAll()
                if !keep { try? FileManager.default.removeItem(atPath: root) }
                FileHandle.standardError.write(Data("bench soak: \(signal): stopped the daemon, the Gateway and the sound server\n".utf8))
                exit(128 + signal.rawValue)
            }
        }
    }

    /// Once a stop signal came, the soak's own way out (an error from a part the stop ended, or its report) must
    /// not end the process first with another status: this waits for the stop to exit.
    func holdIfStopping() async {
        while stopping { try? await Task.sleep(for: .seconds(60)) }
    }

    /// The daemon first (its clean stop), then the Gateway and the sound server.
    func stopAll() async {
        let (sound, gateway, daemon) = parts.withLock { parts in
            parts.stopping = true
            return (parts.sound, parts.gateway, parts.daemon)
        }
        await daemon?.stop(timeout: Self.daemonStopBound)
        await gateway?.halt()
        await sound?.halt()
    }
}
