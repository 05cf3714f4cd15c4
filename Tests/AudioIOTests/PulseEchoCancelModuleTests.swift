import AudioIO
import Foundation
import Testing
import TalkLogging

/// `--aec pulse`: PulseAudio's module-echo-cancel loaded for a session and unloaded after, on a real server.
@Suite(.serialized) struct PulseEchoCancelModuleTests {
    let logger = Logger(label: "test.aec.pulse", handler: InMemoryLogHandler())

    @Test func `the module's sink and source exist while loaded and nothing is left after unloading`() async throws {
        try await PulseTestServer.with { server in
            let module = PulseEchoCancelModule(server: server.address, logger: logger)
            let list = PulseDeviceList(server: server.address, logger: logger)
            let modulesBefore = try await server.pactl(["list", "short", "modules"])

            let loaded = try await module.load(masterSink: "vsink", masterSource: "vmic", name: "talk-aec")
            #expect(loaded.sink == "talk-aec.sink")
            #expect(loaded.source == "talk-aec.source")
            #expect(try await list.device(.sink, named: loaded.sink) != nil)
            #expect(try await list.device(.source, named: loaded.source) != nil)
            let modules = try await server.pactl(["list", "short", "modules"])
            #expect(modules.contains("module-echo-cancel"))
            #expect(modules.contains("aec_method=webrtc"))

            try await module.unload(loaded)
            let names = try await list.devices().map(\.name)
            #expect(!names.contains { $0.hasPrefix("talk-aec") }, "left behind: \(names)")
            #expect(try await server.pactl(["list", "short", "modules"]) == modulesBefore)
        }
    }

    @Test func `a master that does not exist or a name that smuggles arguments is refused`() async throws {
        try await PulseTestServer.with { server in
            let module = PulseEchoCancelModule(server: server.address, logger: logger)
            let missing = await #expect(throws: PulseError.self) {
                try await module.load(masterSink: "no-such-sink", masterSource: "vmic", name: "talk-aec")
            }
            // Refused on PipeWire too, whose Pulse server would load it over the default sink instead.
            #expect(String(describing: missing).contains("module-echo-cancel") && String(describing: missing).contains("no-such-sink"))
            await #expect(throws: PulseError.self) { try await module.load(masterSink: "vsink", masterSource: "no-such-mic") }
            await #expect(throws: PulseError.self) { try await module.load(masterSink: "vsink sink_name=x") }
            // The default name is this process's own, so two sessions never clash.
            let loaded = try await module.load(masterSink: "vsink", masterSource: "vmic")
            #expect(loaded.sink.contains("\(getpid())"))
            try await module.unload(loaded)
            await #expect(throws: PulseError.self) { try await module.unload(loaded) }
        }
    }

    @Test func `without a server the error says so`() async throws {
        let module = PulseEchoCancelModule(server: "unix:/nonexistent/pulse.sock", logger: logger)
        await #expect(throws: PulseError.self) { try await module.load() }
    }
}
