import AudioIO

/// A recorded capture's cleaned frames through the realtime session's uplink, as `RealtimeTalkSession.heard` takes
/// them (no I/O; `bench aec --replay DIR --realtime`): the barge-in guard, the reply's level and its onset hold, the
/// uplink gate, and the relay's voice activity detection on what the gate sends (the reference relay's stand-in for a
/// provider's server VAD: `relayVADFrames` loud 20 ms windows in a row start speech, the relay clears the answer and
/// commits the turn from `relayPreRollMs` before). A change to the gate is judged on the same audio, where a live row
/// never meets the same timing again. The clock is the stream's: a frame is heard at its end.
package struct RealtimeUplinkReplay {
    /// The reference relay's VAD (`tools/reference-gateway/gateway/talk_relay_user.py`): RMS 400 in 20 ms windows,
    /// 100 ms of them in a row, its turn counted from 100 ms before the first.
    package static let relaySpeechRMS = 400.0
    package static let relayVADFrames = 5
    package static let relayPreRollMs = 100

    /// What happened, in stream ms (nil: never).
    package struct Trace: Sendable, Codable {
        package var loweredMs: Int?
        package var levelReturnedMs: [Int] = []
        /// The frame whose hearing opened the gate (the user's own sound).
        package var gateOpenedMs: Int?
        /// When the relay's VAD heard speech start (the clear: the relay's barge-in), and where in the stream it put it.
        package var relayHeardMs: Int?
        package var relaySpeechFromMs: Int?
        /// The client's own barge-in decision (`RealtimeBargeInGuard`).
        package var guardMs: Int?
        /// The answer stopped: the first of the two.
        package var cutMs: Int?
        /// The range sent from the linear stage.
        package var linearMs: [Int] = []
        /// Where the gate heard the user's own sound begin in the linear stage over the answer (`heardOwnInLinear`).
        package var ownInLinearMs: [Int] = []
    }

    private let settings: RealtimeTalkSession.Settings
    private let answerStartMs: Int
    private var guardState: RealtimeBargeInGuard
    private var gate: RealtimeUplinkGate
    private var level: RealtimeReplyLevel
    private var holdUntilMs: Int?
    private var loudRun = 0
    private var lastBargeInMs: Int?
    package private(set) var trace = Trace()
    /// What the gate sent, sample for sample in stream order (held frames sent as silence are zeros).
    package private(set) var sent: [Int16] = []

    /// `answerStartMs`: where the answer's output started (the session's `outputStartNs`), in stream ms.
    package init(answerStartMs: Int, settings: RealtimeTalkSession.Settings = RealtimeTalkSession.Settings(),
                 onsetRelease: HeldUtteranceRelease.Settings = RealtimeUplinkGate.onsetRelease,
                 heldFrames: Int = RealtimeUplinkGate.heldFrames, lookBackMs: Int = RealtimeUplinkGate.lookBackMs) {
        self.settings = settings
        self.answerStartMs = answerStartMs
        guardState = RealtimeBargeInGuard(settings.bargeIn, echoCancelled: settings.echoCancelled)
        gate = RealtimeUplinkGate(audibleRMS: settings.bargeIn.energy.minimumRMS, onsetRelease: onsetRelease, heldFrames: heldFrames, lookBackMs: lookBackMs)
        level = RealtimeReplyLevel(settings.bargeIn.lowering)
    }

    private var playing: Bool { trace.cutMs == nil }

    package mutating func hear(_ frame: AudioFrame) {
        let nowMs = frame.streamPositionMs + AudioFrame.durationMs
        if let until = holdUntilMs, nowMs >= until {
            holdUntilMs = nil
            perform(level.holdRanOut(stillHearing: guardState.hearsSound), atMs: nowMs)
        }
        let onset = guardState.hear(frame, atNs: UInt64(nowMs) * 1_000_000)
        let started = nowMs >= answerStartMs
        if playing, started {
            if onset, nowMs - answerStartMs >= RealtimeTalkSession.ms(settings.bargeInAfterOutput) { perform(level.soundOnset(), atMs: nowMs) }
            if guardState.isUserSpeech(nowNs: UInt64(nowMs) * 1_000_000, levelRMS: settings.bargeInRMS),
               nowMs - answerStartMs >= RealtimeTalkSession.ms(settings.bargeInAfterOutput),
               lastBargeInMs.map({ nowMs - $0 >= RealtimeTalkSession.ms(settings.bargeInCooldown) }) ?? true
            {
                trace.guardMs = nowMs
                cut(atMs: nowMs)
            }
        }
        let wasOpen = gate.isOpen
        let samples = gate.pass(frame, soundOnset: onset)
        if gate.heardOwnInLinear, playing, started, nowMs - answerStartMs >= RealtimeTalkSession.ms(settings.bargeInAfterOutput) {
            trace.ownInLinearMs.append(frame.streamPositionMs)
            perform(level.soundOnset(), atMs: nowMs)
        }
        if gate.isOpen, !wasOpen, trace.gateOpenedMs == nil {
            trace.gateOpenedMs = frame.streamPositionMs
            trace.linearMs = [gate.linearMs.lowerBound, gate.linearMs.upperBound]
        }
        let firstSample = sent.count
        sent += samples
        relayVAD(from: firstSample, started: started, atMs: nowMs)
    }

    /// The relay's VAD on what was just sent; its speech start over the answer clears it.
    private mutating func relayVAD(from first: Int, started: Bool, atMs nowMs: Int) {
        let n = AudioFrame.samplesPerFrame
        var at = first
        while at + n <= sent.count {
            loudRun = AudioLevel.rms(Array(sent[at..<at + n])) >= Self.relaySpeechRMS ? loudRun + 1 : 0
            if loudRun == Self.relayVADFrames, trace.relayHeardMs == nil, started {
                trace.relayHeardMs = nowMs
                trace.relaySpeechFromMs = max(0, (at + n) * 1000 / AudioFrame.sampleRate - Self.relayVADFrames * AudioFrame.durationMs - Self.relayPreRollMs)
                if playing { cut(atMs: nowMs) }
            }
            at += n
        }
    }

    private mutating func cut(atMs nowMs: Int) {
        trace.cutMs = nowMs
        lastBargeInMs = nowMs
        gate.answerStopped()
        perform(level.replyCut(), atMs: nowMs)
    }

    private mutating func perform(_ actions: [RealtimeReplyLevel.Action], atMs nowMs: Int) {
        for action in actions {
            switch action {
            case .setGain(let gain):
                if gain < 1 {
                    gate.answerLowered()
                    if trace.loweredMs == nil { trace.loweredMs = nowMs }
                } else {
                    gate.answerLevelReturned()
                    trace.levelReturnedMs.append(nowMs)
                }
            case .armHold(let delay):
                holdUntilMs = nowMs + RealtimeTalkSession.ms(delay)
            case .cancelHold:
                holdUntilMs = nil
            case .emit:
                break
            }
        }
    }
}

extension RealtimeTalkSession {
    static func ms(_ d: Duration) -> Int { Int(ns(d) / 1_000_000) }
}
