import AudioIO
import Testing

@testable import TalkSession

/// `BargeInEvidenceMeter`: the share of an utterance's audible frames the reply's echo explains, and whether it
/// began before the reply's sound reached the microphone.
@Suite struct BargeInEvidenceMeterTests {
    static func frame(_ sequence: UInt64, level: Int16, explained: Float?) -> AudioFrame {
        var frame = AudioFrame(sequence: sequence, captureTimeNs: 0, samples: [Int16](repeating: level, count: 320))
        frame.echoExplained = explained
        return frame
    }

    @Test func `only audible frames from the utterance's start count, and a frame is echo at half explained`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<50 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1)) }  // echo before the utterance
        for s in 50..<60 { meter.add(Self.frame(UInt64(s), level: 10, explained: 0)) }  // inaudible: not counted
        for s in 60..<64 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.5)) }
        for s in 64..<72 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.3)) }
        // From 1.2 s (frame 60) with the 5-frame pre-roll: frames 55 on; 4 of 12 audible ones are echo.
        let evidence = meter.evidence(fromPositionMs: 1200)
        #expect(evidence.echoExplained == 4.0 / 12)
        #expect(evidence.startedBeforeReplyAudio == false)
    }

    @Test func `without a canceller nothing is said, and speech before the reply's sound started before it`() {
        var plain = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<20 { plain.add(Self.frame(UInt64(s), level: 1000, explained: nil)) }
        #expect(plain.evidence(fromPositionMs: 0).echoExplained == nil)
        #expect(plain.evidence(fromPositionMs: 0).startedBeforeReplyAudio == nil)

        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<10 { meter.add(Self.frame(UInt64(s), level: 1000, explained: nil)) }  // the user, in silence
        for s in 10..<20 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1)) }  // then the reply's sound
        #expect(meter.evidence(fromPositionMs: 100).startedBeforeReplyAudio == true)
        #expect(meter.evidence(fromPositionMs: 300).startedBeforeReplyAudio == false)
    }

    @Test func `the user's sound begins at the first three audible frames in a row the reply does not explain`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<50 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.9)) }  // the echo opened the utterance at 0
        meter.add(Self.frame(50, level: 1000, explained: 0.2))  // one unexplained frame in the echo: not the user
        meter.add(Self.frame(51, level: 1000, explained: 0.8))
        for s in 52..<54 { meter.add(Self.frame(UInt64(s), level: 10, explained: 0)) }  // inaudible: not theirs
        for s in 54..<70 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.3)) }  // the user, from 1.08 s
        #expect(meter.userSound(fromPositionMs: 0) == .from(ms: 1080))
        // Echo alone: none of it is theirs.
        #expect(meter.userSound(fromPositionMs: 0) != .echoOnly)
        var echo = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<50 { echo.add(Self.frame(UInt64(s), level: 1000, explained: 0.7)) }
        #expect(echo.userSound(fromPositionMs: 0) == .echoOnly)
        // After the reply (nothing played: nil) the sound is the user's.
        for s in 50..<55 { echo.add(Self.frame(UInt64(s), level: 1000, explained: nil)) }
        #expect(echo.userSound(fromPositionMs: 0) == .from(ms: 1000))
    }

    @Test func `unmeasured or no longer kept, the user's sound is unknown`() {
        var plain = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<20 { plain.add(Self.frame(UInt64(s), level: 1000, explained: nil)) }
        #expect(plain.userSound(fromPositionMs: 0) == .unknown)
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<(BargeInEvidenceMeter.keepFrames + 10) { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.9)) }
        #expect(meter.userSound(fromPositionMs: 100) == .unknown)
        #expect(meter.userSound(fromPositionMs: 20 * 20) == .echoOnly)
    }

    @Test func `the share counts the last 3 s of a long utterance, not the echo long before the user`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<300 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.9)) }
        for s in 300..<400 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 0.1)) }
        #expect(meter.evidence(fromPositionMs: 0).echoExplained == 50.0 / 150)
    }

    /// Frames from a code: "." inaudible, "e" audible and explained (0.9), "u" audible and not (0.2).
    static func frames(_ code: String) -> [AudioFrame] {
        code.enumerated().map { i, c in
            frame(UInt64(i), level: c == "." ? 10 : 1000, explained: c == "u" ? 0.2 : 0.9)
        }
    }

    /// A loopback run that failed as CI did (RunLoopbackTests, dictation, the Gateway's voice), 9.48 s to 11.28 s of
    /// its capture replayed through the echo stages: the utterance opened at 9.58 s as the user began at a sentence's
    /// onset; the reply, at full level until its lowering reached the speaker, explained their first 600 ms; their own
    /// sound shows from 10.3 s; the partials came 2 s late, and were weighed with the capture at 12.4 s.
    static let heldRun = ".....eee......eeeeeeeeeeeeeeeee......eeeeuuuuuueeeeeeeeeeeeeeeeeee.....eeeeeeee.uu........."

    @Test func `an utterance's share is read from the user's own sound through the partial's end`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames(Self.heldRun) { meter.add(frame) }
        // From the utterance's start to the latest frame: 51 of 59 audible frames explained, over the 75 % bar.
        #expect(meter.evidence(fromPositionMs: 100).echoExplained == 51.0 / 59)
        #expect(meter.userSound(fromPositionMs: 100) == .from(ms: 41 * 20))
        // From their own sound (41 frames in) to the latest frame: still over the bar (27 of 35).
        #expect(meter.evidence(ofUtteranceAtMs: 100, throughMs: nil).echoExplained == 27.0 / 35)
        // Through a partial that ends 200 ms into their sound: 4 of its 10 audible frames.
        #expect(meter.evidence(ofUtteranceAtMs: 100, throughMs: 51 * 20).echoExplained == 4.0 / 10)
        // A partial that ends before their sound is judged from the utterance's start, through its end.
        #expect(meter.evidence(ofUtteranceAtMs: 100, throughMs: 30 * 20).echoExplained == 1)
    }

    @Test func `in the echo alone, without three unexplained frames in a row, the share is read from the utterance's start`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeueeeeuueeeeeeeu.ueee") { meter.add(frame) }
        #expect(meter.userSound(fromPositionMs: 0) == .echoOnly)
        #expect(meter.evidence(ofUtteranceAtMs: 0, throughMs: nil).echoExplained == 19.0 / 24)
        #expect(meter.evidence(ofUtteranceAtMs: 0, throughMs: nil).echoExplained == meter.evidence(fromPositionMs: 0).echoExplained)
        #expect(meter.evidence(ofUtteranceAtMs: 0, throughMs: nil).userSoundShown == false)
    }

    /// A held partial's recheck reads through the latest frame, again and again over an utterance that may be the
    /// echo's for seconds: the user's own sound there has gone on for 160 ms, not the 60 ms a residue makes.
    @Test func `a recheck counts the user's own sound only when it goes on for 160 ms`() {
        var echo = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeeeeeeeeeeeeeeeeuuueeeeee") { echo.add(frame) }
        // 60 ms of residue: a first weighing reads from it (3 of 9 explained), a recheck from the utterance's start.
        #expect(echo.evidence(ofUtteranceAtMs: 0, throughMs: nil).echoExplained == 6.0 / 9)
        #expect(echo.evidence(ofUtteranceAtMs: 0, throughMs: nil, recheck: true).echoExplained == 26.0 / 29)
        #expect(echo.evidence(ofUtteranceAtMs: 0, throughMs: nil, recheck: true).userSoundShown == false)
        // The user's "go" said over the reply at full level, then their words over the lowered reply.
        var user = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeeeeeeeeuuuuuuuuuuuuu") { user.add(frame) }
        #expect(user.evidence(ofUtteranceAtMs: 0, throughMs: nil, recheck: true).echoExplained == 0)
    }

    /// PipeWire, the Gateway's voice, goforward.gram (a recorded barge-in trial replayed through the echo stages, the
    /// one of 20 the reply was not stopped in): the user began 59 ms into a sentence; the utterance opened at 7.5 s; per
    /// frame from there, what passed the canceller (RMS) and how much of it the reply explained. The grammar said
    /// "go" and nothing new until the utterance ended, so only rechecks could cut the reply: their sound ran 7 frames,
    /// then a loud syllable of the reply within the explanation's reach, then 5, and no run of 8 came in 1.4 s.
    static let grammarGo: [(rms: Int16, explained: Float)] = [
        (1699, 1), (744, 1), (99, 1), (104, 1), (186, 1), (192, 1), (115, 1), (97, 1), (73, 1), (780, 1),
        (944, 1), (871, 1), (963, 1), (1323, 1), (1288, 1), (1207, 1), (934, 1), (527, 0.469), (326, 0.197),
        (424, 0.238), (493, 0.345), (580, 0.405), (618, 0.445), (554, 0.477), (558, 0.538), (261, 0.708), (55, 1),
        (23, 1), (16, 1), (30, 1), (9, 1), (25, 1), (267, 1), (351, 0.695), (184, 0.394), (122, 0.345),
        (1335, 0.265), (1460, 0.233), (1346, 0.279), (1134, 0.36),
    ]

    @Test func `a held word's recheck cuts in once the user's sound has gone on, though the reply's syllable broke it`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        let policy = BargeInPolicy()
        var cutAtFrame: Int?
        for (index, heard) in Self.grammarGo.enumerated() {
            meter.add(Self.frame(UInt64(index), level: heard.rms, explained: heard.explained))
            let found = meter.evidence(ofUtteranceAtMs: 0, throughMs: nil, recheck: true)
            let evidence = BargeInEvidence(echoExplained: found.echoExplained, speechMs: index * 20, userSoundShown: found.userSoundShown)
            if cutAtFrame == nil, policy.evidence.holdReason(evidence) == nil, policy.text.shortPartialHoldReason(evidence) == nil {
                cutAtFrame = index
            }
        }
        // Their own sound from frame 17 on; 160 ms later, 1 of its 8 frames explained: "go" cuts the reply then.
        #expect(cutAtFrame == 24)
    }
}

