import Foundation
import SessionBridge
import SpeechSynthesis

/// What the daemon's control commands do to a running session: Talk on and off (`talk start|stop`), `pause` and
/// `resume` (the microphone stream is closed while paused, so nothing records), and a typed turn (`say TEXT`).
/// Unlike `stop()`, none of these ends the event stream: the session lives as long as the daemon.
extension TalkSession {
    /// Why a control command was refused; the daemon answers the client with it.
    package enum ControlRefusal: Error, Equatable, CustomStringConvertible {
        case talkOff
        case paused

        package var description: String {
            switch self {
            case .talkOff: "Talk is off: run 'openclaw-talk talk start' first"
            case .paused: "Talk is paused: run 'openclaw-talk resume' first"
            }
        }
    }

    /// `talk start`: opens the microphone and announces Talk mode. Nothing when Talk is already on.
    package func activate() async throws {
        guard state == .idle else { return }
        startAnnouncer()
        try await openMicrophone(starting: true)
    }

    /// `talk stop`: the reply stops, the microphone closes, and the Gateway is told Talk mode is off (after the
    /// phases before it). A transcript not yet acknowledged stays in the outbox.
    package func deactivate() async {
        guard state != .idle else { return }
        // The microphone first (the machine's order): nothing said from now on becomes a turn.
        await handle(.control(.deactivate(.talkStop)))
        announcements?.finish()
        announcements = nil
        await announcer?.value
        announcer = nil
        if let announce = dependencies.announce { await announce(false, nil) }
    }

    /// Closes the microphone stream (the reply in progress stops with it); `resume()` reopens it.
    package func pause() async throws {
        // The microphone first (the machine's order): nothing said after "pause" becomes a turn.
        try await control(.pause)
    }

    package func resume() async throws {
        guard state != .idle else { throw ControlRefusal.talkOff }
        guard state == .paused else { return }
        try await openMicrophone(starting: false)
    }

    /// A typed turn: `text` goes to the agent as if it had been said, and the reply is spoken.
    package func type(_ text: String) async throws {
        try await control(.type(text))
    }

    /// A control command to the machine; its refusal is thrown to the caller.
    private func control(_ command: TurnTaking.ControlCommand) async throws {
        for case .refuse(let refusal) in await handle(.control(command)) { throw refusal }
    }

    /// A reloaded configuration's voice and rate; the next sentence uses them.
    package func setVoice(_ voice: String?, rate: Int?) {
        voices.reload(voice: voice, rate: rate)
    }

    // MARK: - Pieces shared with start() and stop()

    func startAnnouncer() {
        guard announcements == nil else { return }
        let (phases, continuation) = AsyncStream.makeStream(of: TalkPhase.self)
        announcements = continuation
        if let announce = dependencies.announce {
            announcer = Task { for await phase in phases { await announce(true, phase) } }
        }
    }

    /// `starting`: Talk comes on (`start`, `activate`) and its hands-free mode begins; otherwise a resume returns
    /// to the mode's resting state.
    func openMicrophone(starting: Bool) async throws {
        guard let listener else { return }
        opened = try await listener.start()
        await handle(.control(starting ? .activate : .resume))
    }

    /// `Action.closeMicrophone`.
    func closeMicrophone() async {
        listenTask?.cancel()
        listenTask = nil
        opened = nil
        await listener?.stop()
        releaseFloor()
    }

    /// Stops the current turn and whatever it is playing or synthesising (`cancelTurn` cancels its `talk.speak`
    /// requests), and waits for it to end, which is then at once: `stop()` with Talk already off.
    func quiet() async {
        let reply = turnTask
        cancelTurn()
        await dependencies.playback.stop()
        dependencies.synthesizer.cancelAll()
        releaseFloor()
        await reply?.value
    }
}
