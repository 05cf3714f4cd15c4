import Foundation
import Glibc

/// The small pieces of AF_UNIX plumbing the server and the client share.
enum UnixSocket {
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// Calls `body` with a `sockaddr_un` for `path`; a path longer than `sun_path` fails (ENAMETOOLONG).
    static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) throws(Failure) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw Failure(call: "socket path", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    static func stream() throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        return fd
    }

    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// A self-pipe: a byte written to `[1]` wakes a `poll()` on `[0]`.
    static func wakePipe() throws(Failure) -> (reader: Int32, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure(call: "pipe", code: errno) }
        for fd in fds {
            setNonBlocking(fd)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }
}

/// Who is on the other end of a control connection, as the kernel reports it (SO_PEERCRED).
package struct PeerCredentials: Sendable, Equatable {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32

    package init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// `struct ucred` is hidden behind _GNU_SOURCE in Glibc's Swift overlay; its layout is three 32-bit ints.
    package static func of(socket fd: Int32) -> PeerCredentials? {
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0,
              Int(length) == MemoryLayout.size(ofValue: raw) else { return nil }
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2)
    }
}

/// Decides whether a peer may use the control socket: only the daemon's own user. The credential
/// lookup is injected so the refusal can be tested as root, where no other uid can connect.
package struct PeerCheck: Sendable {
    package var allowedUID: UInt32
    package var credentials: @Sendable (Int32) -> PeerCredentials?

    package init(allowedUID: UInt32 = getuid(),
                 credentials: @escaping @Sendable (Int32) -> PeerCredentials? = PeerCredentials.of(socket:)) {
        self.allowedUID = allowedUID
        self.credentials = credentials
    }

    /// Unknown credentials are refused too: a peer that cannot be identified is not trusted.
    package func allows(socket fd: Int32) -> Bool {
        guard let peer = credentials(fd) else { return false }
        return peer.uid == allowedUID
    }
}
