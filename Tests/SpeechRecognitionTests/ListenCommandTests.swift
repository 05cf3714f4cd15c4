import Foundation
import Testing

/// `openclaw-talk listen`: the capture half of Talk mode, from a file and from a (virtual) microphone.
@Suite(.serialized) struct ListenCommandTests {
    private let grammar = SpeechTestAudio.testData + "/goforward.gram"

    @Test func `a file as the microphone gives start, growing partials, the final text and the end, in order`() throws {
        let r = try BuiltTool.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.first == "speechStarted" && kinds.last == "finished", "\(kinds)")
        #expect(kinds.filter { $0 == "final" }.count == 1)
        let partials = events.filter { $0["event"] as? String == "partial" }.compactMap { $0["text"] as? String }
        #expect(partials.count >= 2 && partials.last == "go forward ten meters", "\(partials)")
        let final = events.first { $0["event"] as? String == "final" }
        #expect(final?["text"] as? String == "go forward ten meters")
    }

    @Test func `speech played into the speaker is heard on the virtual microphone and recognised`() throws {
        guard ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil, let tool = BuiltTool.path else {
            print("SKIPPED: no PULSE_SERVER (run under scripts/with-pulse.sh): live listen check not run")
            return
        }
        // The headless server's null sink `vsink` is monitored by the virtual microphone `vmic`.
        let script = """
            "\(tool)" listen --source vmic --seconds 9 --grammar "\(grammar)" &
            sleep 2
            "\(tool)" play "\(SpeechTestAudio.goForward)" --sink vsink >/dev/null
            wait
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(stdout.hasSuffix("go forward ten meters\n"), "\(stdout)")
    }
}
