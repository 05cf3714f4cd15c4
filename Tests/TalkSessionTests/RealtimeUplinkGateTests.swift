import AudioIO
import Testing

@testable import TalkSession

/// What the relay hears while the answer's sound is in the microphone: the canceller's leak of the answer, which a
/// provider's server VAD takes for the user and cuts the answer on, reaches it as silence, in time; the user's speech
/// over the answer reaches it from its onset, once their own sound shows.
@Suite struct RealtimeUplinkGateTests {
    /// A gate fed 20 ms frames in order; `sent` is everything it let out, in order.
    struct Feed {
        var gate = RealtimeUplinkGate()
        var sequence: UInt64 = 0
        var fed = 0
        var sent: [Int16] = []

        /// `count` frames of a square wave of `amplitude`, each `explained` by the answer's audio (nil: no measure);
        /// `linear`: what the canceller's linear stage left of each (a square wave of that amplitude); `onsetAt`:
        /// the frame (of these) that makes a sound onset; `closely`: how much of each its close reference explains.
        mutating func hear(amplitude: Int16, count: Int, explained: Float?, linear: Int16? = nil, onsetAt: Int? = nil, closely: Float? = nil) {
            func square(_ amplitude: Int16) -> [Int16] { (0..<AudioFrame.samplesPerFrame).map { $0 % 20 < 10 ? amplitude : -amplitude } }
            for i in 0..<count {
                var frame = AudioFrame(sequence: sequence, captureTimeNs: 0, samples: square(amplitude))
                frame.echoExplained = explained
                frame.linearSamples = linear.map(square)
                frame.echoExplainedClosely = closely
                sent += gate.pass(frame, soundOnset: i == onsetAt)
                sequence += 1
                fed += AudioFrame.samplesPerFrame
            }
        }

        /// One frame per reading: a square wave of `amplitude`, `explained` by the answer's audio over the window and
        /// `closely` by its reference at the echo's lag.
        mutating func hear(_ frames: [(amplitude: Int16, explained: Float, closely: Float)]) {
            for frame in frames { hear(amplitude: frame.amplitude, count: 1, explained: frame.explained, closely: frame.closely) }
        }

        /// The loudest sample of each 20 ms frame sent, in order.
        var sentPeaks: [Int16] {
            stride(from: 0, to: sent.count, by: AudioFrame.samplesPerFrame).map { sent[$0..<min($0 + AudioFrame.samplesPerFrame, sent.count)].max() ?? 0 }
        }
    }

    static let held = RealtimeUplinkGate.heldFrames

    @Test func `the answer's leak reaches the relay as silence, as long as it was heard, and what follows it as heard`() {
        var feed = Feed()
        feed.hear(amplitude: 40, count: 5, explained: nil)   // the room, before the answer
        feed.hear(amplitude: 3_000, count: 60, explained: 1)   // the canceller's leak at the answer's loud words
        #expect(feed.sent.count == feed.fed - Self.held * AudioFrame.samplesPerFrame, "not sent in time")
        feed.hear(amplitude: 40, count: 5, explained: nil)   // the answer's sound out of reach
        #expect(feed.sent.count == feed.fed)
        #expect(feed.sentPeaks == Array(repeating: 40, count: 5) + Array(repeating: 0, count: 60) + Array(repeating: 40, count: 5))
    }

    @Test func `the echo's odd unexplained frames do not let it through`() {
        var feed = Feed()
        for _ in 0..<20 {   // two frames in a row the answer does not explain, now and then
            feed.hear(amplitude: 3_000, count: 2, explained: 0.2)
            feed.hear(amplitude: 3_000, count: 3, explained: 0.9)
        }
        #expect(!feed.gate.isOpen)
        #expect(feed.sentPeaks.allSatisfy { $0 == 0 })
        #expect(feed.sent.count == feed.fed - Self.held * AudioFrame.samplesPerFrame)
    }

