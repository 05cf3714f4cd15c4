import Foundation
import TalkTestSupport
import Testing

/// `scripts/with-pulse.sh`, which `make test` and the README use to run commands against a private
/// PulseAudio: what the wrapped command prints on stdout must reach a pipe untouched.
@Suite struct WithPulseScriptTests {
    @Test func `the wrapped command's JSON is alone on stdout and its exit status is the script's`() async throws {
        let command = try BuiltCommand(through: TestInputs.packageRoot + "/scripts/with-pulse.sh")
        defer { command.removeHome() }
        let r = try await command.run(["devices", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("with-pulse: private PulseAudio at unix:"))
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
        #expect("\(json)".contains("vmic"), "stdout: \(r.stdout)")

        let failing = try await command.run(["devices", "--no-such-option"])
        #expect(failing.status == 2, "stderr: \(failing.stderr)")
    }
}
