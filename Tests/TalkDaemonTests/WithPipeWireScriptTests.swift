import Foundation
import TalkTestSupport
import Testing

/// `scripts/with-pipewire.sh`, the PipeWire twin of `with-pulse.sh` (`make test-pipewire`): the wrapped
/// command gets a private headless PipeWire with vsink and vmic, its stdout untouched and its exit status
/// returned, and nothing of the server is left once the script has returned.
@Suite struct WithPipeWireScriptTests {
    /// The processes whose command line names `text` (the supervisor script names the server's folder).
    static func processes(naming text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) && $0 != "\(getpid())" }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return line.contains(text) ? "\(pid): \(line)" : nil
        }
    }

    @Test(.requires(.builtBinary, .program("pipewire-pulse", package: "pipewire-pulse"), .program("wireplumber", package: "wireplumber")))
    func `the wrapped command runs against PipeWire, its exit status is the script's, and the server is gone after`() async throws {
        let command = try BuiltCommand(through: TestInputs.packageRoot + "/scripts/with-pipewire.sh")
        defer { command.removeHome() }
        let r = try await command.run(["devices", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("with-pipewire: private PipeWire (PulseAudio (on PipeWire "), "stderr: \(r.stderr)")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "stdout: \(r.stdout)")
        let names = devices.compactMap { $0["name"] as? String }
        #expect(names.contains("vsink") && names.contains("vmic"), "\(names)")

        let folder = try #require(r.stderr.firstMatch(of: /at unix:(\/tmp\/openclaw-talk-pipewire\.[^\/]+)\//)?.1).description
        #expect(!FileManager.default.fileExists(atPath: folder), "\(folder) is left behind")
        #expect(Self.processes(naming: folder).isEmpty, "still running: \(Self.processes(naming: folder))")

        let failing = try await command.run(["devices", "--no-such-option"])
        #expect(failing.status == 2, "stderr: \(failing.stderr)")
    }
}