    @Test func `the user over the answer reaches the relay from their onset, which the answer seemed to explain`() {
        var feed = Feed()
        feed.hear(amplitude: 3_000, count: 20, explained: 1)   // the leak
        // The user: their first 80 ms read as the answer's (the explanation's 100 ms window), then their own sound.
        feed.hear(amplitude: 5_000, count: 4, explained: 1)
        feed.hear(amplitude: 5_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1)
        #expect(feed.gate.isOpen)
        #expect(feed.sent.count == feed.fed, "what was held did not go out when the user opened the gate")
        let onset = 20
        #expect(Array(feed.sentPeaks[onset...]) == Array(repeating: 5_000, count: 4 + BargeInEvidenceMeter.userRunFrames))
        // While they speak on, what the answer explains goes out at once, as heard.
        feed.hear(amplitude: 5_000, count: 10, explained: 0.8)
        #expect(feed.sent.count == feed.fed)
        #expect(feed.sentPeaks.suffix(10) == Array(repeating: 5_000, count: 10))
    }

    /// f27's realtime barge-ins on PipeWire (`bench talk --mode realtime`, short answer): in 5 of 20 the user began
    /// under the answer's last sound before a pause, their first 280 ms held as its leak, and the relay got them as
    /// silence when the pause put the answer out of reach ("our words ten meters" for "go forward ten meters").
    @Test func `a user who began under the answer's last sound reaches the relay from their onset once nothing plays`() {
        var feed = Feed()
        feed.hear(amplitude: 3_000, count: 20, explained: 1)   // the leak
        feed.hear(amplitude: 5_000, count: 14, explained: 1)   // the user, under the answer's last sound
        feed.hear(amplitude: 5_000, count: BargeInEvidenceMeter.userRunFrames, explained: nil)   // the answer out of reach
        #expect(feed.gate.isOpen)
        #expect(feed.sent.count == feed.fed, "what was held did not go out when the user opened the gate")
        #expect(Array(feed.sentPeaks[20...]) == Array(repeating: 5_000, count: 14 + BargeInEvidenceMeter.userRunFrames))
        feed.hear(amplitude: 5_000, count: 10, explained: nil)
        #expect(feed.sentPeaks.suffix(10) == Array(repeating: 5_000, count: 10))
    }

    /// Recorded realtime answers on PipeWire (f38's self-echo row, trials 0 and 10, the same pause of the answer): the
    /// sound after a pause reached the microphone off where its reference was placed and louder than the reference
    /// there, through every stage; the window read three frames of it in a row under half explained (0.34 to 0.46) and
    /// the relay's VAD cleared the answer. The reference at the echo's lag explained all but the first of them.
    static let echoOffItsReference: [[(amplitude: Int16, explained: Float, closely: Float)]] = [
        [(9, 1, 0), (18, 1, 0), (3_123, 1, 0), (4_273, 0.45, 0), (2_583, 0.44, 1), (360, 0.46, 1), (233, 0.54, 1), (162, 0.88, 1), (76, 1, 1)],
        [(4, 1, 0.01), (598, 1, 0.01), (1_185, 1, 0), (3_316, 0.71, 0), (3_011, 0.44, 0.44), (194, 0.34, 1), (199, 0.36, 1), (66, 0.42, 1), (55, 1, 1)],
    ]

    @Test(arguments: echoOffItsReference.indices)
    func `the echo placed off its reference after a pause reaches the relay as silence`(trial: Int) {
        var feed = Feed()
        feed.hear(amplitude: 20, count: 30, explained: 1, closely: 1)   // the answer's echo, cancelled
        feed.hear(amplitude: 0, count: 3, explained: 1, closely: 1)   // its pause
        feed.hear(Self.echoOffItsReference[trial])
        feed.hear(amplitude: 20, count: 10, explained: 1, closely: 1)
        let open = feed.gate.isOpen
        #expect(!open, "the echo opened the gate")
        #expect(feed.sentPeaks.allSatisfy { $0 == 0 }, "the relay heard the echo")
        // The same sound where the reference at the echo's lag is quiet is someone else's: the user opens the gate.
        var user = Feed()
        user.hear(amplitude: 20, count: 30, explained: 1, closely: 1)
        user.hear(Self.echoOffItsReference[trial].map { ($0.amplitude, $0.explained, Float(0.1)) })
        let userOpen = user.gate.isOpen
        #expect(userOpen, "the user's own sound did not open the gate")
    }

