import AudioIO
import Dispatch
import Synchronization
import Testing
import Threading

@testable import TalkSession

/// The reply lowered at a sound over it by the microphone gate itself, on the machine's standing order
/// (`TurnTaking.soundOnsetLowering`, `MicrophoneGate.lowerAtSoundOnset`): under load the Talk loop's actor waited
/// for the cooperative pool and the reply came down 320 ms after the user's onset.
@Suite struct OnsetLoweringTests {
    typealias Row = TurnTakingTests.Row
    static let lowered = TurnTakingTests.lowered
    static let speaking = TurnTakingTests.speaking

    static let rows: [Row] = [
        Row(name: "the gate lowered the reply at the onset: the machine says so and holds, without setting the level again",
            before: speaking, event: .soundOnset(positionMs: 4000, loweredTo: lowered),
            actions: [.emit(.replyLevel(gain: Double(lowered), reason: "sound over the reply")), .arm(.onsetHold, .milliseconds(800))],
            state: .speaking),
        Row(name: "the gate lowered the reply as it ended: the level returns for the next reply",
            before: speaking + [.replyEnded(atNs: 3_000_000_000)], event: .soundOnset(positionMs: 4000, loweredTo: lowered),
            actions: [.setReplyGain(1)], state: .listening),
        Row(name: "the gate lowered the reply as an utterance lowered it: it stays lowered",
            before: speaking + [.speechStarted(positionMs: 5000, atNs: 1_500_000_000)],
            event: .soundOnset(positionMs: 5100, loweredTo: lowered), actions: [], state: .speaking),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) { row.check() }

    @Test func `the machine orders a lowering only while a sound over the reply would lower it`() {
        var machine = TurnTaking()
        #expect(machine.soundOnsetLowering == nil)
        for event in Self.speaking { _ = machine.handle(event) }
        #expect(machine.soundOnsetLowering == Self.lowered)
        _ = machine.handle(.soundOnset(positionMs: 4000, loweredTo: Self.lowered))
        #expect(machine.soundOnsetLowering == nil, "lowered already")
        machine.interruptOnSpeech = false
        _ = machine.handle(.timerFired(.onsetHold))
        #expect(machine.soundOnsetLowering == nil, "barge-in off")
    }

    /// Holds an actor's executor (a pool thread with it) until released, as a loaded machine holds the pool.
    final class ActorHold: Sendable {
        private let holding = Mutex(false)
        private let released = DispatchSemaphore(value: 0)

        func hold(_ session: isolated TalkSession) {
            holding.withLock { $0 = true }
            released.wait()
        }

        var isHolding: Bool { holding.withLock { $0 } }
        func release() { released.signal() }
    }

    @Test func `sound over the reply lowers it while the loop's actor is busy, and the loop hears of it after`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        let hold = ActorHold()
        let holding = Task { await hold.hold(rig.session) }
        #expect(await TalkSessionReplyLevelTests.eventually { hold.isHolding })
        await rig.microphone.push(amplitude: 0, count: 10)
        await rig.microphone.push(amplitude: 8000, count: 10)
        let lowered = await TalkSessionReplyLevelTests.eventually { await rig.speaker.gains == [Self.lowered] }
        hold.release()
        await holding.value
        let gains = await rig.speaker.gains
        #expect(lowered, "lowered while the loop was held: \(gains)")
        #expect(await rig.log.waitFor { if case .replyLevel(_, "sound over the reply") = $0 { true } else { false } })
        #expect(await rig.session.timers.isArmed(.onsetHold))
        #expect(await rig.speaker.gains == [Self.lowered], "set once")
        await rig.session.stop()
    }

    /// A microphone on a thread of its own, as `EchoCancellingCapture` is.
    actor ThreadedMicrophone: AudioCaptureDevice {
        static let threadName = "test-microphone"
        private let executor = ThreadSerialExecutor(name: threadName)
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private var frames = SquareWaveFrames()

        func start() -> AsyncStream<CaptureEvent> { frames.start() }
        func stop() { frames.stop() }
        func push(amplitude: Int16, count: Int) { frames.push(amplitude: amplitude, count: count) }
    }

    @Test func `the gate lowers the reply on its microphone's thread, once for each order`() async throws {
        let microphone = ThreadedMicrophone()
        let speaker = FakeSpeaker()
        let gate = MicrophoneGate(microphone, speaker: speaker)
        // Kept: the gate stops forwarding once its stream is dropped.
        let frames = try await gate.start()
        var onsets = gate.soundOnsets.makeAsyncIterator()
        gate.lowerAtSoundOnset(0.25)
        await microphone.push(amplitude: 0, count: 10)
        await microphone.push(amplitude: 8000, count: 10)
        #expect(await onsets.next()?.loweredTo == 0.25)
        #expect(await speaker.gains == [0.25])
        #expect(await speaker.gainThreads == [ThreadedMicrophone.threadName])
        await microphone.push(amplitude: 0, count: 20)
        await microphone.push(amplitude: 8000, count: 10)
        let next = await onsets.next()
        #expect(next != nil && next?.loweredTo == nil, "no order given again")
        #expect(await speaker.gains == [0.25])
        withExtendedLifetime(frames) {}
        await gate.stop()
    }
}
