import CPulse
import TalkLogging

/// Lists the sources and sinks of a PulseAudio server, marking the defaults.
package struct PulseDeviceList: Sendable {
    /// The server address (`unix:/path`, `tcp:host`); nil uses libpulse's default (PULSE_SERVER, then the
    /// per-user socket).
    package var server: String?
    private let logger: Logger

    package init(server: String? = nil, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    /// Sinks first, then sources, each in server order. Throws `PulseError.serverUnreachable` when no
    /// server answers.
    package func devices() async throws -> [PulseDevice] {
        let loop = try PulseMainloop(name: "pulse-devices")
        let connection = PulseConnection(loop: loop, server: server, logger: logger)
        defer { loop.shutdown { connection.close() } }
        return try await withCheckedThrowingContinuation { continuation in
            loop.withLock {
                connection.whenReady(failFast: true) { result in
                    switch result {
                    case .failure(let error):
                        continuation.resume(throwing: error)
                    case .success(let context):
                        Self.collect(context) { continuation.resume(returning: $0) }
                    }
                }
            }
        }
    }

    /// The source or sink called `name`, if the server has one.
    package func device(_ kind: PulseDeviceKind, named name: String) async throws -> PulseDevice? {
        try await devices().first { $0.kind == kind && $0.name == name }
    }

    private static func collect(_ context: OpaquePointer, completion: @escaping ([PulseDevice]) -> Void) {
        PulseIntrospection.defaults(context) { defaults in
            PulseIntrospection.devices(.sink, context) { sinks in
                PulseIntrospection.devices(.source, context) { sources in
                    let marked = sinks.map { mark($0, defaults.sink) } + sources.map { mark($0, defaults.source) }
                    completion(marked)
                }
            }
        }
    }

    private static func mark(_ device: PulseDevice, _ defaultName: String?) -> PulseDevice {
        var device = device
        device.isDefault = device.name == defaultName
        return device
    }
}
