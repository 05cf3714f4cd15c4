import Foundation
import Glibc
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The tests read refgw's state through its control port; an answer they cannot read must stop them,
/// never pass for "no violations" or "nothing pending".
@Suite struct ReferenceGatewayControlTests {
    @Test(arguments: [
        ("not json at all\n", "'not json at all'"),
        ("", "nothing before it closed"),
        ("[1, 2]\n", "'[1, 2]'"),
        (#"{"violations": []}"# + "\n", #"'{"violations": []}'"#),
    ])
    func `a reply that is not refgw's JSON answer is an error naming the command`(reply: String, shown: String) async throws {
        let port = try FakeControlPort(reply: reply)
        let error = await #expect(throws: ReferenceGatewayProcess.ControlError.self) {
            try await offPool { try ReferenceGatewayProcess.control("violations", port: port.port) }
        }
        #expect(error.map { "\($0)" }?.contains("'violations'") == true, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains(shown) == true, "\(String(describing: error))")
    }

    /// Each command is tagged and only the reply carrying its tag back is its answer: a reply to another command
    /// (the chat-script reply that once came back for chat-transcripts) or an untagged one is an error.
    @Test(arguments: [#"{"ok": true, "script": {}, "controlId": "another"}"#, #"{"ok": true, "transcripts": []}"#])
    func `a reply without this command's tag is another command's, an error`(reply: String) async throws {
        let port = try FakeControlPort(reply: reply + "\n")
        let error = await #expect(throws: ReferenceGatewayProcess.ControlError.self) {
            try await offPool { try ReferenceGatewayProcess.control("chat-transcripts", port: port.port) }
        }
        #expect(error.map { "\($0)" }?.contains("answered 'chat-transcripts' with another command's reply") == true,
                "\(String(describing: error))")
    }

    @Test func `a reply carrying this command's tag is its answer`() async throws {
        let port = try FakeControlPort(reply: #"{"ok": true, "transcripts": [], "controlId": "{TAG}"}"# + "\n")
        let reply = try await offPool { try ReferenceGatewayProcess.control("chat-transcripts", port: port.port) }
        #expect(reply["transcripts"]?.arrayValue?.isEmpty == true, "\(reply)")
    }

    @Test func `a violations reply without its list is an error, not an empty list`() async throws {
        let port = try FakeControlPort(reply: #"{"ok": true, "count": 0, "controlId": "{TAG}"}"# + "\n")
        let reply = try await offPool { try ReferenceGatewayProcess.control("violations", port: port.port) }
        #expect(throws: ReferenceGatewayProcess.ControlError.self) { try ReferenceGatewayProcess.violations(in: reply) }
        #expect(try ReferenceGatewayProcess.violations(in: ["ok": true, "violations": [["kind": "schema"]]]).count == 1)
    }

    @Test func `a command refgw refuses throws its reason`() async throws {
        let gateway = try await offPool { try ReferenceGatewayProcess([]) }
        await #expect(throws: ReferenceGatewayProcess.ControlError.refused(
            command: "no-such-command", reason: "unknown command 'no-such-command' (try: help)")) {
            try await gateway.control("no-such-command")
        }
        #expect(try await gateway.control("status")["listening"] == .bool(true))
    }
}

/// A loopback port that answers one connection with a fixed reply (after reading its command line; `{TAG}` in
/// the reply becomes the command's tag) and closes: a control port gone wrong. One connection only, so its
/// thread ends on its own.
struct FakeControlPort {
    let port: Int

    init(reply: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw StorageError.io(path: "fake control port", errno: errno)
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread.detachNewThread {
            defer { close(fd) }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            // The command line is `@<tag> <command>`.
            let line = String(decoding: buffer[0..<max(n, 0)], as: UTF8.self)
            let tag = line.hasPrefix("@") ? String(line.dropFirst().prefix { $0 != " " }) : ""
            let bytes = Array(reply.replacingOccurrences(of: "{TAG}", with: tag).utf8)
            _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }
}
