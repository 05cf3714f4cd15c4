import Foundation
import Glibc
import TalkBench

/// `bench soak`'s stop signals: SIGTERM, SIGINT (Ctrl-C) and SIGHUP (the terminal closed) are caught: the daemon
/// gets its clean stop, the Gateway and the sound server are killed, the run's folder removed, and the soak exits
/// with 128 + the signal. Left to the signal's default action, the soak alone ended and its parts ran on.
extension SoakChildren {
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
}