/// Where the user began speaking, for splitting a final's words: their own sound, moved back to the sound onset
/// that lowered the reply for them.
@Suite struct UserBeganSpeakingTests {
    static func frame(_ sequence: UInt64, _ level: Int16, _ explained: Float) -> AudioFrame {
        BargeInEvidenceMeterTests.frame(sequence, level: level, explained: explained)
    }

    /// The reply explains the user's first word, said over it at full level, until its lowering reaches the
    /// microphone: their onset at frame 20, their own sound from frame 35.
    static func overFullReply(onsetAt onset: UInt64?) -> BargeInEvidenceMeter {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<20 { meter.add(Self.frame(UInt64(s), 10, 1)) }  // the reply's echo, cancelled
        if let onset { meter.soundOnset(atSequence: onset) }
        for s in 20..<35 { meter.add(Self.frame(UInt64(s), 1000, 0.8)) }  // "go", with the reply at full level
        for s in 35..<60 { meter.add(Self.frame(UInt64(s), 1000, 0.2)) }  // the rest, over the lowered reply
        return meter
    }

    @Test func `a user whose first word the full reply explains began at the onset that lowered it`() {
        #expect(Self.overFullReply(onsetAt: 20).userSound(fromPositionMs: 400) == .from(ms: 700))
        #expect(Self.overFullReply(onsetAt: 20).userSpeechStart(fromPositionMs: 400) == .from(ms: 400))
        // No onset heard (the gate called nothing loud): their own sound is all there is to go by.
        #expect(Self.overFullReply(onsetAt: nil).userSpeechStart(fromPositionMs: 400) == .from(ms: 700))
    }

