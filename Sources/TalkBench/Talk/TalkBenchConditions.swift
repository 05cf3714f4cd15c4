import Foundation
import SessionBridge

/// The conditions `bench talk`'s live half runs in: whose voice speaks the reply, how long the reply is, which
/// sound server plays and hears it, and whether the daemon recognises with a grammar or by dictation. A self-interruption seen by users (the local voice, a 25 s reply,
/// dictation) is measured by naming those conditions, not by editing the benchmark.
package struct TalkBenchConditions: Sendable {
    package enum Voice: String, Sendable { case local, gateway }

    package var voice: Voice = .local
    /// nil: the short reply (`shortReply`, about 6 s).
    package var replySeconds: Int?
    /// What the user asked for (`--server`); the server that answered is checked against it.
    package var server: SoundServerKind?
    /// `--grammar`: the live sessions' `run --grammar` (an absolute path); nil: dictation.
    package var grammar: String?
    /// `--mode realtime`: the live sessions run `run --mode realtime`, the reference Gateway's realtime relay
    /// hearing the microphone and speaking the reply (espeak-ng on its side) as audio the session plays.
    package var realtime = false
    /// `--rate`: the local voice's words per minute (`run --rate`); nil: its default, `defaultRateWPM`.
    package var rateWPM: Int?
    /// `--user-gain-db`: the level of the user's clip spoken over the reply in barge-in trials, in dB against the clip
    /// as recorded (0). A user a metre from speakers at full level speaks 6 to 12 dB under the reply's echo at the
    /// microphone. The clip that asks the first question plays as recorded, so every trial gets its reply.
    package var userGainDb: Double = 0
    /// `--user-at-seconds`: every barge-in trial's user starts this far into the reply; nil: the trials walk across
    /// it (`BargeInUserStart`).
    package var userAtSeconds: Double?
    /// `--live-stt`: whose words a native session sends, and so which the barge-in trials judge (`LiveSTT`).
    package var liveSTT: LiveSTT = .relay

    /// What `--user-gain-db` accepts: down to where the clip is under the loopback's noise, up to where its loudest
    /// sample (6 730 of 32 767) would clip.
    package static let userGainRange: ClosedRange<Double> = -40...12

    /// The local voice's default speed (espeak-ng's 175 words per minute), which `replySeconds` is counted at.
    package static let defaultRateWPM = 175

    /// The file session's: the short reply in the local voice.
    package static let fileSession = TalkBenchConditions()

    package init(voice: Voice = .local, replySeconds: Int? = nil, server: SoundServerKind? = nil, grammar: String? = nil,
                 realtime: Bool = false, rateWPM: Int? = nil, userGainDb: Double = 0, userAtSeconds: Double? = nil,
                 liveSTT: LiveSTT = .relay) {
        (self.voice, self.replySeconds, self.server, self.grammar, self.realtime) = (voice, replySeconds, server, grammar, realtime)
        (self.rateWPM, self.userGainDb, self.userAtSeconds, self.liveSTT) = (rateWPM, userGainDb, userAtSeconds, liveSTT)
    }

    /// Where the barge-in trials' user starts in this reply.
    package var userStart: BargeInUserStart {
        BargeInUserStart(pinnedSeconds: userAtSeconds, replySeconds: replySeconds.map(Double.init) ?? BargeInUserStart.shortReplySeconds)
    }

    /// The user's clip as spoken over the reply: scaled by `userGainDb`, each sample rounded and held within 16 bits.
    package func userOverReply(_ samples: [Int16]) -> [Int16] {
        guard userGainDb != 0 else { return samples }
        let gain = pow(10, userGainDb / 20)
        return samples.map { Int16(min(Double(Int16.max), max(Double(Int16.min), (Double($0) * gain).rounded()))) }
    }

    /// What `run` is given for these conditions beyond the session's own options: the grammar, the mode, the rate,
    /// whose words are sent.
    package var runArguments: [String] {
        (grammar.map { ["--grammar", $0] } ?? []) + (realtime ? ["--mode", "realtime"] : [])
            + (rateWPM.map { ["--rate", "\($0)"] } ?? []) + (realtime ? [] : liveSTT.runArguments)
    }

    /// The realtime relay's settings (`talk-relay`): it answers every turn with `reply`, sent at a little over real
    /// time (pace 0.9), so the session's queue neither runs dry mid-reply (which ends the turn) nor passes its 10 s
    /// (which cuts it).
    package var realtimeRelay: String {
        #"{"cmd": "talk-relay", "reply": "\#(reply)", "audioPace": 0.9}"#
    }

    /// About 6 s of speech in words the corpus's clips hardly use, so a clip cuts in (the text guard) and the
    /// reply's echo cannot pass for the user.
    package static let shortReply = "Sure, here is what I found about that. The forecast stays mild and clear all week, with a light breeze."

    /// Words the corpus's clips hardly use, so that a clip cuts into the reply (the text guard) and the echo of
    /// the reply cannot pass for the user by its words; varied, as a real answer is, so dictation meets many sounds.
    package static let sentences = [
        "Sure, here is what I found about that.", "The forecast stays mild and clear all week, with a light breeze.",
        "Mornings begin cool, and by noon the sun warms the valley.", "Rain is unlikely before Sunday evening.",
        "Should clouds gather, they will thin out by the afternoon.", "Pack a light jacket for the evenings by the lake.",
        "The pollen count remains moderate, so allergies may flare.", "Humidity hovers around half, which feels pleasant.",
        "Winds pick up near the coast, gusting briefly at dusk.", "Sunrise comes a little earlier each day this month.",
        "Overall, it is a lovely stretch for walking outdoors.", "I can check again tomorrow if plans change.",
    ]

    /// The reply the scripted agent gives: the short one, or sentences enough for about `replySeconds` at the
    /// local voice's rate (175 words per minute unless `rateWPM` says otherwise).
    package var reply: String {
        guard let replySeconds else { return Self.shortReply }
        let words = replySeconds * (rateWPM ?? Self.defaultRateWPM) / 60
        var text: [String] = []
        var count = 0
        while count < words {
            let sentence = Self.sentences[text.count % Self.sentences.count]
            text.append(sentence)
            count += sentence.split(separator: " ").count
        }
        return text.joined(separator: " ")
    }

    /// `talk.config` as the reference Gateway sends it: with a provider the reply is spoken in the Gateway's voice
    /// (`talk.speak`, espeak-ng on its side); without one in this client's local voice, as users get it from a
    /// Gateway with no Talk provider configured.
    package func talkConfig(silenceMs: Int) -> String {
        let provider = voice == .gateway
            ? #""provider": "elevenlabs", "providers": {"elevenlabs": {"voiceId": "refgw-voice", "outputFormat": "pcm_24000"}}, "resolved": {"provider": "elevenlabs", "config": {"voiceId": "refgw-voice"}}, "#
            : ""
        return #"{"cmd": "talk-config", "config": {"talk": {\#(provider)"interruptOnSpeech": true, "silenceTimeoutMs": \#(silenceMs)}, "session": {"mainKey": "main"}}}"#
    }

    /// The sound server answering on PULSE_SERVER (or the default one), by the name it gives (`pactl info`):
    /// PipeWire's Pulse server calls itself "PulseAudio (on PipeWire x.y)". Refused when `--server` named the other.
    /// pactl runs and is waited for on a thread of its own, off the cooperative pool.
    package func checkedServer() async throws -> SoundServerKind {
        let conditions = self
        return try await withCheckedThrowingContinuation { done in
            Thread { done.resume(with: Result { try conditions.checkedServerBlocking() }) }.start()
        }
    }

    private func checkedServerBlocking() throws -> SoundServerKind {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pactl", "info"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let name = output.split(separator: "\n").first(where: { $0.hasPrefix("Server Name:") }) else {
            throw TalkBenchFailure("no sound server answered 'pactl info' (start one: scripts/with-pulse.sh or scripts/with-pipewire.sh)")
        }
        let found: SoundServerKind = name.contains("PipeWire") ? .pipewire : .pulse
        if let server, server != found {
            throw TalkBenchFailure("--server \(server.rawValue), but the server answering is \(name.dropFirst(12).trimmingCharacters(in: .whitespaces)) "
                + "(run it under scripts/with-\(server == .pulse ? "pulse" : "pipewire").sh)")
        }
        return found
    }

    package var json: JSONValue {
        [
            "mode": .string(realtime ? "realtime" : "talk"),
            "voice": .string(realtime ? "gateway-realtime" : voice.rawValue), "replyWords": .int(Int64(reply.split(separator: " ").count)),
            "recognition": .string(grammar.map { "grammar \(($0 as NSString).lastPathComponent)" } ?? "dictation"),
            "rateWPM": .int(Int64(rateWPM ?? Self.defaultRateWPM)), "userGainDb": .double(userGainDb),
            "userAtSeconds": userStart.json, "liveSTT": realtime ? .null : .string(liveSTT.rawValue),
        ]
    }
}