    /// f38's realtime barge-ins on PipeWire (trials 0, 2, 6): the close reading explained the user's first 200 ms whole
    /// while the window read them 0.02 to 0.22: their own sound all the same.
    @Test func `a user whose first frames the reference at the echo's lag seems to explain opens the gate on their window reading`() {
        var feed = Feed()
        feed.hear(amplitude: 20, count: 30, explained: 1, closely: 1)   // the answer's echo, cancelled
        feed.hear([(1_581, 1, 1), (1_790, 0.22, 1), (1_925, 0.02, 1), (1_049, 0.03, 1)])
        let open = feed.gate.isOpen
        #expect(open, "the user's own sound did not open the gate")
        #expect(Array(feed.sentPeaks.suffix(4)) == [1_581, 1_790, 1_925, 1_049])
    }

    @Test func `a knock as the answer goes out of reach, too short to be the user, goes out as silence with the held leak`() {
        var feed = Feed()
        feed.hear(amplitude: 3_000, count: 40, explained: 1)   // the leak
        feed.hear(amplitude: 5_000, count: BargeInEvidenceMeter.userRunFrames - 1, explained: nil)   // a knock
        feed.hear(amplitude: 40, count: 5, explained: nil)   // the room
        #expect(!feed.gate.isOpen)
        #expect(feed.sent.count == feed.fed)
        #expect(feed.sentPeaks == Array(repeating: 0, count: 40 + BargeInEvidenceMeter.userRunFrames - 1) + Array(repeating: 40, count: 5))
    }

