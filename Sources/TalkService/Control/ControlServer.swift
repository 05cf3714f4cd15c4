import Foundation
import Glibc
import Synchronization
import TalkLogging
import Threading

/// Serves the control socket on a thread of its own running a `poll()` loop (the house pattern of
/// SessionBridge's `SocketIOThread`, reduced to what a local line protocol needs). Requests go to an
/// async handler; its reply is queued and the loop woken through a self-pipe, so nothing blocks the
/// cooperative pool and a slow handler never stalls other clients.
package final class ControlServer: Sendable {
    package enum Reply: Sendable {
        case respond(ControlResponse)
        /// Answers, then keeps the connection as an event subscriber (`events` in follow mode).
        case subscribe(ControlResponse)
    }
    package typealias Handler = @Sendable (ControlRequest) async -> Reply

    package struct Limits: Sendable {
        /// A longer line is answered with `line_too_long` and skipped up to its newline.
        package var maxLineBytes = 64 * 1024
        /// A client stops being read while this many of its requests are unanswered.
        package var maxInFlight = 16
        /// A subscriber that lets this much output pile up is dropped, so it cannot grow our memory.
        package var maxPendingOutput = 1 << 20
        /// Connections beyond this many are answered `busy` and closed: a local process opening thousands cannot
        /// take every descriptor the daemon has (the Gateway's sockets, the sound server's) or grow its memory.
        package var maxClients = 64
        /// Test seams for what another thread may do between two steps of the poll loop.
        var hooks = Hooks()
        package init() {}
    }

    struct Hooks: Sendable {
        /// Right before a polled client descriptor is serviced, with what poll() reported for it.
        var beforeService: @Sendable (Int32, Int16) -> Void = { _, _ in }
        /// Right after a client's descriptor was closed.
        var afterClose: @Sendable (Int32) -> Void = { _ in }
    }

    private struct Client {
        let fd: Int32
        /// Told apart from a later connection that gets the same descriptor number.
        let serial: UInt64
        var input: [UInt8] = []
        var discardingLongLine = false
        var output: [UInt8] = []
        var inFlight = 0
        var subscribed = false
        var closeAfterFlush = false
    }

    private struct State {
        var clients: [Int32: Client] = [:]
        var stopping = false
        var nextSerial: UInt64 = 0
    }

    /// Accepting stops for a while when the process is out of descriptors (or memory): the pending connection
    /// keeps the listener readable, and retrying at once would spin the poll loop at 100 %. Poll thread only.
    private struct AcceptBackoff {
        static let first: Duration = .milliseconds(100)
        static let longest: Duration = .seconds(2)
        var until: ContinuousClock.Instant?
        var next = first
    }

    package let path: String
    private let listener: Int32
    private let wake: (reader: Int32, writer: Int32)
    private let state = Mutex(State())
    private let stopped = Mutex<[CheckedContinuation<Void, Never>]?>([])
    private let handler: Handler
    private let peerCheck: PeerCheck
    private let limits: Limits
    private let logger: Logger
    private let acceptConnection: @Sendable (Int32) -> Int32

    /// Binds `path` (owner-only, in a folder `RuntimePaths` made 0700) and starts serving.
    package static func start(
        path: String, peerCheck: PeerCheck = PeerCheck(), limits: Limits = Limits(), logger: Logger,
        accept: @escaping @Sendable (Int32) -> Int32 = { Glibc.accept($0, nil, nil) },
        handler: @escaping Handler
    ) throws -> ControlServer {
        let fd = try UnixSocket.stream()
        do {
            if unlink(path) != 0 && errno != ENOENT { throw UnixSocket.Failure(call: "unlink \(path)", code: errno) }
            let bound = try UnixSocket.withAddress(path) { bind(fd, $0, $1) }
            guard bound == 0 else { throw UnixSocket.Failure(call: "bind \(path)", code: errno) }
            guard chmod(path, 0o600) == 0 else { throw UnixSocket.Failure(call: "chmod \(path)", code: errno) }
            guard listen(fd, 64) == 0 else { throw UnixSocket.Failure(call: "listen", code: errno) }
            UnixSocket.setNonBlocking(fd)
            let server = ControlServer(
                path: path, listener: fd, wake: try UnixSocket.wakePipe(), handler: handler,
                peerCheck: peerCheck, limits: limits, logger: logger, accept: accept)
            NamedThread.start("control-socket") { server.serve() }
            return server
        } catch {
            close(fd)
            throw error
        }
    }

    private init(path: String, listener: Int32, wake: (reader: Int32, writer: Int32), handler: @escaping Handler,
                 peerCheck: PeerCheck, limits: Limits, logger: Logger, accept: @escaping @Sendable (Int32) -> Int32) {
        self.path = path
        self.listener = listener
        self.wake = wake
        self.handler = handler
        self.peerCheck = peerCheck
        self.limits = limits
        self.logger = logger
        self.acceptConnection = accept
    }

    /// Sends one event line to every subscriber.
    package func broadcast(_ event: ControlJSON) {
        let line = event.line()
        state.withLock { s in
            for (fd, var client) in s.clients where client.subscribed {
                if client.output.count + line.count > limits.maxPendingOutput {
                    client.closeAfterFlush = true
                    client.output.removeAll()
                } else {
                    client.output += line
                }
                s.clients[fd] = client
            }
        }
        signal()
    }

    package var clientCount: Int { state.withLock { $0.clients.count } }
    package var connectionsAccepted: UInt64 { state.withLock { $0.nextSerial } }

    /// The largest output any client has waiting (tests check it stays bounded).
    package var largestPendingOutput: Int { state.withLock { $0.clients.values.map(\.output.count).max() ?? 0 } }

    /// Closes every connection and the socket, removes its path, and returns once the thread is done.
    package func stop() async {
        state.withLock { $0.stopping = true }
        signal()
        await withCheckedContinuation { c in
            let parked = stopped.withLock { waiters -> Bool in
                guard waiters != nil else { return false }
                waiters!.append(c)
                return true
            }
            if !parked { c.resume() }
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wake.writer, &byte, 1)
    }

    private func serve() {
        var backoff = AcceptBackoff()
        while true {
            let (stopping, watched, done) = state.withLock { s in
                // A client to be closed once its output is sent, with nothing left to send, goes now.
                let done = s.clients.values.filter { $0.closeAfterFlush && $0.output.isEmpty }.map(\.fd)
                let watched = s.clients.values.filter { !($0.closeAfterFlush && $0.output.isEmpty) }.map { client in
                    var events = Int16(0)
                    // A client that does not read its answers is not read either: its output stays bounded.
                    if client.inFlight < limits.maxInFlight && !client.closeAfterFlush
                        && client.output.count < limits.maxPendingOutput { events |= Int16(POLLIN) }
                    if !client.output.isEmpty { events |= Int16(POLLOUT) }
                    return (pollfd(fd: client.fd, events: events, revents: 0), client.serial)
                }
                return (s.stopping, watched, done)
            }
            for fd in done { drop(fd: fd) }
            if stopping {
                finishReplies(within: 3_000)
                break
            }
            var timeout: Int32 = -1
            if let until = backoff.until {
                let left = until - ContinuousClock.now
                if left <= .zero { backoff.until = nil } else { timeout = Int32(max(1, left / .milliseconds(1))) }
            }
            let listening = backoff.until == nil
            var fds = [pollfd(fd: wake.reader, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listening ? listener : -1, events: Int16(POLLIN), revents: 0)] + watched.map(\.0)
            guard poll(&fds, nfds_t(fds.count), timeout) >= 0 || errno == EINTR else {
                logger.error("control socket poll failed: \(String(cString: strerror(errno)))")
                break
            }
            if fds[0].revents != 0 { drainWake() }
            if listening, fds[1].revents & Int16(POLLIN) != 0 { acceptClients(&backoff) }
            for (p, (_, serial)) in zip(fds.dropFirst(2), watched) where p.revents != 0 {
                limits.hooks.beforeService(p.fd, p.revents)
                service(fd: p.fd, serial: serial, revents: p.revents)
            }
        }
        shutdown()
    }

    /// On the way out: the answers to requests already taken (`stop`'s own among them) still reach their
    /// clients, for at most `ms` milliseconds (3 s: a loaded machine has been seen to take over 1 s to finish a
    /// 150 ms handler); nothing new is read.
    private func finishReplies(within ms: Int) {
        let deadline = ContinuousClock.now + .milliseconds(ms)
        while ContinuousClock.now < deadline {
            let waiting = state.withLock { s in
                s.clients.values.filter { $0.inFlight > 0 || !$0.output.isEmpty }
                    .map { pollfd(fd: $0.fd, events: $0.output.isEmpty ? 0 : Int16(POLLOUT), revents: 0) }
            }
            if waiting.isEmpty { return }
            var fds = [pollfd(fd: wake.reader, events: Int16(POLLIN), revents: 0)] + waiting
            let left = max(1, Int((deadline - ContinuousClock.now) / .milliseconds(1)))
            guard poll(&fds, nfds_t(fds.count), Int32(min(left, 100))) >= 0 || errno == EINTR else { return }
            if fds[0].revents != 0 { drainWake() }
            for p in fds.dropFirst() where p.revents != 0 {
                if p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { drop(fd: p.fd) } else { flush(fd: p.fd) }
            }
        }
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(wake.reader, &buffer, buffer.count) > 0 {}
    }

    private func acceptClients(_ backoff: inout AcceptBackoff) {
        while true {
            let fd = acceptConnection(listener)
            guard fd >= 0 else {
                let code = errno
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) {
                    if backoff.next == AcceptBackoff.first {
                        logger.warning("control socket: cannot accept connections (\(String(cString: strerror(code)))); retrying in a while")
                    }
                    backoff.until = ContinuousClock.now + backoff.next
                    backoff.next = min(backoff.next * 2, AcceptBackoff.longest)
                }
                return
            }
            backoff.next = AcceptBackoff.first
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            UnixSocket.setNonBlocking(fd)
            let allowed = peerCheck.allows(socket: fd)
            if !allowed { logger.warning("control socket: refused a peer of another user") }
            let turnedAway = state.withLock { s -> Bool in
                let full = s.clients.count >= limits.maxClients
                s.nextSerial += 1
                var client = Client(fd: fd, serial: s.nextSerial)
                if !allowed || full {
                    client.output = ControlResponse(id: .null, outcome: .failure(allowed ? .busy : .forbidden)).json.line()
                    client.closeAfterFlush = true
                }
                s.clients[fd] = client
                return !allowed || full
            }
            // Its one line fits the socket's buffer: sent and closed now, so a flood cannot pile up turned-away clients.
            if turnedAway { flush(fd: fd) }
        }
    }

    /// Whether `fd` still belongs to the client polled with `serial`: one dropped meanwhile (its number perhaps
    /// already another descriptor's, opened by another thread) is neither read nor written.
    private func owns(_ fd: Int32, serial: UInt64) -> Bool {
        state.withLock { $0.clients[fd]?.serial == serial }
    }

    private func service(fd: Int32, serial: UInt64, revents: Int16) {
        guard owns(fd, serial: serial) else { return }
        if revents & Int16(POLLIN) != 0 {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                receive(fd: fd, bytes: buffer[..<n])  // which flushes
                return
            }
            if n == 0 || (errno != EAGAIN && errno != EINTR) {
                drop(fd: fd)
                return
            }
        }
        if revents & Int16(POLLOUT) != 0 {
            flush(fd: fd)
        } else if revents & Int16(POLLIN) == 0, revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            drop(fd: fd)
        }
    }

    private func receive(fd: Int32, bytes: ArraySlice<UInt8>) {
        var requests: [ControlRequest] = []
        var serial: UInt64 = 0
        state.withLock { s in
            guard var client = s.clients[fd] else { return }
            serial = client.serial
            client.input += bytes
            while let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
                let line = client.input[..<newline]
                client.input.removeSubrange(...newline)
                if client.discardingLongLine { client.discardingLongLine = false; continue }
                let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
                if trimmed.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
                guard trimmed.count <= limits.maxLineBytes else {
                    client.output += ControlResponse(id: .null, outcome: .failure(.lineTooLong)).json.line()
                    continue
                }
                switch ControlRequest.parse(trimmed) {
                case .success(let request):
                    client.inFlight += 1
                    requests.append(request)
                case .failure(let failure):
                    client.output += ControlResponse(id: failure.id, outcome: .failure(failure.error)).json.line()
                }
            }
            if client.input.count > limits.maxLineBytes {
                if !client.discardingLongLine {
                    client.output += ControlResponse(id: .null, outcome: .failure(.lineTooLong)).json.line()
                }
                client.discardingLongLine = true
                client.input.removeAll(keepingCapacity: false)
            }
            s.clients[fd] = client
        }
        for request in requests {
            Task { [handler, serial] in
                let reply = await handler(request)
                self.deliver(reply, to: fd, serial: serial)
            }
        }
        flush(fd: fd)
    }

    private func deliver(_ reply: Reply, to fd: Int32, serial: UInt64) {
        state.withLock { s in
            guard var client = s.clients[fd], client.serial == serial else { return }
            client.inFlight -= 1
            switch reply {
            case .respond(let response): client.output += response.json.line()
            case .subscribe(let response):
                client.output += response.json.line()
                client.subscribed = true
            }
            s.clients[fd] = client
        }
        signal()
    }

    /// Sends what `fd`'s client has waiting, as far as its socket takes it. A client that hung up (EPIPE,
    /// ECONNRESET) is dropped: kept, a client that is not read (turned away, or closing after its flush) would stay
    /// for ever, its descriptor polled writable in every round. Descriptors must not run out: when they do,
    /// libdispatch's worker monitor cannot open /proc/<tid>/stat and traps the whole daemon (SIGILL).
    private func flush(fd: Int32) {
        let close = state.withLock { s -> Bool in
            guard var client = s.clients[fd] else { return false }
            var gone = false
            while !client.output.isEmpty {
                let n = client.output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { client.output.removeFirst(n); continue }
                if n < 0 && errno == EINTR { continue }
                gone = n < 0 && errno != EAGAIN && errno != EWOULDBLOCK
                break
            }
            s.clients[fd] = client
            return gone || (client.closeAfterFlush && client.output.isEmpty)
        }
        if close { drop(fd: fd) }
    }

    private func drop(fd: Int32) {
        let closed = state.withLock { s -> Bool in
            guard s.clients.removeValue(forKey: fd) != nil else { return false }
            Glibc.close(fd)
            return true
        }
        if closed { limits.hooks.afterClose(fd) }
    }

    private func shutdown() {
        state.withLock { s in
            for fd in s.clients.keys { Glibc.close(fd) }
            s.clients.removeAll()
        }
        close(listener)
        unlink(path)
        close(wake.reader)
        close(wake.writer)
        let waiters = stopped.withLock { w -> [CheckedContinuation<Void, Never>] in
            defer { w = nil }
            return w ?? []
        }
        for w in waiters { w.resume() }
    }
}
