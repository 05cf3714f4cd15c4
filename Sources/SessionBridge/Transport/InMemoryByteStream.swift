import Synchronization

/// Two connected in-memory byte streams, NIOEmbedded's role: what one writes the other reads.
/// For unit tests of the WebSocket layer without sockets. Reads honour cancellation like the socket streams.
package final class InMemoryByteStream: ByteStream {
    private final class Pipe: Sendable {
        struct State {
            var bytes: [UInt8] = []
            var closed = false
            var reader: (maxBytes: Int, continuation: CheckedContinuation<[UInt8], any Error>)?
        }
        let state = Mutex(State())

        func push(_ bytes: [UInt8]) throws {
            let delivery: (CheckedContinuation<[UInt8], any Error>, [UInt8])? = try state.withLock { state in
                guard !state.closed else { throw TransportError.streamClosed }
                state.bytes.append(contentsOf: bytes)
                guard let reader = state.reader, !state.bytes.isEmpty else { return nil }
                state.reader = nil
                let count = min(reader.maxBytes, state.bytes.count)
                defer { state.bytes.removeFirst(count) }
                return (reader.continuation, Array(state.bytes.prefix(count)))
            }
            if let (continuation, bytes) = delivery { continuation.resume(returning: bytes) }
        }

        func pull(maxBytes: Int) async throws -> [UInt8] {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ready: Result<[UInt8], any Error>? = state.withLock { state in
                        if !state.bytes.isEmpty {
                            let count = min(max(1, maxBytes), state.bytes.count)
                            defer { state.bytes.removeFirst(count) }
                            return .success(Array(state.bytes.prefix(count)))
                        }
                        if state.closed { return .success([]) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.reader = (max(1, maxBytes), continuation)
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                let reader = state.withLock { state in
                    defer { state.reader = nil }
                    return state.reader
                }
                reader?.continuation.resume(throwing: CancellationError())
            }
        }

        func close() {
            let reader = state.withLock { state in
                state.closed = true
                defer { state.reader = nil }
                return state.reader
            }
            reader?.continuation.resume(returning: [])
        }
    }

    private let inbound: Pipe
    private let outbound: Pipe

    private init(inbound: Pipe, outbound: Pipe) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// A connected pair: (client side, server side).
    package static func makePair() -> (InMemoryByteStream, InMemoryByteStream) {
        let a = Pipe()
        let b = Pipe()
        return (InMemoryByteStream(inbound: a, outbound: b), InMemoryByteStream(inbound: b, outbound: a))
    }

    package func read(maxBytes: Int) async throws -> [UInt8] { try await inbound.pull(maxBytes: maxBytes) }
    package func write(_ bytes: [UInt8]) async throws { try outbound.push(bytes) }
    /// Closes both directions: the peer reads end of stream, local reads end too.
    package func close() async {
        outbound.close()
        inbound.close()
    }
}
