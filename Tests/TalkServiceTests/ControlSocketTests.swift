import Foundation
import TalkTestSupport
import Glibc
import Synchronization
import TalkLogging
import Testing
@testable import TalkService

@Suite struct ControlSocketTests {
    @Test func commandsReachTheSessionAndAnswerWithTheirID() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let paused = try await h.call("pause")
        #expect(paused.outcome == .success(.null))
        let said = try await h.call("say", ["text": .string("hello there")])
        #expect(said.outcome == .success(.null))
        let ptt = try await h.call("ptt", ["action": .string("once")])
        #expect(ptt.outcome == .success(.null))
        #expect(await h.session.calls == ["pause", "say:hello there", "ptt:once"])
        let status = try await h.call("status")
        #expect(try status.outcome.get()["state"] == .string("disconnected"))
        #expect(try status.outcome.get()["pid"] == .number(Double(getpid())))

        let path = h.socketPath
        let ids = try await offPool { () -> [ControlJSON] in
            let client = try ControlClient(path: path)
            try client.send(ControlRequest(id: .string("abc"), cmd: "ping").line)
            return [try client.readJSONLine()["id"] ?? .null]
        }
        #expect(ids == [.string("abc")])
    }

    @Test func unknownCommandsAndBadArgumentsAreErrorObjects() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let unknown = try await h.call("selfdestruct")
        #expect(unknown.outcome.failureCode == "unknown_command")
        let noText = try await h.call("say", ["text": .number(3)])
        #expect(noText.outcome.failureCode == "bad_args")
        let badAction = try await h.call("ptt", ["action": .string("sideways")])
        #expect(badAction.outcome.failureCode == "bad_args")
        #expect(await h.session.calls.isEmpty)
        #expect(try await h.call("ping").outcome == .success(.string("pong")))
    }

    /// 10 000 malformed lines over one connection: each gets an error object, other clients are served
    /// throughout, and a line far over the limit is refused without being buffered.
    @Test func fuzzOfMalformedLinesLeavesTheServerServing() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let count = 10_000
        let answers = try await offPool { () -> [String: Int] in
            var generator = SystemRandomNumberGenerator()
            let shapes: [(inout SystemRandomNumberGenerator) -> [UInt8]] = [
                { g in (0..<Int.random(in: 1...200, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }.filter { $0 != 10 } + [120] },
                { _ in Array("[1,2,3]".utf8) }, { _ in Array("{\"cmd\": 5}".utf8) }, { _ in Array("{\"id\": {}, \"cmd\": \"ping\"}".utf8) },
                { _ in Array("{\"cmd\": \"ping\", \"args\": []}".utf8) }, { _ in Array("{\"cmd\": \"\"}".utf8) },
                { _ in Array("{\"cmd\": \"status\"".utf8) }, { _ in Array("\"status\"".utf8) }, { _ in Array("null".utf8) },
                { g in Array("{\"id\":\(Int.random(in: 0...99, using: &g)),\"cmd\":\"nope\(Int.random(in: 0...99, using: &g))\"}".utf8) },
            ]
            let client = try ControlClient(path: path)
            var codes: [String: Int] = [:]
            // Write in batches and read their answers, so neither side's socket buffer deadlocks us.
            var sent = 0
            while sent < count {
                var batch: [UInt8] = []
                let n = min(200, count - sent)
                for i in 0..<n { batch += shapes[(sent + i) % shapes.count](&generator) + [10] }
                try client.send(batch)
                for _ in 0..<n {
                    let reply = try client.readJSONLine()
                    guard case .bool(false)? = reply["ok"], let code = reply["error"]?["code"]?.stringValue else {
                        throw ControlClientError.badReply("\(reply)")
                    }
                    codes[code, default: 0] += 1
                }
                sent += n
            }
            let other = try ControlClient(path: path).call("ping")
            guard other.outcome == .success(.string("pong")) else { throw ControlClientError.badReply("ping") }
            // 4 MiB without a newline: refused before its end arrives (so it is not being kept), once.
            try client.send([UInt8](repeating: UInt8(ascii: "a"), count: 4 << 20))
            let tooLong = try client.readJSONLine()
            try client.send([UInt8](repeating: UInt8(ascii: "b"), count: 1 << 20) + [10])
            codes[tooLong["error"]?["code"]?.stringValue ?? "?", default: 0] += 1
            guard try client.call("ping").outcome == .success(.string("pong")) else { throw ControlClientError.badReply("ping 2") }
            return codes
        }
        #expect(answers.values.reduce(0, +) == count + 1)
        #expect(answers["line_too_long"] == 1)
        #expect(answers["unknown_command"] == count / 10)
        #expect(try await h.call("ping").outcome == .success(.string("pong")))
    }

    /// A client that sends without ever reading its answers stops being read: our memory stays bounded.
    @Test func aClientThatNeverReadsCannotGrowTheServersMemory() async throws {
        var limits = ControlServer.Limits()
        limits.maxPendingOutput = 64 * 1024
        let h = try ServiceHarness(limits: limits)
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let sent = try await offPool { () -> Int in
            let client = try ControlClient(path: path)
            client.setSendTimeout(.milliseconds(500))
            let chunk = [UInt8](repeating: 0, count: 4096).enumerated().map { $0.offset % 3 == 2 ? 10 : UInt8(ascii: "[") }
            var sent = 0
            while sent < 2 << 20 {
                do { try client.send(chunk) } catch { break }
                sent += chunk.count
            }
            return sent
        }
        #expect(sent < 2 << 20, "the server kept reading")
        #expect(h.server.largestPendingOutput <= 256 * 1024)
        #expect(try await h.call("ping").outcome == .success(.string("pong")))
    }

    @Test func eventsFollowStreamsSessionEventsAndStatus() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        let path = h.socketPath
        let subscribed = Mutex(false)
        let follower = Task {
            try await offPool { () -> [ControlJSON] in
                let client = try ControlClient(path: path)
                let first = try client.call("events")
                guard case .success = first.outcome else { throw ControlClientError.badReply("events") }
                subscribed.withLock { $0 = true }
                var lines: [ControlJSON] = []
                while lines.count < 2 { lines.append(try client.readJSONLine()) }
                return lines
            }
        }
        while !subscribed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
        await h.session.set { $0.lastTranscript = "what time is it" }
        h.session.emit(SessionEvent(kind: "transcript", detail: ["text": "what time is it"]))
        let lines = try await follower.value
        #expect(lines[0] == .object(["event": .string("transcript"), "text": .string("what time is it")]))
        #expect(lines[1]["event"] == .string("status"))
        #expect(lines[1]["status"]?["lastTranscript"] == .string("what time is it"))
    }

    @Test func socketAndFolderAreOwnerOnly() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        var info = stat()
        #expect(stat(h.folder.paths.runtimeDirectory, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(stat(h.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
    }

    /// As root no other uid can be made to connect, so the kernel's answer is injected.
    @Test func aPeerOfAnotherUserIsRefused() async throws {
        let stranger = PeerCheck(allowedUID: getuid()) { _ in PeerCredentials(pid: 1, uid: getuid() &+ 1, gid: 0) }
        let h = try ServiceHarness(peerCheck: stranger)
        defer { Task { await h.shutdown() } }
        let reply = try await h.call("pause")
        #expect(reply.outcome.failureCode == "forbidden")
        // Also when the server has already closed before the request goes out: the refusal is still read.
        let path = h.socketPath
        let server = h.server
        let late = try await offPool { () -> ControlResponse in
            let before = server.connectionsAccepted
            let client = try ControlClient(path: path)
            while server.connectionsAccepted == before || server.clientCount > 0 { usleep(10_000) }
            return try client.call("pause")
        }
        #expect(late.outcome.failureCode == "forbidden")
        #expect(await h.session.calls.isEmpty)
        #expect(PeerCheck().allows(socket: -1) == false)
    }

    @Test func theRealPeerCredentialsAreOurOwn() async throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let peer = try #require(PeerCredentials.of(socket: pair[0]))
        #expect(peer.uid == getuid())
        #expect(peer.pid == getpid())
        #expect(PeerCheck().allows(socket: pair[0]))
    }

    @Test func withoutADaemonTheClientSaysSoWithExitCode3() throws {
        let folder = try TemporaryFolder()
        #expect(throws: ControlClientError.noDaemon(path: folder.paths.socketPath)) {
            try ControlClient(path: folder.paths.socketPath)
        }
        #expect(ControlClientError.noDaemon(path: "x").exitCode == 3)
        #expect(ControlClientError.timedOut.exitCode == 1)
    }

    /// `stop` ends the daemon while its own answer is on the way: the server stopping meanwhile still delivers it
    /// (the CLI printed "the daemon closed the connection" when the realtime daemon shut down first).
    @Test func anAnswerUnderWayWhenTheServerStopsStillReachesItsClient() async throws {
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let late = Mutex<ControlServer?>(nil)
        let server = try ControlServer.start(path: folder.paths.socketPath, logger: Logger(label: "test", handler: InMemoryLogHandler())) { request in
            if let server = late.withLock({ $0 }) { Task { await server.stop() } }
            try? await Task.sleep(for: .milliseconds(150))   // the shutdown runs ahead of the answer
            return .respond(ControlResponse(id: request.id, outcome: .success(.string("bye"))))
        }
        late.withLock { $0 = server }
        let path = folder.paths.socketPath
        let answer = try await offPool { try ControlClient(path: path).call("stop") }
        #expect(answer.outcome == .success(.string("bye")))
        await server.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func stopRemovesTheSocket() async throws {
        let h = try ServiceHarness()
        #expect(try await h.call("stop").outcome == .success(.null))
        #expect(h.stops.count == 1)
        await h.shutdown()
        #expect(!FileManager.default.fileExists(atPath: h.socketPath))
    }
}

extension Result where Failure == ControlError {
    var failureCode: String? { if case .failure(let e) = self { e.code } else { nil } }
}
