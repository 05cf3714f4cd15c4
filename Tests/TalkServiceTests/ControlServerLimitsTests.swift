import Foundation
import Glibc
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing
@testable import TalkService

/// What a flood of connections, a process out of descriptors and a reused descriptor number do to the control
/// server: it caps its clients, backs off instead of spinning, and never reads a descriptor it no longer owns.
@Suite struct ControlServerLimitsTests {
    static let logger = Logger(label: "test", handler: InMemoryLogHandler())

    @Test func `clients over the cap are told the daemon is busy, and the others are still served`() async throws {
        var limits = ControlServer.Limits()
        limits.maxClients = 4
        let h = try ServiceHarness(limits: limits)
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let server = h.server
        let outcome = try await offPool { () -> (over: ControlResponse, held: [ControlResponse], after: ControlResponse) in
            // Four idle connections, each answered once so the server has surely taken it.
            var held = try (0..<4).map { _ in try ControlClient(path: path) }
            let pings = try held.map { try $0.call("ping") }
            let over = try ControlClient(path: path).call("ping")
            held.removeLast()  // closes one
            var spins = 0
            while server.clientCount > 3 && spins < 2000 { usleep(5_000); spins += 1 }
            let after = try ControlClient(path: path).call("ping")
            _ = held
            return (over, pings, after)
        }
        #expect(outcome.held.allSatisfy { $0.outcome == .success(.string("pong")) })
        #expect(outcome.over.outcome.failureCode == "busy", "\(outcome.over.outcome)")
        #expect(outcome.after.outcome == .success(.string("pong")), "a freed place is taken again")
    }

    /// A flood's clients that give up before they are answered (a timeout, a killed script) leave connections whose
    /// peer is gone by the time they are accepted. Turned away busy, each used to stay a client for ever (its
    /// `busy` line could not be sent, and it was never read), so the cap was soon taken by the dead and every live
    /// client was told busy; a flood that went on took every descriptor the daemon had, and libdispatch then trapped
    /// it (issue 24's SIGILL in `bench soak`).
    @Test func `connections gone before they are accepted are closed, and live clients are served again`() async throws {
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        // While shut, accept() fails as a process out of descriptors does: connections wait in the listen queue.
        let shut = OutOfDescriptors(failing: false)
        var limits = ControlServer.Limits()
        limits.maxClients = 2
        let server = try shut.startPingServer(path: folder.paths.socketPath, limits: limits)
        defer { Task { await server.stop() } }
        let path = folder.paths.socketPath
        let vanished = 40
        let outcome = try await offPool { () -> (held: [ControlResponse], accepted: UInt64, left: Int, after: ControlResponse) in
            // Two live clients take the cap, each answered once so the server has surely taken it.
            var held = try (0..<2).map { _ in try ControlClient(path: path) }
            let pings = try held.map { try $0.call("ping") }
            shut.failing = true
            for _ in 0..<vanished { _ = try ControlClient(path: path) }  // connected, and closed at once
            shut.failing = false
            // Every one of them accepted (the server's retry comes within its 0.1-2 s back-off), then let go.
            var spins = 0
            while (server.connectionsAccepted < UInt64(2 + vanished) || server.clientCount > 2) && spins < 2000 {
                usleep(5_000)
                spins += 1
            }
            let (accepted, left) = (server.connectionsAccepted, server.clientCount)
            held.removeLast()  // frees a place
            spins = 0
            while server.clientCount > 1 && spins < 2000 { usleep(5_000); spins += 1 }
            let after = try ControlClient(path: path).call("ping")
            _ = held
            return (pings, accepted, left, after)
        }
        #expect(outcome.held.allSatisfy { $0.outcome == .success(.string("pong")) })
        #expect(outcome.accepted == UInt64(2 + vanished))
        #expect(outcome.left == 2, "\(outcome.left - 2) connections whose peer was gone are still held")
        #expect(outcome.after.outcome == .success(.string("pong")), "a live client after the flood: \(outcome.after.outcome)")
    }

