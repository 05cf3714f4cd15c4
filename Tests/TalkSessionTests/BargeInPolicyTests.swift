import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// `BargeInPolicy` on fakes: each threshold the user can set changes what stops the reply; the defaults are the
/// loop's long-standing ones.
@Suite struct BargeInPolicyTests {
    typealias BargeIn = TalkSessionBargeInTests

    @Test func `the defaults: 10 dB over the floor, 3 letters or digits, 25 dB lower, 0.8 s onset hold, 0.5 s mute tail`() {
        let policy = BargeInPolicy()
        #expect(abs(policy.energy.ratioOverFloor - 3.162) < 0.001)
        #expect(policy.text.minimumNewCharacters == 3)
        #expect(policy.lowering.gain.map { abs($0 - 0.0562) < 0.0001 } == true)
        #expect(policy.lowering.onsetHold == .milliseconds(800) && policy.muteTail == .milliseconds(500))
        #expect(!policy.forcedOff && policy.evidence.holdReason(BargeInEvidence(speechMs: 0)) == nil)
    }

    @Test(arguments: [(3, true), (8, false)])
    func `the text guard's minimum decides whether a short partial stops the reply`(minimum: Int, interrupts: Bool) async throws {
        var settings = TalkSession.Settings()
        settings.bargeIn.text.minimumNewCharacters = minimum
        let rig = try await BargeIn.speaking(settings)
        try await BargeIn.speakLoudly(into: rig)
        if interrupts {
            await rig.listener.hear(.speechStarted(positionMs: 5000))
            await rig.listener.hear(.partial("stop now"))
            #expect(await rig.log.waitFor(BargeIn.isBargeIn))
            #expect(await rig.speaker.stops >= 1)
        } else {
            await BargeIn.expectNoInterruption(rig, saying: "stop now")
        }
        await rig.session.stop()
    }

    /// Speech at 8 000 over a floor of 1 000 stands about 13.6 dB over it after the floor's slow rise.
    @Test(arguments: [(10.0, true), (20.0, false)])
    func `the energy guard's dB over the noise floor decides whether loud words stop the reply`(decibels: Double, interrupts: Bool)
        async throws
    {
        var settings = TalkSession.Settings()
        settings.bargeIn.energy.decibelsOverNoiseFloor = decibels
        let rig = try await BargeIn.speaking(settings)
        await rig.microphone.push(amplitude: 1000, count: 10)
        await rig.microphone.push(amplitude: 8000, count: 10)
        let deadline = ContinuousClock.now + .seconds(10)
        while await rig.listener.peaks.count < 20, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        if interrupts {
            await rig.listener.hear(.speechStarted(positionMs: 5000))
            await rig.listener.hear(.partial("stop right there"))
            #expect(await rig.log.waitFor(BargeIn.isBargeIn))
        } else {
            await BargeIn.expectNoInterruption(rig, saying: "stop right there")
        }
        await rig.session.stop()
    }

    @Test func `with a minimum speech duration a partial interrupts only once the user has spoken that long`() async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.bargeIn.evidence.minimumSpeechMs = 500
        let rig = try await Rig(agent: .reply(BargeIn.reply), holdPlayback: true, settings: settings, clock: clock.clock)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await BargeIn.speakLoudly(into: rig)
        await rig.listener.hear(.speechStarted(positionMs: 5000))
        await rig.listener.hear(.partial("stop right"))  // 0 ms of speech: held
        // Too short for the text guard: its event says the partial before it has been judged.
        await rig.listener.hear(.partial("st"))
        #expect(await rig.log.waitFor { if case .partialTranscript("st") = $0 { true } else { false } })
        clock.advance(.milliseconds(600))
        await rig.listener.hear(.partial("stop right there"))
        #expect(await rig.log.waitFor(BargeIn.isBargeIn))
        let bargeIns = await rig.log.events.compactMap { event -> (String, Double)? in
            if case .bargeIn(_, let latency, let partial) = event.kind { (partial, latency) } else { nil }
        }
        #expect(bargeIns.count == 1 && bargeIns.first?.0 == "stop right there", "\(bargeIns)")
        #expect(bargeIns.first.map { $0.1 >= 500 } == true)
        await rig.session.stop()
    }

    /// The evidence describes the reply playing now: words a busy recogniser reports long after their audio do not
    /// stop it, whatever else their evidence says; words a moment behind, as on a quiet machine, still do.
    @Test func `words far behind the microphone are held, words just behind are not`() {
        let evidence = BargeInPolicy.Evidence()
        #expect(evidence.holdReason(BargeInEvidence(speechMs: 400, startedBeforeReplyAudio: true, behindMs: 12_000)) != nil)
        #expect(evidence.holdReason(BargeInEvidence(echoExplained: 0.1, speechMs: 400, userSoundShown: true, behindMs: 1500)) != nil)
        #expect(evidence.holdReason(BargeInEvidence(echoExplained: 0.1, speechMs: 400, userSoundShown: true, behindMs: 600)) == nil)
        #expect(evidence.holdReason(BargeInEvidence(echoExplained: 0.1, speechMs: 400, userSoundShown: true)) == nil)
    }

    @Test func `evidence the echo work measures holds a barge-in when a threshold is set, and a measure not taken never does`() {
        var evidence = BargeInPolicy.Evidence()
        evidence.maximumEchoExplained = 0.5
        evidence.minimumConfidence = 0.6
        #expect(evidence.holdReason(BargeInEvidence(echoExplained: 0.8, speechMs: 400)) != nil)
        #expect(evidence.holdReason(BargeInEvidence(confidence: 0.3, speechMs: 400)) != nil)
        #expect(evidence.holdReason(BargeInEvidence(echoExplained: 0.2, confidence: 0.9, speechMs: 400)) == nil)
        #expect(evidence.holdReason(BargeInEvidence(speechMs: 400)) == nil)
    }
}

/// Without barge-in the microphone is muted in the same step as the reply starts, and opens only the mute tail
/// after the reply ends; push-to-talk's hold outlasts both.
@Suite struct MicrophoneModeTests {
    static func waitForMode(_ rig: Rig, _ mode: TurnTaking.MicrophoneMode) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while rig.session.gate.mode != mode, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return rig.session.gate.mode == mode
    }

    @Test(arguments: [HandsFreeMode.alwaysListening, .pushToTalk])
    func `without barge-in the microphone is muted while the reply plays and for the mute tail after`(mode: HandsFreeMode) async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.bargeIn.forcedOff = true
        settings.mode = mode
        let rig = try await Rig(agent: .reply(TalkSessionBargeInTests.reply), holdPlayback: true, settings: settings, clock: clock.clock)
        #expect(rig.session.gate.mode == (mode == .pushToTalk ? .held : .open))
        if mode == .pushToTalk {
            try await rig.session.type("how is the weather")
        } else {
            await rig.listener.utterance("how is the weather")
        }
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        #expect(rig.session.gate.mode == (mode == .pushToTalk ? .held : .muted), "muted before the first sentence was announced")
        await rig.speaker.complete()
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, _, _) = $0 { true } else { false } })
        #expect(rig.session.gate.mode == (mode == .pushToTalk ? .held : .muted), "still muted: the tail has not run")
        #expect(await clock.waitForSleep(endingIn: BargeInPolicy().muteTail))
        clock.advance(BargeInPolicy().muteTail)
        #expect(await Self.waitForMode(rig, mode == .pushToTalk ? .held : .open))
        await rig.session.stop()
    }
}
