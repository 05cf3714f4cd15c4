import Foundation
import TalkTestSupport
import Testing

/// `scripts/with-pulse.sh`, which `make test` and the README use to run commands against a private
/// PulseAudio: what the wrapped command prints on stdout must reach a pipe untouched.
@Suite struct WithPulseScriptTests {
    @Test func `the wrapped command's JSON is alone on stdout and its exit status is the script's`() async throws {
        let binary = try TestInput.builtBinary.path()
        let r = try await offPool { try Self.run(["devices", "--json"], binary: binary) }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("with-pulse: private PulseAudio at unix:"))
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
        #expect("\(json)".contains("vmic"), "stdout: \(r.stdout)")

        let failing = try await offPool { try Self.run(["devices", "--no-such-option"], binary: binary) }
        #expect(failing.status == 2, "stderr: \(failing.stderr)")
    }

    static func run(_ arguments: [String], binary: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestInputs.packageRoot + "/scripts/with-pulse.sh")
        p.arguments = [binary] + arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}