    @Test func `an onset before the utterance or beyond the reach is not where the user began`() {
        // Before the utterance's pre-roll: another sound.
        #expect(Self.overFullReply(onsetAt: 2).userSpeechStart(fromPositionMs: 400) == .from(ms: 700))
        // Long before their own sound, in an utterance the echo opened: the echo's onset.
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        meter.soundOnset(atSequence: 0)
        for s in 0..<(10 + BargeInEvidenceMeter.onsetReachFrames) { meter.add(Self.frame(UInt64(s), 1000, 0.9)) }
        meter.soundOnset(atSequence: UInt64(10 + BargeInEvidenceMeter.onsetReachFrames))
        for s in (10 + BargeInEvidenceMeter.onsetReachFrames)..<80 { meter.add(Self.frame(UInt64(s), 1000, 0.2)) }
        #expect(meter.userSpeechStart(fromPositionMs: 0) == .from(ms: (10 + BargeInEvidenceMeter.onsetReachFrames) * 20))
        // The echo alone stays the echo's, onset or not.
        var echo = BargeInEvidenceMeter(audibleRMS: 150)
        echo.soundOnset(atSequence: 0)
        for s in 0..<40 { echo.add(Self.frame(UInt64(s), 1000, 0.9)) }
        #expect(echo.userSpeechStart(fromPositionMs: 0) == .echoOnly)
    }
}

/// The onset hold's question (`userSoundGoesOn`): does the microphone still hear the user's own sound?
@Suite struct BargeInEvidenceMeterHoldTests {
    static let frames = BargeInEvidenceMeterTests.frames