    @Test func `a second after the user's own sound the leak is held back again`() {
        var feed = Feed()
        feed.hear(amplitude: 5_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1)
        feed.hear(amplitude: 3_000, count: RealtimeUplinkGate.openFrames, explained: 1)
        #expect(!feed.gate.isOpen)
        feed.hear(amplitude: 3_000, count: Self.held + 20, explained: 1)
        #expect(feed.sent.count == feed.fed - Self.held * AudioFrame.samplesPerFrame)
        let open = BargeInEvidenceMeter.userRunFrames + RealtimeUplinkGate.openFrames - 1
        #expect(feed.sentPeaks == Array(repeating: 5_000, count: BargeInEvidenceMeter.userRunFrames)
                + Array(repeating: 3_000, count: RealtimeUplinkGate.openFrames - 1)
                + Array(repeating: 0, count: feed.sentPeaks.count - open))
    }

    /// A user a metre from speakers at full level: their frames, quieter than the answer's echo, read 0.9 explained
    /// (the explanation's raw level against the loudest reference in its reach), never under half.
    static let quietUser: (amplitude: Int16, explained: Float) = (600, 0.9)
    static let reach = RealtimeUplinkGate.loweredReachFrames

    @Test func `a user quieter than the answer's echo reaches the relay from their onset once the answer is lowered`() {
        var feed = Feed()
        feed.hear(amplitude: 40, count: 20, explained: 1)   // the answer's echo, cancelled
        feed.gate.answerLowered()   // their onset lowered the answer
        feed.hear(amplitude: Self.quietUser.amplitude, count: Self.reach, explained: 1)   // the answer still at its level
        let early = feed.gate.isOpen
        #expect(!early, "opened before the lowered answer reached the microphone")
        feed.hear(amplitude: Self.quietUser.amplitude, count: RealtimeUplinkGate.loweredOwnFrames, explained: Self.quietUser.explained)
        let open = feed.gate.isOpen
        #expect(open, "the quiet user never opened the gate")
        #expect(feed.sent.count == feed.fed, "what was held did not go out when the user opened the gate")
        let user = Self.reach + RealtimeUplinkGate.loweredOwnFrames
        #expect(Array(feed.sentPeaks.suffix(user)) == Array(repeating: Self.quietUser.amplitude, count: user))
    }

    @Test func `over the lowered answer its odd audible frames and a canceller that lost the echo stay held`() {
        var feed = Feed()
        feed.gate.answerLowered()
        feed.hear(amplitude: 40, count: Self.reach, explained: 1)
        for _ in 0..<10 {   // the lowered answer's leak: fewer audible frames than the user's in every window
            feed.hear(amplitude: 600, count: RealtimeUplinkGate.loweredOwnFrames - 1, explained: 0.9)
            feed.hear(amplitude: 40, count: RealtimeUplinkGate.loweredWindowFrames, explained: 1)
        }
        // A misplaced reference: the lowered echo through the canceller, loud, and the answer's whole.
        feed.hear(amplitude: 3_000, count: 30, explained: RealtimeUplinkGate.loweredExplainedFrame)
        let open = feed.gate.isOpen
        #expect(!open)
        #expect(feed.sentPeaks.allSatisfy { $0 == 0 })
        // At the answer's level the quiet user's frames are the answer's: its lowering is what tells them apart.
        var level = Feed()
        level.hear(amplitude: Self.quietUser.amplitude, count: 60, explained: Self.quietUser.explained)
        let levelOpen = level.gate.isOpen
        #expect(!levelOpen && level.sentPeaks.allSatisfy { $0 == 0 })
    }

    /// Recorded realtime answers without a user (f35b's PipeWire trial 4): the lowered echo the canceller lost, read
    /// 0.62 to 0.82 over the window and whole at the echo's lag.
    @Test func `over the lowered answer the echo its reference at the lag explains stays held`() {
        var feed = Feed()
        feed.gate.answerLowered()
        feed.hear(amplitude: 40, count: Self.reach, explained: 1, closely: 1)
        feed.hear([(238, 0.82, 1), (227, 0.69, 1), (210, 0.62, 1), (182, 0.62, 0.93), (240, 0.7, 1)])
        let open = feed.gate.isOpen
        #expect(!open, "the lowered echo opened the gate")
        #expect(feed.sentPeaks.allSatisfy { $0 == 0 })
        // The quiet user over it stands over the reference at the lag.
        var user = Feed()
        user.gate.answerLowered()
        user.hear(amplitude: 40, count: Self.reach, explained: 1, closely: 1)
        user.hear([(238, 0.82, 0.3), (227, 0.69, 0.2), (210, 0.62, 0.3), (182, 0.62, 0.4)])
        let userOpen = user.gate.isOpen
        #expect(userOpen, "the quiet user never opened the gate")
    }

    @Test func `the answer's level returning closes what the lowered evidence opened; the answer stopping does not`() {
        func opened() -> Feed {
            var feed = Feed()
            feed.gate.answerLowered()
            feed.hear(amplitude: Self.quietUser.amplitude, count: Self.reach + RealtimeUplinkGate.loweredOwnFrames, explained: Self.quietUser.explained)
            let open = feed.gate.isOpen
            #expect(open)
            return feed
        }
        var returned = opened()
        returned.gate.answerLevelReturned()   // no utterance followed: it was not them
        let reopened = returned.gate.isOpen
        #expect(!reopened)
        let sentBefore = returned.sentPeaks.count
        returned.hear(amplitude: 3_000, count: Self.held + 5, explained: 1)   // the answer's leak at its level again
        #expect(returned.sentPeaks.count == sentBefore + 5 && returned.sentPeaks.dropFirst(sentBefore).allSatisfy { $0 == 0 })
        var stopped = opened()
        stopped.gate.answerStopped()   // their barge-in stopped the answer: they go on being heard
        let stillOpen = stopped.gate.isOpen
        #expect(stillOpen)
        stopped.hear(amplitude: Self.quietUser.amplitude, count: 5, explained: 1)
        #expect(stopped.sentPeaks.suffix(5) == Array(repeating: Self.quietUser.amplitude, count: 5))
    }

    /// Over the answer at full level WebRTC and the residual suppressor take the user's first frames down with its
    /// echo (here to 300), where the linear stage left them whole (5 000 with the echo, 6 000 once it left):
    /// issue 22's realtime barge-ins, the relay hearing "oh forward ten meters" for "go forward ten meters".
    @Test func `the user's onset reaches the relay as the linear stage left it once their own sound opens the gate`() {
        let settings = HeldUtteranceRelease.Settings()
        let before = settings.linearBeforeOnsetMs / AudioFrame.durationMs, after = settings.linearAfterOnsetMs / AudioFrame.durationMs
        var feed = Feed()
        feed.hear(amplitude: 300, count: 10, explained: 1, linear: 3_000)   // the leak, the echo in the linear stage
        // The user: their first 160 ms taken down with the echo; their sound onset is the second loud frame.
        feed.hear(amplitude: 300, count: 8, explained: 1, linear: 5_000, onsetAt: 1)
        feed.hear(amplitude: 2_000, count: 4, explained: 1, linear: 5_500)
        feed.hear(amplitude: 4_000, count: 13, explained: 0.1, linear: 6_000)
        #expect(feed.gate.isOpen)
        #expect(feed.sent.count == feed.fed, "what was held did not go out when the user opened the gate")
        // The frames from 60 ms before the onset (the second loud frame's predecessor) to 300 ms after it.
        let onset = 10 + 1 - (SpeechEnergy.onsetFrames - 1)
        let linearFrames = (onset - before)..<(onset + after)
        let heard: [Int16] = Array(repeating: 300, count: 18) + Array(repeating: 2_000, count: 4) + Array(repeating: 4_000, count: 13)
        let linear: [Int16] = Array(repeating: 3_000, count: 10) + Array(repeating: 5_000, count: 8) + Array(repeating: 5_500, count: 4)
            + Array(repeating: 6_000, count: 13)
        #expect(feed.sentPeaks == heard.indices.map { linearFrames.contains($0) ? linear[$0] : heard[$0] })
    }

    @Test func `the linear stage's output never goes out while the gate holds or sends the leak as silence`() {
        var feed = Feed()
        feed.hear(amplitude: 300, count: 40, explained: 1, linear: 5_000, onsetAt: 20)   // the leak, an onset in it
        feed.hear(amplitude: 40, count: 5, explained: nil, linear: 5_000)   // the answer out of reach
        #expect(!feed.gate.isOpen)
        #expect(feed.sentPeaks == Array(repeating: 0, count: 40) + Array(repeating: 40, count: 5))
    }

    @Test func `an onset that began a long stretch of the echo's onsets sends no linear output when the user opens the gate`() {
        var feed = Feed()
        for _ in 0..<6 {   // the echo's leak makes an onset every 300 ms, over 800 ms before the gate opens
            feed.hear(amplitude: 300, count: 15, explained: 1, linear: 5_000, onsetAt: 0)
        }
        feed.hear(amplitude: 4_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1, linear: 6_000)
        #expect(feed.gate.isOpen)
        #expect(feed.sentPeaks.suffix(BargeInEvidenceMeter.userRunFrames) == Array(repeating: 4_000, count: BargeInEvidenceMeter.userRunFrames))
        #expect(!feed.sentPeaks.contains(5_000))
    }

    /// Issue 22, realtime on PipeWire: a user who began as one of the answer's sentences began had their first word
    /// muted by the residual suppressor (its longer run in a sentence's first second) and taken down by WebRTC, so
    /// their first sound onset was their second word, and the relay heard "our ten meters" for "go forward ten
    /// meters". The linear stage kept the first word, and its frames stood out from their close reference.
    @Test func `a first word the stages took down reaches the relay from the linear stage when the user's own sound opens the gate`() {
        var feed = Feed()
        feed.hear(amplitude: 300, count: 20, explained: 1, linear: 3_000, closely: 1)   // the leak
        feed.hear(amplitude: 20, count: 8, explained: 1, linear: 5_000, closely: 0.1)   // their first word, muted
        feed.hear(amplitude: 300, count: 5, explained: 1, linear: 3_000, closely: 1)   // the answer's loud syllable
        feed.hear(amplitude: 2_000, count: 10, explained: 1, linear: 5_500, onsetAt: 1, closely: 1)   // their second word
        feed.hear(amplitude: 4_000, count: 13, explained: 0.1, linear: 6_000, closely: 0.1)   // the answer lowered
        #expect(feed.gate.isOpen)
        #expect(feed.sent.count == feed.fed, "what was held did not go out when the user opened the gate")
        let settings = RealtimeUplinkGate.onsetRelease
        let margin = settings.marginMs / AudioFrame.durationMs, before = settings.linearBeforeOnsetMs / AudioFrame.durationMs
        let after = settings.linearAfterOnsetMs / AudioFrame.durationMs
        let onset = 20   // their first word's first frame
        let heard: [Int16] = Array(repeating: 300, count: 20) + Array(repeating: 20, count: 8) + Array(repeating: 300, count: 5)
            + Array(repeating: 2_000, count: 10) + Array(repeating: 4_000, count: 13)
        let linear: [Int16] = Array(repeating: 3_000, count: 20) + Array(repeating: 5_000, count: 8) + Array(repeating: 3_000, count: 5)
            + Array(repeating: 5_500, count: 10) + Array(repeating: 6_000, count: 13)
        // Silence before the onset's margin (the answer's leak), the linear stage's output around their onset.
        let expected = heard.indices.map { $0 < onset - margin ? 0 : (onset - before..<onset + after).contains($0) ? linear[$0] : heard[$0] }
        #expect(Array(feed.sentPeaks[onset..<onset + 8]) == Array(repeating: 5_000, count: 8), "their first word did not go out")
        #expect(feed.sentPeaks == expected)
    }

    /// The gate opens once the lowered answer reaches the microphone; where the user's first word gave no onset, that
    /// was 800 ms after they began (issue 22's realtime barge-ins on PipeWire, the user 1 s into the answer), and a
    /// gate holding 500 ms had sent their first word as silence.
    @Test func `a user whose own sound opens the gate 800 ms after their first word reaches the relay from that word`() {
        var feed = Feed()
        feed.hear(amplitude: 20, count: 8, explained: 1, linear: 5_000, closely: 0.1)   // their first word, muted
        feed.hear(amplitude: 300, count: 12, explained: 1, linear: 3_000, closely: 1)   // the answer's loud syllable
        feed.hear(amplitude: 2_000, count: 20, explained: 1, linear: 5_500, onsetAt: 1, closely: 1)   // their next words
        feed.hear(amplitude: 4_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1)
        #expect(feed.gate.isOpen)
        #expect(Array(feed.sentPeaks.prefix(8)) == Array(repeating: 5_000, count: 8), "their first word did not go out")
    }

    /// A stretch of sound onsets that began with the answer's leak 700 ms before the user's own sound: the relay heard
    /// the leak in front of their first word ("one go forward ten meters") once the gate held a second.
    @Test func `the leak of a stretch that began over 500 ms before the user's own sound goes out as silence`() {
        var feed = Feed()
        feed.hear(amplitude: 300, count: 5, explained: 1)
        feed.hear(amplitude: 1_000, count: 30, explained: 1, onsetAt: 1)   // the leak's onset starts the stretch
        feed.hear(amplitude: 4_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1)
        #expect(feed.gate.isOpen)
        let reach = RealtimeUplinkGate.onsetReachFrames
        #expect(feed.sentPeaks.filter { $0 == 1_000 }.count == reach - BargeInEvidenceMeter.userRunFrames + 1)
        #expect(Array(feed.sentPeaks.prefix(feed.sentPeaks.count - reach - 1)).allSatisfy { $0 == 0 })
    }

    @Test func `a user whose own sound in the linear stage began with their first onset reaches the relay from it however late the gate opens`() {
        var feed = Feed()
        feed.hear(amplitude: 300, count: 5, explained: 1, linear: 3_000, closely: 1)   // the leak
        feed.hear(amplitude: 2_000, count: 2, explained: 1, linear: 5_000, onsetAt: 1, closely: 0.1)   // their onset
        feed.hear(amplitude: 2_000, count: 30, explained: 1, linear: 5_500, closely: 1)   // under the answer at full level
        feed.hear(amplitude: 4_000, count: BargeInEvidenceMeter.userRunFrames, explained: 0.1)
        #expect(feed.gate.isOpen)
        #expect(Array(feed.sentPeaks[5..<7]) == [5_000, 5_000], "their onset did not go out")
    }
}
