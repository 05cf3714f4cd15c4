import Foundation
import Glibc
import Synchronization

/// A signal the daemon handles (swift-service-lifecycle's `UnixSignal`, small).
struct UnixSignal: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32

    static let sigint = UnixSignal(rawValue: SIGINT)
    static let sigterm = UnixSignal(rawValue: SIGTERM)

    var description: String {
        switch rawValue {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(rawValue)"
        }
    }
}

/// The stop signals as an async sequence. Installed by `init`, before anything the daemon opens: a signal that
/// comes once `init` returned is kept until it is read, never lost and never the default action (which would leave
/// `--aec pulse`'s module-echo-cancel loaded).
///
/// The signals are caught by a handler of our own (it only writes the signal's number to a pipe, all a handler may
/// safely do), read by a thread of its own: with them ignored and left to a dispatch source, a signal the kernel
/// handed to a thread that did not block it was dropped, and now and then a stop with it. One per process.
final class UnixSignals: AsyncSequence, Sendable {
    typealias Element = UnixSignal
    private let stream: AsyncStream<UnixSignal>

    init(_ signals: [UnixSignal]) {
        let (stream, sink) = AsyncStream.makeStream(of: UnixSignal.self, bufferingPolicy: .bufferingNewest(8))
        self.stream = stream
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            sink.finish()
            return
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        signalPipeWriter.store(fds[1], ordering: .releasing)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(signalPipeWriter.load(ordering: .acquiring), &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for signal in signals { sigaction(signal.rawValue, &action, nil) }
        let reader = fds[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(reader, &byte, 1)
                if n == 1 {
                    sink.yield(UnixSignal(rawValue: Int32(byte)))
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    sink.finish()
                    return
                }
            }
        }
        thread.name = "unix-signals"
        thread.start()
    }

    func makeAsyncIterator() -> AsyncStream<UnixSignal>.Iterator { stream.makeAsyncIterator() }
}

/// The signals' pipe, for the handler (which may touch nothing else).
private let signalPipeWriter = Atomic<Int32>(-1)