    @Test func `the user's own sound goes on when the last 300 ms hold three unexplained audible frames in a row`() {
        var user = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeeeeeeuuuuuuuuuuuuuuuuuuuuuuuuuuuuuueeuuuu.uu") { user.add(frame) }
        #expect(user.userSoundGoesOn(lastFrames: 15))
        // The sound stopped 300 ms ago, or the echo explains it: not theirs now.
        var stopped = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("uuuuuuuuuuuuuuuuuuuuuuuuuuuuuu...............") { stopped.add(frame) }
        #expect(!stopped.userSoundGoesOn(lastFrames: 15))
        var echo = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeeeeeeeeeeeeeeeeeeeeueeeuueeeeeeeeeueeeuue") { echo.add(frame) }
        #expect(!echo.userSoundGoesOn(lastFrames: 15))
    }

    @Test func `in a pause of the reply the user's sound is theirs; with no canceller's measure nothing is`() {
        var pause = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames("eeeeeeeeeeeeeeeeeeee") { pause.add(frame) }
        for s in 20..<35 { pause.add(BargeInEvidenceMeterTests.frame(UInt64(s), level: 1000, explained: nil)) }
        #expect(pause.userSoundGoesOn(lastFrames: 15))
        var plain = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<200 { plain.add(BargeInEvidenceMeterTests.frame(UInt64(s), level: 1000, explained: nil)) }
        #expect(!plain.userSoundGoesOn(lastFrames: 15))
    }

    /// Recorded barge-ins (main 8f5dc49, PulseAudio, the local voice, 25 s), replayed through the echo stages, from
    /// 400 ms before the sound onset that lowered the reply to the onset hold's end: the user's "go", a pause, and
    /// "forward", whose onset the reply still explained (trial 9); a user whose own sound showed again at the hold's very
    /// end (trial 18: the level returned at 801 ms, the recogniser's speech start came at 816, and the relay's turn read
    /// "go forward and leaders"); the reply's echo alone at a sentence's onset (trial 18, 1.9 s before the user).
    static let goPauseForward = "....................eeeeeeeee...ueeuuuuuuuuuuueeeeee......eeuu"
    static let lateOwnSound = ".................e..eeeeeeeeeeeeeeuuuuuuuuuueeeeeee......euuuu"
    static let sentenceOnset = "....................eeeeeee..................................."

    @Test func `recorded: the user's sound goes on over the last 500 ms at the hold's end, the echo's does not`() {
        for (code, theirs) in [(Self.goPauseForward, true), (Self.lateOwnSound, true), (Self.sentenceOnset, false)] {
            var meter = BargeInEvidenceMeter(audibleRMS: 150)
            for frame in Self.frames(code) { meter.add(frame) }
            #expect(meter.userSoundGoesOn(lastFrames: BargeInEvidenceMeter.holdFrames) == theirs, "\(code)")
        }
        // Over the last 300 ms the pause after "go" hides them.
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for frame in Self.frames(Self.goPauseForward) { meter.add(frame) }
        #expect(!meter.userSoundGoesOn(lastFrames: 15))
    }

    static func frame(_ sequence: UInt64, level: Int16, explained: Float?, closely: Float?) -> AudioFrame {
        var frame = AudioFrame(sequence: sequence, captureTimeNs: 0, samples: [Int16](repeating: level, count: 320))
        frame.echoExplained = explained
        frame.echoExplainedClosely = closely
        return frame
    }

    /// A user 20 dB under the reply's echo (`bench talk --user-gain-db -12`) is still 5 dB under it lowered: the
    /// window reading explains their frames whole, the close one leaves the gaps between the reply's syllables to them.
    @Test func `while the reply plays lowered, from the lowering on, a frame the close reading leaves unexplained is the user's`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<20 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1, closely: 0.2)) }
        // At the reply's level the close reading is not read: the echo.
        #expect(meter.userSound(fromPositionMs: 0) == .echoOnly)
        meter.replyPlays(atGain: 0.178)
        // From the next frame on it is, before the lowered reply reaches the microphone too: the sound that lowered it
        // may be the user's word in a pause of the reply.
        for s in 20..<26 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1, closely: 0.9)) }
        #expect(meter.userSound(fromPositionMs: 0) == .echoOnly)
        for s in 26..<30 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1, closely: 0.3)) }
        #expect(meter.userSound(fromPositionMs: 0) == .from(ms: 26 * 20))
        #expect(meter.evidence(ofUtteranceAtMs: 0, throughMs: nil).echoExplained == 0)
        // The level returns: the window's reading alone again.
        meter.replyPlays(atGain: 1)
        for s in 30..<40 { meter.add(Self.frame(UInt64(s), level: 1000, explained: 1, closely: 0.2)) }
        #expect(meter.userSound(fromPositionMs: 30 * 20) == .echoOnly)
    }
}
