import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `bench soak` end to end, a minute long with a fault every 8 s (each of the six once): its own PulseAudio, the
/// reference Gateway and the daemon. The Gateway is told to lose the first request's record, which the soak must
/// report as lost; every other utterance must arrive once, with its words, and every fault must be recovered from.
@Suite(.serialized) struct SoakCommandTests {
    @Test(.timeLimit(.minutes(6)))
    func `a one-minute soak strikes every fault once and counts the request the Gateway lost as lost`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let outcome = try await command.run(
            ["bench", "soak", "--minutes", "1", "--fault-every", "8", "--json", "--repository", TestInputs.packageRoot],
            environment: ["OPENCLAW_TALK_SOAK_LOSE_REQUESTS": "1", "PULSE_SERVER": ""])
        try #require(outcome.status == 0, "bench soak failed: \(outcome.stderr.suffix(1500))")
        let report = try #require(JSONValue.parse(Array(outcome.stdout.utf8)), "not JSON: \(outcome.stdout.suffix(800))")
        let requests = try #require(report["requests"])
        let spoken = try #require(requests["spoken"]?.intValue)
        // Utterances at 5, 25 and 45 s; none may be skipped for a microphone still away (the speaker waits for it).
        #expect(spoken == 3, "\(outcome.stdout)")
        #expect(requests["lost"]?.intValue == 1, "the request the Gateway lost: \(outcome.stdout)")
        #expect(requests["delivered"]?.intValue == spoken - 1, "\(outcome.stdout)")
        #expect(requests["duplicated"]?.intValue == 0)
        #expect(requests["wrongText"]?.intValue == 0)
        #expect(report["daemonExited"]?.boolValue == false, "\(report["daemonLog"]?.stringValue ?? "")")
        let faults = try #require(report["faults"]?.arrayValue)
        #expect(faults.compactMap { $0["kind"]?.stringValue }
            == ["gatewayDrop", "gatewayRestart", "soundServerRestart", "captureDeviceLoss", "sighup", "controlFlood"])
        for fault in faults {
            #expect(fault["recovered"]?.boolValue == true, "\(fault)")
        }
        let samples = try #require(report["resources"]?["samples"]?.arrayValue)
        #expect(samples.count >= 5, "a sample every 10 s")
        for sample in samples {
            // A whole number of MB (rounded to 0.01) is written without a fraction, and read back as an int.
            let rss: Double? = switch sample["rssMB"] { case .double(let d)?: d; case .int(let i)?: Double(i); default: nil }
            guard let rss else { Issue.record("no rssMB in \(sample)"); continue }
            #expect(rss > 1 && (sample["fds"]?.intValue ?? 0) > 3, "\(sample)")
        }
    }
}
