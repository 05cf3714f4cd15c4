import Foundation
import Glibc
import Synchronization
import Threading

/// Runs one socket on its own thread: the blocking setup (resolve, connect, TLS handshake), then a
/// `poll()` loop that carries out the reads and writes async callers queue. Callers never block: they
/// park a continuation in the shared state and write a byte to a pipe, which wakes the thread.
///
/// Reads are pull-based: the thread reads only while a caller waits, so a fast sender fills the kernel
/// buffer rather than this process's memory.
final class SocketIOThread: Sendable {
    private struct PendingWrite {
        var bytes: [UInt8]
        var offset: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct PendingRead {
        let maxBytes: Int
        let continuation: CheckedContinuation<[UInt8], any Error>
    }

    private struct State {
        var closing = false
        var finished = false
        var read: PendingRead?
        /// Bytes read for a caller that was cancelled meanwhile; handed to the next read.
        var stash: [UInt8] = []
        var endOfStream = false
        var writes: [PendingWrite] = []
        var failure: TransportError?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// A self-pipe: writing a byte to `wakeWriter` makes `poll()` on `wakeReader` return.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    private init(wakeReader: Int32, wakeWriter: Int32) {
        self.wakeReader = wakeReader
        self.wakeWriter = wakeWriter
    }

    /// Starts a thread that runs `open` (with a deadline `timeout` from now), then serves I/O. Returns
    /// once `open` finished, with the engine and the value `open` reported (e.g. the certificate fingerprint).
    static func start<Info: Sendable>(
        name: String, timeout: Duration,
        open: @escaping @Sendable (SocketWaiter) throws(TransportError) -> (any SocketIO, Info)
    ) async throws -> (SocketIOThread, Info) {
        var wake: [Int32] = [-1, -1]
        guard pipe(&wake) == 0 else {
            throw TransportError.ioFailed(reason: "pipe: \(String(cString: strerror(errno)))")
        }
        for fd in wake {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        let engine = SocketIOThread(wakeReader: wake[0], wakeWriter: wake[1])
        let waiter = SocketWaiter(deadline: .now + timeout, abortDescriptor: wake[0])
        let info: Info = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Info, any Error>) in
                NamedThread.start(name) {
                    Self.blockSIGPIPE()
                    do {
                        let (io, info) = try open(waiter)
                        continuation.resume(returning: info)
                        engine.serve(io)
                    } catch {
                        engine.finish(failure: error)
                        // Only a cancelled connect aborts the setup waits.
                        let aborted = (error as? TransportError) == .streamClosed
                        continuation.resume(throwing: aborted ? CancellationError() : error)
                    }
                }
            }
        } onCancel: {
            engine.wake()
        }
        return (engine, info)
    }

    /// Waits for at most `maxBytes` received bytes; empty at end of stream.
    func read(maxBytes: Int) async throws -> [UInt8] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                let immediate: Result<[UInt8], any Error>? = state.withLock { state in
                    if !state.stash.isEmpty {
                        let count = min(maxBytes, state.stash.count)
                        defer { state.stash.removeFirst(count) }
                        return .success(Array(state.stash.prefix(count)))
                    }
                    if state.endOfStream { return .success([]) }
                    if let failure = state.failure { return .failure(failure) }
                    if state.closing || state.finished { return .failure(TransportError.streamClosed) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.read != nil { return .failure(TransportError.ioFailed(reason: "concurrent reads")) }
                    state.read = PendingRead(maxBytes: max(1, maxBytes), continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) } else { wake() }
            }
        } onCancel: {
            let cancelled = state.withLock { state in
                defer { state.read = nil }
                return state.read
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Queues `bytes` behind earlier writes and waits until they are all written.
    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let refusal: TransportError? = state.withLock { state in
                if let failure = state.failure { return failure }
                if state.closing || state.finished { return .streamClosed }
                state.writes.append(PendingWrite(bytes: bytes, offset: 0, continuation: continuation))
                return nil
            }
            if let refusal { continuation.resume(throwing: refusal) } else { wake() }
        }
    }

    /// Asks the thread to close the socket without waiting: for a stream dropped without `close()`.
    func requestClose() {
        let shouldWake = state.withLock { state in
            guard !state.finished else { return false }
            state.closing = true
            return true
        }
        if shouldWake { wake() }
    }

    /// Asks the thread to close the socket and waits until it has.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.finished { return true }
                state.closing = true
                state.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() } else { wake() }
        }
    }

    private func wake() {
        state.withLock { state in
            // The descriptor is closed once finished; writing under the lock keeps that race away.
            guard !state.finished else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWriter, &byte, 1)
        }
    }

    /// A write to a socket the peer closed raises SIGPIPE in the writing thread (OpenSSL writes with
    /// plain `write`); blocked here, it stays pending on this thread and the write returns EPIPE.
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    private func serve(_ io: any SocketIO) {
        var readBuffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let (closing, write, readMax) = state.withLock { state in
                (state.closing, state.writes.first.map { ($0.bytes, $0.offset) }, state.read?.maxBytes)
            }
            if closing { break }
            var progressed = false
            var events: Int16 = 0
            if let (bytes, offset) = write {
                let result = bytes.withUnsafeBytes { io.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                switch result {
                case .transferred(let count):
                    progressed = true
                    completeWrite(count)
                case .wouldBlock(let wait): events |= Self.pollEvents(wait)
                case .endOfStream: fail(.ioFailed(reason: "the peer closed the connection"))
                case .failed(let reason): fail(.ioFailed(reason: reason))
                }
            }
            if let readMax {
                let count = min(readMax, readBuffer.count)
                let result = readBuffer.withUnsafeMutableBytes { buffer in
                    io.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
                }
                switch result {
                case .transferred(let count):
                    progressed = true
                    deliver(Array(readBuffer[..<count]))
                case .wouldBlock(let wait): events |= Self.pollEvents(wait)
                case .endOfStream:
                    progressed = true
                    deliverEndOfStream()
                case .failed(let reason): fail(.ioFailed(reason: reason))
                }
            }
            if state.withLock({ $0.failure != nil }) { break }
            if progressed { continue }
            // A descriptor of -1 makes poll() skip the socket: with nothing wanted, a hang-up must not spin.
            var fds = [
                pollfd(fd: events == 0 ? -1 : io.fileDescriptor, events: events, revents: 0),
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&fds, 2, -1)
            if fds[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while Glibc.read(wakeReader, &drain, drain.count) > 0 {}
            }
        }
        io.shutdown()
        io.release()
        finish(failure: nil)
    }

    private static func pollEvents(_ wait: SocketWait) -> Int16 {
        Int16(wait == .readable ? POLLIN : POLLOUT)
    }

    private func completeWrite(_ count: Int) {
        let done: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard !state.writes.isEmpty else { return nil }
            state.writes[0].offset += count
            guard state.writes[0].offset >= state.writes[0].bytes.count else { return nil }
            return state.writes.removeFirst().continuation
        }
        done?.resume()
    }

    private func deliver(_ bytes: [UInt8]) {
        let waiter: PendingRead? = state.withLock { state in
            defer { state.read = nil }
            if state.read == nil { state.stash.append(contentsOf: bytes) }
            return state.read
        }
        waiter?.continuation.resume(returning: bytes)
    }

    private func deliverEndOfStream() {
        let waiter: PendingRead? = state.withLock { state in
            state.endOfStream = true
            defer { state.read = nil }
            return state.read
        }
        waiter?.continuation.resume(returning: [])
    }

    private func fail(_ error: TransportError) {
        let (read, writes) = state.withLock { state in
            if state.failure == nil { state.failure = error }
            defer {
                state.read = nil
                state.writes = []
            }
            return (state.read, state.writes)
        }
        read?.continuation.resume(throwing: error)
        for write in writes { write.continuation.resume(throwing: error) }
    }

    /// Ends the engine: every waiter is resumed and the wake descriptor closed.
    private func finish(failure: (any Error)?) {
        let (read, writes, closers) = state.withLock { state in
            state.finished = true
            if state.failure == nil { state.failure = (failure as? TransportError) ?? .streamClosed }
            _ = Glibc.close(wakeReader)
            _ = Glibc.close(wakeWriter)
            defer {
                state.read = nil
                state.writes = []
                state.closeWaiters = []
            }
            return (state.read, state.writes, state.closeWaiters)
        }
        let error = read.map { _ in TransportError.streamClosed }
        if let read, let error { read.continuation.resume(throwing: error) }
        for write in writes { write.continuation.resume(throwing: TransportError.streamClosed) }
        for closer in closers { closer.resume() }
    }
}

extension SocketIOThread {
    /// Held by the stream values, never by the I/O thread: when the last copy of a stream is dropped
    /// without `close()`, this closes the socket so neither the descriptor nor the thread leaks.
    final class Owner: Sendable {
        let engine: SocketIOThread

        init(_ engine: SocketIOThread) { self.engine = engine }

        deinit { engine.requestClose() }
    }
}