    @Test func `out of descriptors, the server backs off instead of spinning, then serves`() async throws {
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let exhausted = OutOfDescriptors(failing: true)
        let server = try exhausted.startPingServer(path: folder.paths.socketPath)
        defer { Task { await server.stop() } }
        let path = folder.paths.socketPath
        // A connection waits in the listen queue while every accept fails with EMFILE for half a second.
        let waiting = Task { try await offPool { try ControlClient(path: path, timeout: .seconds(20)).call("ping") } }
        while exhausted.attempts == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(500))
        let tried = exhausted.attempts
        exhausted.failing = false
        // A spinning poll loop makes tens of thousands of attempts in that time; backing off, a handful.
        #expect(tried <= 20, "\(tried) accept attempts in 0.5 s")
        #expect(try await waiting.value.outcome == .success(.string("pong")))
    }

    /// Another thread may open a descriptor the moment the server closes one, and get its number: a read the server
    /// still made "for" the dropped client would take that descriptor's bytes. The hooks stand in for that thread:
    /// when a subscriber's descriptor is both readable and writable, a broadcast overflows it just before it is
    /// serviced (so the flush drops it), and a pipe holding a few bytes takes the number as soon as it is closed.
    @Test func `a dropped client's descriptor number is never read again`() async throws {
        let stolen = Mutex<[Int32]>([])
        let closes = Atomic<Int>(0)
        let armed = Atomic<Bool>(false)
        let late = Mutex<ControlServer?>(nil)
        var limits = ControlServer.Limits()
        limits.maxPendingOutput = 64 * 1024
        limits.hooks.beforeService = { _, revents in
            guard revents & Int16(POLLIN) != 0, revents & Int16(POLLOUT) != 0,
                  armed.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
            else { return }
            late.withLock { $0 }?.broadcast(.object(["event": .string(String(repeating: "x", count: 128 * 1024))]))
        }
        limits.hooks.afterClose = { fd in
            stolen.withLock { s in
                guard s.isEmpty else { return }
                var p: [Int32] = [-1, -1]
                guard pipe(&p) == 0 else { return }
                // `fd` was the lowest free number, so the pipe itself may have taken it: as its write end, that end
                // moves to another number and the read end goes onto `fd` (ours, so dup2 replaces nothing else).
                if p[1] == fd {
                    let writer = fcntl(p[1], F_DUPFD_CLOEXEC, 0)
                    guard writer >= 0, dup2(p[0], fd) == fd else {
                        if writer >= 0 { close(writer) }
                        close(p[0]); close(p[1])
                        return
                    }
                    close(p[0])
                    p = [fd, writer]
                }
                var reader = p[0]
                if reader != fd {
                    // The lowest free number from `fd` on: `fd` itself unless another thread took it first.
                    reader = fcntl(p[0], F_DUPFD_CLOEXEC, fd)
                    close(p[0])
                    guard reader == fd else {
                        if reader >= 0 { close(reader) }
                        close(p[1])
                        return
                    }
                }
                let bytes = Array("not yours\n".utf8)
                _ = write(p[1], bytes, bytes.count)
                s = [reader, p[1]]
            }
            closes.add(1, ordering: .releasing)
        }
        let h = try ServiceHarness(limits: limits)
        late.withLock { $0 = h.server }
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        // Beside other tests another thread may take the closed number first: then the pipe is not placed, and a new
        // subscriber is dropped the same way, up to 20 times.
        var attempts = 0
        while stolen.withLock({ $0.isEmpty }) && attempts < 20 {
            attempts += 1
            let closedBefore = closes.load(ordering: .acquiring)
            armed.store(true, ordering: .releasing)
            try await offPool {
                let subscriber = try ControlClient(path: path)
                subscriber.setSendTimeout(.milliseconds(200))
                guard case .success = try subscriber.call("events").outcome else { throw ControlClientError.badReply("events") }
                // Requests pipelined while their answers come back: the server soon finds the descriptor readable
                // (the next requests) and writable (answers waiting) in the same poll.
                let ping = Array("{\"id\":1,\"cmd\":\"ping\"}\n".utf8)
                for _ in 0..<5000 where armed.load(ordering: .acquiring) {
                    do { try subscriber.send(ping + ping + ping) } catch { break }
                    _ = try? subscriber.readLine()
                }
                var spins = 0
                while closes.load(ordering: .acquiring) == closedBefore && spins < 400 { usleep(5_000); spins += 1 }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let stolenPipe = stolen.withLock { $0 }
        try #require(stolenPipe.count == 2, "no pipe took a dropped subscriber's number in \(attempts) attempts")
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = fcntl(stolenPipe[0], F_SETFL, fcntl(stolenPipe[0], F_GETFL) | O_NONBLOCK)
        let left = read(stolenPipe[0], &buffer, buffer.count)
        close(stolenPipe[0])
        close(stolenPipe[1])
        #expect(left == 10, "the server read the bytes of a descriptor that was no longer its client's")
    }
}

@Suite struct ControlClientPeerTests {
    /// As root no other user's server can be started, so the kernel's answer is injected.
    @Test func `the CLI talks to no control socket another user serves`() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let stranger = PeerCheck(allowedUID: getuid()) { _ in PeerCredentials(pid: 1, uid: getuid() &+ 1, gid: 0) }
        let outcome = try await offPool { () -> Result<ControlResponse, ControlClientError> in
            do { return .success(try ControlClient(path: path, peerCheck: stranger).call("say", args: ["text": .string("my secret")])) }
            catch let error as ControlClientError { return .failure(error) }
            catch { return .failure(.io("\(error)")) }
        }
        #expect(outcome == .failure(ControlClientError.foreignServer(path: path, uid: getuid() &+ 1)), "\(outcome)")
        #expect(await h.session.calls.isEmpty, "the text reached the server")
        // Our own server is still talked to.
        #expect(try await h.call("ping").outcome == .success(.string("pong")))
    }
}

/// The control server's accept() as a process out of descriptors has it: while `failing`, every call fails with
/// EMFILE and the connection waits in the listen queue. A class, as the hook and the test share the switch and the
/// count (`Atomic` cannot be copied into the closure).
final class OutOfDescriptors: Sendable {
    private let failingNow: Atomic<Bool>
    private let tried = Atomic<Int>(0)

    init(failing: Bool) { failingNow = Atomic(failing) }

    var failing: Bool {
        get { failingNow.load(ordering: .acquiring) }
        set { failingNow.store(newValue, ordering: .releasing) }
    }

    /// accept() calls so far, failed or not.
    var attempts: Int { tried.load(ordering: .relaxed) }

    func accept(_ listener: Int32) -> Int32 {
        tried.add(1, ordering: .relaxed)
        if failing {
            errno = EMFILE
            return -1
        }
        return Glibc.accept(listener, nil, nil)
    }

    /// A control server that answers every request "pong", accepting through this hook.
    func startPingServer(path: String, limits: ControlServer.Limits = ControlServer.Limits()) throws -> ControlServer {
        try ControlServer.start(path: path, limits: limits, logger: ControlServerLimitsTests.logger, accept: accept) { request in
            .respond(ControlResponse(id: request.id, outcome: .success(.string("pong"))))
        }
    }
}
