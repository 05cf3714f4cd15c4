import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Answers said aloud: the clip is played into vsink (so vmic hears it) once the run reports the answer window open
/// (`approvalPrompt` step "listening"), as a person answers after the question.
extension SpokenApprovalTests {
    static let voiceTools = [TestInput.program("espeak-ng", package: "espeak-ng"), TestInput.program("sox", package: "sox")]

    /// Waits for the answer window of approval `id` and says `answer` into the microphone.
    static func answer(_ id: String, with answer: String, _ d: Listening) async throws {
        let listening = await waitForStep(d.running, id: id, "listening", upTo: .seconds(60))
        try #require(listening, "the answer window never opened: \(approvalEvents(d.running.stdoutSoFar, id: id))\n\(d.running.stderrSoFar)")
        try await d.pulse.play(try await RunModesCommandTests.word(answer, in: d.command.home) + RunModesCommandTests.silence(1))
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a spoken "allow once" resolves exactly the approval read out, with allow-once`() async throws {
        try await Self.withListeningDaemon { d in
            let id = try await d.request("rm -rf build")
            // A second approval arrives while the first is read out: the answer is for the first only.
            let reading = await RunLoopbackTests.waitFor(d.running, #""event":"speakingStarted""#, upTo: .seconds(45))
            let other = try await d.request("make install")
            try #require(reading, "\(Self.approvalEvents(d.running.stdoutSoFar, id: id))\n\(d.running.stderrSoFar)")
            try await Self.answer(id, with: "allow once", d)
            let decided = await Self.waitForStep(d.running, id: id, "allow-once", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(d.gw)
            let r = try await d.finish()
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(resolutions == [[id, "allow-once"]], "the other approval is \(other)")
        }
    }

    /// A plugin's tool call asks too (`plugin.approval.*`): read out by its title, answered by voice, and decided with
    /// plugin.approval.resolve for exactly its `plugin:` id.
    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a plugin approval is read out by its title and a spoken "allow once" decides it`() async throws {
        try await Self.withListeningDaemon { d in
            let id = try await d.request("Post to the channel", #","kind":"plugin""#)
            try await Self.answer(id, with: "allow once", d)
            let decided = await Self.waitForStep(d.running, id: id, "allow-once", upTo: .seconds(30))
            let gw = d.gw
            let list = try await offPool { try gw.control("approvals") }["resolutions"]?.arrayValue ?? []
            let frames = try await offPool { try gw.control(#"{"cmd":"frames","last":200}"#) }["frames"]?.arrayValue ?? []
            let r = try await d.finish()
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            let asked = RunCommandTests.events(r.stdout).first { $0["event"] == "approvalPrompt" && $0["step"] == "asked" }
            #expect(asked?["detail"] == "A plugin asks: Post to the channel. Allow once, always, or deny?", "\(String(describing: asked))")
            #expect(list.map { [$0["id"]?.stringValue, $0["kind"]?.stringValue, $0["decision"]?.stringValue] } == [[id, "plugin", "allow-once"]])
            #expect(frames.compactMap { $0["frame"]?["method"]?.stringValue }.filter { $0.hasSuffix("approval.resolve") } == ["plugin.approval.resolve"])
            #expect(d.server.notifications.isEmpty, "a notification was left for an approval decided by voice")
        }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a spoken "deny" denies the approval read out`() async throws {
        try await Self.withListeningDaemon { d in
            let id = try await d.request("rm -rf build")
            try await Self.answer(id, with: "deny", d)
            let decided = await Self.waitForStep(d.running, id: id, "deny", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(d.gw)
            let r = try await d.finish()
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(resolutions == [[id, "deny"]])
            #expect(d.server.notifications.isEmpty, "a notification was left for an approval decided by voice")
        }
    }

    /// Push-to-talk: the microphone is held between captures, and nothing the user says leaves it without the key. The
    /// answer window is the exception the question asks for (`TalkSession.listenFor`): the answer is heard without a
    /// key press, in the answers' grammar only.
    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `in push-to-talk mode the answer is taken in the answer window, with no key pressed`() async throws {
        try await Self.withListeningDaemon(arguments: ["--ptt"], rests: "waiting") { d in
            let id = try await d.request("rm -rf build")
            try await Self.answer(id, with: "deny", d)
            let decided = await Self.waitForStep(d.running, id: id, "deny", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(d.gw)
            let r = try await d.finish()
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(resolutions == [[id, "deny"]])
            let captures = RunCommandTests.events(r.stdout).filter { $0["event"] == "pushToTalk" }
            #expect(captures.isEmpty, "a capture was started: \(captures)")
        }
    }
}
