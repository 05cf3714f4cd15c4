import AudioIO
import Foundation
import SessionBridge

/// What the daemon's control commands do to a running realtime session: `pause` and `resume` close and reopen
/// the microphone stream (nothing records while paused, and the relay's output stops with it), `talk stop` and
/// `talk start` close the relay session (`talk.session.close`) and open a new one. Unlike `stop()`, none of
/// these ends the event stream: the session lives as long as the daemon.
extension RealtimeTalkSession {
    /// `talk start` (and the start of a session that listens): opens the relay session, then the microphone.
    /// Nothing when Talk is already on.
    package func activate() async throws {
        guard state == .idle else { return }
        try await openSession()
        try await openMicrophoneStream()
        setState(.listening, reason: "started")
        announceUplink()
    }

    /// `talk stop`: the output stops, the microphone closes and the relay session is closed.
    package func deactivate() async {
        guard state != .idle else { return }
        await closeMicrophoneAndOutput(reason: "talk stop")
        await relay.close()
        setState(.idle, reason: TalkOffReason.talkStop.rawValue)
    }

    package func pause() async throws {
        guard state != .idle else { throw TalkSession.ControlRefusal.talkOff }
        guard state != .paused else { return }
        await closeMicrophoneAndOutput(reason: "paused")
        setState(.paused, reason: "paused")
    }

    package func resume() async throws {
        guard state != .idle else { throw TalkSession.ControlRefusal.talkOff }
        guard state == .paused else { return }
        try await openMicrophoneStream()
        setState(.listening, reason: "resumed")
    }

    /// Push-to-talk in realtime mode: the relay hears the microphone all the time and finds the turns itself, so
    /// `start` (and `once`) stops the answer playing, as speaking over it does with echo cancellation; without
    /// it (`Settings.halfDuplex`) this is how the user cuts in. `stop` and `cancel` have no capture to end.
    package func pushToTalk(_ command: PushToTalkCommand) async throws -> PushToTalkResult {
        try checkPushToTalk()
        guard command == .start || command == .once else { throw Self.pushToTalkNothingToEnd }
        let result = PushToTalkResult(captureId: UUID().uuidString.lowercased())
        if outputStartNs != nil {
            let turn = await cutOutput()
            await stopSpeaking(completed: false, ending: .pushToTalk)
            await cancelRelayOutput(turn, reason: TurnEndReason.pushToTalk.rawValue)
        }
        emit(.pushToTalk(command: String(command.rawValue.dropFirst("talk.ptt.".count)), captureId: result.captureId,
                         status: nil, transcript: nil))
        return result
    }

    package func checkPushToTalk() throws {
        guard state != .idle, state != .paused else { throw TalkLoopRefusal.talkOffOrPaused }
    }

    package static let pushToTalkNothingToEnd = TalkLoopRefusal(
        "in realtime mode 'ptt start' only stops the answer (the relay hears you all the time): there is no capture to end")

    /// Where the session stands (idle with Talk off).
    package var talkState: TalkState { state }

    // MARK: - Pieces shared with start() and stop()

    func openMicrophoneStream() async throws {
        closeMicrophoneStream()
        let frames = try await capture.start()
        let generation = microphoneGeneration
        microphone = Task {
            for await event in frames {
                // Frames a closed stream had buffered are not sent.
                guard self.microphoneGeneration == generation else { return }
                if case .frame(let frame) = event { await self.heard(frame) }
            }
        }
    }

    /// Ends the capture stream's reader now; `capture.stop()` (awaited by the callers) closes the stream itself.
    func closeMicrophoneStream() {
        microphoneGeneration += 1
        microphone?.cancel()
        microphone = nil
    }

    /// The answer playing stops now and the rest of its turn (returned) is dropped.
    func cutOutput() async -> String? {
        let turn = outputTurn
        if let turn { output.dropTurn(turn) }
        flush()
        await playback.stop()
        return turn
    }

    func cancelRelayOutput(_ turn: String?, reason: String) async {
        do { try await relay.cancelOutput(turnId: turn, reason: reason) } catch {
            emit(.error("cancelling the relay's output failed: \(error)"))
        }
    }

    /// The answer being played stops for good: the rest of its turn is dropped, and the relay told so.
    private func closeMicrophoneAndOutput(reason: String) async {
        closeMicrophoneStream()
        await capture.stop()
        let speaking = outputStartNs != nil
        let turn = outputTurn
        if let turn { output.dropTurn(turn) }
        flush()
        await playback.stop()
        await stopSpeaking(completed: false, ending: nil)
        if speaking { try? await relay.cancelOutput(turnId: turn, reason: reason) }
    }
}
