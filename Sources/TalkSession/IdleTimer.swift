import Foundation
import SessionBridge

/// The idle timeout (`--idle-timeout`, else `talk.idleTimeoutS`): always-listening that has heard nothing for that
/// long falls back to wake-phrase mode, and says so in the events; a wake phrase brings it back. Any speech, a
/// turn and every state change re-arm it; it only runs while always-listening waits in `listening`.
extension TalkSession {
    /// `talk.config`'s idle timeout, unless `--idle-timeout` gave one.
    func applyIdleTimeout(_ config: TalkConfig) {
        guard !settings.idleTimeoutFixed else { return }
        settings.idleTimeout = config.idleTimeoutS.map { .milliseconds(Int(($0 * 1000).rounded())) }
        rearmIdleTimer()
    }

    func rearmIdleTimer() {
        timers.cancel(.idle)
        guard let timeout = settings.idleTimeout, handsFree.mode == .alwaysListening, state == .listening,
              handsFree.capture == nil else { return }
        arm(.idle, timeout)
    }

    /// `Timer.idle`.
    func idled() async {
        guard let timeout = settings.idleTimeout, handsFree.mode == .alwaysListening, state == .listening,
              handsFree.capture == nil else { return }
        // Someone is speaking (a long utterance): not idle.
        guard !machine.userSpeaking else { return rearmIdleTimer() }
        handsFree.mode = .wakePhrase
        handsFree.idledOut = true
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        emit(.modeChanged(from: .alwaysListening, to: .wakePhrase, reason: "no interaction for \(String(format: "%g", seconds)) s"))
        await handle(.settle(reason: "idle timeout"))
    }
}
