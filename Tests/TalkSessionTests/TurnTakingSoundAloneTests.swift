import AudioIO
import Testing

@testable import TalkSession

/// Barge-in on the user's sound before their words (`BargeInPolicy.Evidence.stopsOnUserSoundBeforeWords`).
@Suite struct TurnTakingSoundAloneTests {
    typealias E = TurnTaking.Event
    typealias Row = TurnTakingTests.Row

    static let opened: [E] = TurnTakingTests.speaking + [.speechStarted(positionMs: 5000, atNs: 1_500_000_000)]
    static let lasting = BargeInEvidence(echoExplained: 0.1, speechMs: 300, userSoundShown: true)
    static let echo = BargeInEvidence(echoExplained: 1, speechMs: 300, userSoundShown: false)

    static let rows: [Row] = [
        Row(name: "the user's lasting sound, loud enough, cuts in before any words", before: opened,
            event: .bargeInEvidence(partial: "", lasting, loudEnough: true, atNs: 1_900_000_000),
            actions: [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold),
                      .emit(.bargeIn(offsetSeconds: 0.9, detectionLatencyMs: 400, partial: "")),
                      .emit(.replyLevel(gain: 1, reason: "the reply was cut off")),
                      .emit(.stateChanged(from: .speaking, to: .listening, reason: "barge-in")), .announce(.listening),
                      .turnEnded(reason: .bargeIn)],
            state: .listening),
        Row(name: "sound the reply explains waits quietly and is weighed again shortly", before: opened,
            event: .bargeInEvidence(partial: "", echo, loudEnough: true, atNs: 1_900_000_000),
            actions: [.arm(.evidenceRecheck, .milliseconds(40))], state: .speaking),
        Row(name: "a quiet sound of the user's waits", before: opened,
            event: .bargeInEvidence(partial: "", lasting, loudEnough: false, atNs: 1_900_000_000),
            actions: [.arm(.evidenceRecheck, .milliseconds(40))], state: .speaking),
        Row(name: "without an echo measure the sound alone is not weighed again", before: opened,
            event: .bargeInEvidence(partial: "", BargeInEvidence(speechMs: 300), loudEnough: true, atNs: 1_900_000_000),
            actions: [], state: .speaking),
        Row(name: "the recheck with no words weighs the sound again", before: opened + [.bargeInEvidence(partial: "", echo, loudEnough: true, atNs: 1_550_000_000)],
            event: .timerFired(.evidenceRecheck), actions: [TurnTakingTests.soundAlone], state: .speaking),
        Row(name: "once a partial is being weighed, the sound's answer is not the one to decide",
            before: opened + [.partial("stop right there", atNs: 1_800_000_000)],
            event: .bargeInEvidence(partial: "", lasting, loudEnough: true, atNs: 1_900_000_000),
            actions: [], state: .speaking),
        Row(name: "with the rule off an utterance over the reply waits for words",
            configuration: { var c = TurnTaking.Configuration(); c.policy.evidence.stopsOnUserSoundBeforeWords = false; return c }(),
            before: TurnTakingTests.speaking + [.soundOnset], event: .speechStarted(positionMs: 5000, atNs: 1_500_000_000),
            actions: [.emit(.speechStarted(positionMs: 5000)), .cancel(.evidenceRecheck), .cancel(.onsetHold)], state: .speaking),
    ]

    @Test(arguments: rows)
    func `event to actions`(row: Row) { row.check() }

    /// PipeWire, the Gateway's voice, goforward.gram, recorded barge-in f27 trial 1 replayed through the echo stages:
    /// per 20 ms frame from 100 ms before the utterance's first voiced frame, what passed the canceller (RMS) and how
    /// much of it the reply explained (nil: nothing played within the echo's reach). The user began 41 ms in; "go"
    /// (frames 5 to 10) met the reply at full level; their own sound shows from frame 20 ("forward"). The grammar's
    /// first partial was "go forward", at 760 ms: live, the reply stopped 688 ms after they began.
    static let grammarNoGo: [(rms: Int16, explained: Float?)] = [
        (0, 1), (0, 1), (0, 1), (3, 1), (7, 1), (848, 1), (1135, 0.934), (1603, 0.634), (1867, 0.512), (751, 0.558),
        (275, 0.685), (233, 1), (209, 1), (159, 1), (164, 1), (216, 1), (373, 1), (2247, 1), (2853, 1), (3045, 0.909),
        (2891, 0.027), (2621, 0.022), (2250, 0.009), (1784, 0.007), (1181, 0.002), (622, 0.002), (534, 0.004), (692, 0.007),
        (741, nil), (770, nil), (744, nil), (663, nil), (647, nil), (420, nil), (81, nil), (42, nil), (20, nil), (74, nil),
        (10, nil), (41, nil), (239, nil),
    ]

    /// The machine and the meter on that trial's frames, the machine's asks answered from the frames heard so far
    /// and its rechecks fired 40 ms after they are armed: the frame the reply is cut at.
    static func cutFrame(policy: BargeInPolicy = BargeInPolicy()) -> Int? {
        var configuration = TurnTaking.Configuration()
        configuration.policy = policy
        var machine = TurnTaking(configuration)
        for event in TurnTakingTests.speaking { _ = machine.handle(event) }
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        let position = 100, startedAt = 18, partialAt = 38
        var recheckAt: Int?
        for (index, heard) in grammarNoGo.enumerated() {
            meter.add(BargeInEvidenceMeterTests.frame(UInt64(index), level: heard.rms, explained: heard.explained))
            let atNs = UInt64(2_000 + index * 20) * 1_000_000
            var events: [E] = []
            if index == startedAt { events.append(.speechStarted(positionMs: position, atNs: atNs)) }
            if index == partialAt { events.append(.partial("go forward", atNs: atNs, endMs: index * 20)) }
            if recheckAt == index { recheckAt = nil; events.append(.timerFired(.evidenceRecheck)) }
            while !events.isEmpty {
                for action in machine.handle(events.removeFirst()) {
                    switch action {
                    case .weighBargeIn(let partial, let from, let through, let recheck):
                        let found = meter.evidence(ofUtteranceAtMs: from, throughMs: through, recheck: recheck)
                        let evidence = BargeInEvidence(echoExplained: found.echoExplained, speechMs: 0, userSoundShown: found.userSoundShown)
                        events.append(.bargeInEvidence(partial: partial, evidence, loudEnough: true, atNs: atNs))
                    case .arm(.evidenceRecheck, _): recheckAt = index + 2
                    case .cancel(.evidenceRecheck): recheckAt = nil
                    case .turnEnded(.bargeIn): return index
                    default: break
                    }
                }
            }
        }
        return nil
    }

    @Test func `a grammar's user whose first word the reply explained stops it on their sound before the grammar's first partial`() {
        // Their own sound from frame 20 has gone on 160 ms through frame 27; the recheck after it (frame 28, 519 ms
        // after they began) cuts the reply, 200 ms before the partial would.
        #expect(Self.cutFrame() == 28)
        var wordsNeeded = BargeInPolicy()
        wordsNeeded.evidence.stopsOnUserSoundBeforeWords = false
        #expect(Self.cutFrame(policy: wordsNeeded) == 38)
    }
}
