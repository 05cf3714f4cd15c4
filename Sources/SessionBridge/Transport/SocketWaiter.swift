import Glibc

/// Blocking waits used while a connection is being set up, on the connection's own thread: each waits
/// for one descriptor until a deadline, and gives up early when the abort descriptor becomes readable.
struct SocketWaiter {
    enum Outcome {
        case ready, timedOut, aborted
    }

    /// The deadline of the whole setup (TCP connect, TLS handshake).
    let deadline: ContinuousClock.Instant
    /// The read end of the engine's wake pipe, which task cancellation writes to.
    let abortDescriptor: Int32

    func wait(for descriptor: Int32, _ wait: SocketWait) -> Outcome {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return .timedOut }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var fds = [
                pollfd(fd: descriptor, events: Int16(wait == .readable ? POLLIN : POLLOUT), revents: 0),
                pollfd(fd: abortDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let result = poll(&fds, 2, milliseconds)
            if result < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { return .aborted }
            if fds[0].revents != 0 { return .ready }
        }
    }
}
