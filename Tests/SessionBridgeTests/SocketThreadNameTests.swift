import Foundation
import Glibc
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Thread sampling (`/proc/<pid>/task/*/comm`) tells a process's threads apart only by the names the system lists: a
/// socket's I/O thread named through Foundation's `Thread.name` before `start()` kept the name of the thread that made
/// it, so a busy socket read as the cooperative pool.
@Suite struct SocketThreadNameTests {
    @Test func `a connection's I/O thread is listed by the system under the connection's name`() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let stream = try await TCPByteStream.connect(host: "127.0.0.1", port: port, timeout: .seconds(10))
        let names = ThreadList.names
        await stream.close()
        #expect(names.contains(String("tcp 127.0.0.1:\(port)".utf8.prefix(15))!))
    }
}
