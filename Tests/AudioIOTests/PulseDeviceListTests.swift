import AudioIO
import Foundation
import Testing
import TalkLogging
import TalkTestSupport

@Suite struct PulseDeviceListTests {
    let logger = Logger(label: "test.pulse", handler: InMemoryLogHandler())

    @Test func `the list shows the null sink and virtual mic with their spec and default markers`() async throws {
        try await PulseTestServer.with { server in
            let devices = try await PulseDeviceList(server: server.address, logger: logger).devices()
            let sink = try #require(devices.first { $0.name == "vsink" })
            #expect(sink.kind == .sink && sink.isDefault)
            // PipeWire's Pulse server reports every device in its graph's sample format, and a remapped source
            // at its graph's rate (48 kHz); PulseAudio gives the remapped source its master's spec.
            let (format, micRate) = server.kind == .pipewire ? ("float32le", 48_000) : ("s16le", 16_000)
            #expect(sink.sampleFormat == format && sink.sampleRate == 16_000 && sink.channels == 1)
            let mic = try #require(devices.first { $0.name == "vmic" })
            #expect(mic.kind == .source && mic.isDefault && mic.sampleRate == micRate && mic.channels == 1)
            let monitor = try #require(devices.first { $0.name == "vsink.monitor" })
            #expect(monitor.kind == .source && !monitor.isDefault && monitor.monitorOfSink == "vsink")
            #expect(devices.filter(\.isDefault).count == 2)
        }
    }

    @Test func `without a server every entry point names the server it tried`() async throws {
        let address = "unix:/nonexistent/openclaw-talk-\(getpid())/pulse.sock"
        func check(_ error: any Error) {
            guard case PulseError.serverUnreachable(let server, _) = error else {
                Issue.record("expected serverUnreachable, got \(error)")
                return
            }
            #expect(server == address)
            #expect(String(describing: error).contains(address))
            #expect(String(describing: error).contains("PULSE_SERVER"))
        }
        await #expect(throws: PulseError.self) {
            do { _ = try await PulseDeviceList(server: address, logger: logger).devices() } catch { check(error); throw error }
        }
        let capture = PulseCapture(server: address, logger: logger)
        await #expect(throws: PulseError.self) {
            do { _ = try await capture.start() } catch { check(error); throw error }
        }
        let playback = try PulsePlayback(server: address, logger: logger)
        await #expect(throws: PulseError.self) {
            do { _ = try await playback.play(TestSignals.tone(rate: 16_000, seconds: 0.1)) } catch { check(error); throw error }
        }
        await playback.close()
    }

    @Test func `an unknown source name is refused with the names that exist`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "no-such-mic", server: server.address, logger: logger)
            await #expect {
                _ = try await capture.start()
            } throws: { error in
                guard case PulseError.deviceNotFound(.source, "no-such-mic", let available) = error else { return false }
                return available.contains("vmic")
            }
        }
    }
}
