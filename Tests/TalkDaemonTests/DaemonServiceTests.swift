import Foundation
import Glibc
import Synchronization
@testable import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The built daemon as systemd and the Gateway see it: sd_notify messages and journal prefixes from the real
/// daemon, retrying a Gateway that is down (and saying why), and a clean stop with a transcript in flight.
@Suite(.serialized) struct DaemonServiceTests {
    @Test(.requires(.builtBinary))
    func `under systemd the daemon sends READY, STATUS, RELOADING, WATCHDOG and STOPPING and prefixes its log lines`() async throws {
        var h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let notify = h.command.home + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        #expect(try UnixSocket.withAddress(notify) { bind(fd, $0, $1) } == 0)
        var command = h.command
        command.extraEnvironment = ["NOTIFY_SOCKET": notify, "WATCHDOG_USEC": "1000000", "INVOCATION_ID": "0123456789abcdef"]
        h = DaemonHarness(gateway: h.gateway, command: command, paths: h.paths)
        let running = try command.start(["run", "--idle"] + (try h.fileDevices))
        let messages = Messages()
        // Read until the test ends: a socket nobody reads fills up, and then it is systemd that seems gone.
        let done = Flag()
        defer { done.set() }
        let reader = Task {
            try await offPool {
                var tv = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                while !done.isSet, !messages.all.contains(where: { $0.contains("STOPPING=1") }) {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let n = recv(fd, &buffer, buffer.count, 0)
                    if n > 0 { messages.add(String(decoding: buffer[..<n], as: UTF8.self)) }
                }
            }
        }
        #expect(await h.eventually(.seconds(60)) { messages.all.contains { $0.hasPrefix("READY=1\nSTATUS=") } }, "\(messages.all)")
        #expect(await h.eventually { messages.all.contains("WATCHDOG=1") }, "pinged at half WATCHDOG_USEC")
        let pid = running.process.processIdentifier
        kill(pid, SIGHUP)
        #expect(await h.eventually { messages.all.contains { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") } }, "\(messages.all)")
        #expect(await h.eventually { messages.all.contains("READY=1\nSTATUS=configuration reloaded") }, "\(messages.all)")
        #expect(try await h.run(["talk", "start"]).status == 0)
        #expect(await h.eventually { messages.all.contains { $0.hasPrefix("STATUS=listening") } }, "the state in words: \(messages.all)")
        running.process.terminate()
        let r = try await running.finish(timeout: .seconds(30))
        done.set()
        try await reader.value
        #expect(r.status == 0)
        #expect(messages.all.contains("STOPPING=1"))
        let lines = r.stderr.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("<") && $0.dropFirst(2).hasPrefix(">") }, "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("<5>") && $0.contains("notice") && $0.contains("serving") }, "\(r.stderr)")
    }

    @Test(.requires(.builtBinary))
    func `a notify socket nobody reads does not freeze the daemon`() async throws {
        let base = try await DaemonHarness.make()
        defer { base.tearDown() }
        let notify = base.command.home + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        #expect(try UnixSocket.withAddress(notify) { bind(fd, $0, $1) } == 0)
        var command = base.command
        // A watchdog ping every 50 ms fills the unread socket's queue within a second; sd_notify then blocks.
        command.extraEnvironment = ["NOTIFY_SOCKET": notify, "WATCHDOG_USEC": "100000"]
        let h = DaemonHarness(gateway: base.gateway, command: command, paths: base.paths)
        let running = try command.start(["run", "--idle"] + (try h.fileDevices))
        #expect(try await h.eventually { try await h.status() != nil })
        try await Task.sleep(for: .seconds(2))
        #expect(try await h.run(["talk", "start"], timeout: .seconds(20)).status == 0, "still answering")
        #expect(try await h.status()?.state == "listening")
        let pid = running.process.processIdentifier
        kill(pid, SIGTERM)
        #expect(await h.eventually(.seconds(20)) { !running.process.isRunning }, "and it stops")
        if running.process.isRunning { kill(pid, SIGKILL) }
        _ = try await running.finish(timeout: .seconds(5))
    }

    @Test(.requires(.builtBinary))
    func `with the Gateway down the daemon starts, keeps retrying and its status says why and when`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        h.gateway.stop()
        _ = try await h.start(["--idle"] + (try h.fileDevices))
        #expect(try await h.eventually {
            guard let s = try await h.status() else { return false }
            return s.gateway.state == "reconnecting" && s.gateway.nextRetryAt != nil
        }, "reconnecting with a retry date")
        let status = try #require(try await h.status())
        #expect(status.gateway.connected == false)
        #expect(status.gateway.staleAt != nil, "the connection state has its own stale date")
        #expect(status.error?.isEmpty == false, "why: \(status.error ?? "nil")")
        // It keeps trying: the retry date moves on.
        let first = try #require(status.gateway.nextRetryAt)
        #expect(try await h.eventually(.seconds(20)) { try await h.status()?.gateway.nextRetryAt.map { $0 > first } == true })
        let r = try await h.run(["status"])
        #expect(r.stdout.hasPrefix("reconnecting"), "\(r.stdout)")
    }

    @Test(.requires(.builtBinary))
    func `say sends a typed turn to the daemon, and SIGTERM with its ack outstanding keeps it in the outbox`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        _ = try await offPool { try h.gateway.control(#"{"cmd": "chat-ack", "mode": "hold"}"#) }
        let pid = try await h.start(["--idle"] + (try h.fileDevices))
        var r = try await h.run(["say", "please remember the milk"])
        #expect(r.status == 1 && r.stderr.contains("Talk is off"), "with Talk off it says so: \(r.stdout) \(r.stderr)")
        #expect(try await h.run(["talk", "start"]).status == 0)
        r = try await h.run(["say", "please remember the milk"])
        #expect(r.status == 0 && r.stdout.contains("Sent to the assistant"), "\(r.stdout) \(r.stderr)")
        #expect(try await h.eventually {
            let t = try await offPool { try h.gateway.control("chat-transcripts") }["transcripts"]?.arrayValue ?? []
            return t.contains { $0["message"]?.stringValue == "please remember the milk" }
        }, "the Gateway got the typed turn")
        kill(pid, SIGTERM)
        #expect(await h.eventually { !DaemonHarness.alive(pid) }, "SIGTERM ends it")
        let outbox = (try? String(contentsOfFile: h.command.stateFolder + "/chat-outbox.json", encoding: .utf8)) ?? ""
        #expect(outbox.contains("please remember the milk"), "unacknowledged, it waits in the outbox: \(outbox)")
        // (talk.mode disabled on the way out is checked by the walkthrough and RunCommandTests: refgw, holding this
        // ack, answers nothing else on the socket, so here it cannot arrive.)
        #expect(h.log.contains("stopped"), "\(h.log)")
    }
}

final class Messages: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
