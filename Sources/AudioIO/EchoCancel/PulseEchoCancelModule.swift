import CPulse
import Foundation
import TalkLogging

/// PulseAudio's own echo canceller for `--aec pulse`: `module-echo-cancel` with the WebRTC method (the same
/// library as `EchoCanceller`, running inside the server), loaded over a sink and a source for one session
/// and unloaded after it. Playback must then go to its sink and capture come from its source.
package struct PulseEchoCancelModule: Sendable {
    package static let moduleName = "module-echo-cancel"

    /// A loaded instance: the names to play to and capture from, and the index to unload it by.
    package struct Loaded: Sendable, Equatable {
        package var index: UInt32
        package var sink: String
        package var source: String
    }

    package var server: String?
    private let logger: Logger

    package init(server: String? = nil, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    /// Loads the module over `masterSink` and `masterSource` (nil: the server's defaults); its sink and
    /// source are called `<name>.sink` and `<name>.source`, `name` unique to this process by default.
    /// - Throws: `PulseError.serverUnreachable`, or `.moduleFailed` when the server refuses the module.
    package func load(
        masterSink: String? = nil, masterSource: String? = nil, name: String = "openclaw-talk-aec-\(getpid())"
    ) async throws -> Loaded {
        let sink = name + ".sink"
        let source = name + ".source"
        var arguments = ["aec_method=webrtc", "sink_name=\(sink)", "source_name=\(source)"]
        if let masterSink { arguments.append("sink_master=\(masterSink)") }
        if let masterSource { arguments.append("source_master=\(masterSource)") }
        for value in [name, masterSink, masterSource].compactMap({ $0 }) where !Self.isPlainName(value) {
            throw PulseError.moduleFailed(module: Self.moduleName, reason: "'\(value)' is not a plain device name")
        }
        // PulseAudio refuses a master that does not exist; PipeWire's Pulse server (0.3.65) loads the module
        // anyway and links it to the default devices, so cancellation would listen to the wrong sink.
        let devices = PulseDeviceList(server: server, logger: logger)
        for (kind, master) in [(PulseDeviceKind.sink, masterSink), (.source, masterSource)] {
            if let master, try await devices.device(kind, named: master) == nil {
                throw PulseError.moduleFailed(module: Self.moduleName, reason: "there is no \(kind) named '\(master)'")
            }
        }
        let argument = arguments.joined(separator: " ")
        let index: UInt32 = try await withContext { context, done in
            let op = pa_context_load_module(context, Self.moduleName, argument, { context, index, userdata in
                Completion<UInt32>.finish(userdata) {
                    guard index != UInt32.max else {  // PA_INVALID_INDEX
                        return .failure(.moduleFailed(module: Self.moduleName, reason: Self.lastError(context)))
                    }
                    return .success(index)
                }
            }, done.retained())
            done.sent(op, context: context, module: Self.moduleName)
        }
        logger.info(
            "Loaded PulseAudio echo cancellation",
            metadata: ["audio.module": "\(index)", "audio.sink": "\(sink)", "audio.source": "\(source)"])
        return Loaded(index: index, sink: sink, source: source)
    }

    /// Unloads a module `load` returned; its sink and source disappear (streams on them move to the masters).
    /// Stop capturing from the master source first: PulseAudio 16 hung (and then would not exit) unloading
    /// the module while another stream was recording from its master source.
    package func unload(_ loaded: Loaded) async throws {
        let _: Void = try await withContext { context, done in
            let op = pa_context_unload_module(context, loaded.index, { context, success, userdata in
                Completion<Void>.finish(userdata) {
                    success != 0 ? .success(()) : .failure(.moduleFailed(module: Self.moduleName, reason: Self.lastError(context)))
                }
            }, done.retained())
            done.sent(op, context: context, module: Self.moduleName)
        }
        logger.info("Unloaded PulseAudio echo cancellation", metadata: ["audio.module": "\(loaded.index)"])
    }

    /// Module arguments are split on spaces and `=`: a name holding either (or quotes) would smuggle in others.
    private static func isPlainName(_ value: String) -> Bool {
        !value.isEmpty && value.allSatisfy { $0.isLetter || $0.isNumber || "._-:".contains($0) }
    }

    private static func lastError(_ context: OpaquePointer?) -> String {
        context.map { PulseError.text(pa_context_errno($0)) } ?? "no connection"
    }

    /// One request on a fresh connection: connect, run `body` on the loop thread, wait for its completion.
    private func withContext<T: Sendable>(
        _ body: @escaping (OpaquePointer, Completion<T>) -> Void
    ) async throws -> T {
        let loop = try PulseMainloop(name: "pulse-module")
        let connection = PulseConnection(loop: loop, server: server, logger: logger)
        defer { loop.shutdown { connection.close() } }
        return try await withCheckedThrowingContinuation { continuation in
            let done = Completion<T> { continuation.resume(with: $0.mapError { $0 as any Error }) }
            loop.withLock {
                connection.whenReady(failFast: true) { result in
                    switch result {
                    case .failure(let error): done.resume(.failure(error))
                    case .success(let context): body(context, done)
                    }
                }
            }
        }
    }
}

/// The one-shot completion of a libpulse request, passed through its `userdata`.
private final class Completion<T> {
    private let resume: (Result<T, PulseError>) -> Void

    init(_ resume: @escaping (Result<T, PulseError>) -> Void) { self.resume = resume }

    func resume(_ result: Result<T, PulseError>) { resume(result) }

    /// A retained pointer for `userdata`; `finish` releases it.
    func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// When the request could not even be sent its callback never runs: fail now and drop the reference.
    func sent(_ op: OpaquePointer?, context: OpaquePointer, module: String) {
        if let op {
            pa_operation_unref(op)
        } else {
            Unmanaged.passUnretained(self).release()
            resume(.failure(.moduleFailed(module: module, reason: PulseError.text(pa_context_errno(context)))))
        }
    }

    static func finish(_ userdata: UnsafeMutableRawPointer?, _ result: () -> Result<T, PulseError>) {
        guard let userdata else { return }
        Unmanaged<Completion<T>>.fromOpaque(userdata).takeRetainedValue().resume(result())
    }
}
