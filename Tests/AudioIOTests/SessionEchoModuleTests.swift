import Foundation
import TalkLogging
import Testing

@testable import AudioIO

/// `SessionAudio` with `--aec pulse`: the sound server's module-echo-cancel loaded for the session and unloaded by
/// `close`. In the solo pass with PulseEchoCancelModuleTests (SOLO_TESTS): among pass 1's suites, on a loaded
/// machine, the server stopped answering `pactl` (97 s, exit 1), as it did for that suite before it ran alone.
@Suite struct SessionEchoModuleTests {
    let logger = Logger(label: "test.session-echo-module", handler: InMemoryLogHandler())

    @Test func `the server's echo canceller is loaded for the session and unloaded by close`() async throws {
        try await PulseTestServer.with { server in
            let before = try await server.pactl(["list", "short", "modules"])
            let audio = try await SessionAudio.open(
                .init(mode: .pulse, devices: AudioDeviceChoice(source: "vmic", sink: "vsink"), server: server.address), logger: logger)
            #expect(audio.echoCancelMode == .pulse)
            #expect(audio.echoCancellation.hasPrefix("pulse (module-echo-cancel #"), "\(audio.echoCancellation)")
            #expect(audio.echoCancellation.hasSuffix("-aec-\(getpid()).sink, openclaw-talk-aec-\(getpid()).source)"), "\(audio.echoCancellation)")
            #expect(try await server.pactl(["list", "short", "modules"]).contains("module-echo-cancel"))
            await audio.close()
            #expect(try await server.pactl(["list", "short", "modules"]) == before)
        }
    }
}
