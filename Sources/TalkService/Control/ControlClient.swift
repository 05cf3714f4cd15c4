import Foundation
import Glibc

/// Why a CLI command could not get an answer from the daemon.
package enum ControlClientError: Error, Equatable, CustomStringConvertible {
    /// Nothing listens at the socket: the CLI says so and exits with code 3.
    case noDaemon(path: String)
    case timedOut
    case connectionClosed
    case badReply(String)
    case io(String)
    /// The socket is served by another user's process (a planted socket): nothing was sent to it.
    case foreignServer(path: String, uid: UInt32?)

    package var description: String {
        switch self {
        case .noDaemon(let path): "openclaw-talk is not running (no daemon at \(path))"
        case .timedOut: "the daemon did not answer in time"
        case .connectionClosed: "the daemon closed the connection"
        case .badReply(let line): "the daemon sent an unreadable reply: \(line.prefix(120))"
        case .io(let why): "control socket: \(why)"
        case .foreignServer(let path, let uid?):
            "the control socket \(path) is served by uid \(uid), not by you: refusing to talk to it"
        case .foreignServer(let path, nil):
            "the control socket \(path) is served by a process that cannot be identified: refusing to talk to it"
        }
    }

    /// The exit code the CLI uses for it: 3 means "no daemon", as `status` scripts expect.
    package var exitCode: Int32 { if case .noDaemon = self { 3 } else { 1 } }
}

/// The CLI's side of the control socket: blocking, one connection, one thread (a command's whole life).
package final class ControlClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1

    /// Connects, and talks only to a server of our own user (SO_PEERCRED, checked by `peerCheck`): a socket another
    /// user planted would otherwise receive what we `say`.
    package init(path: String, timeout: Duration = .seconds(10), peerCheck: PeerCheck = PeerCheck()) throws(ControlClientError) {
        let fd: Int32
        do { fd = try UnixSocket.stream() } catch { throw .io(error.description) }
        let connected: Int32
        do { connected = try UnixSocket.withAddress(path) { connect(fd, $0, $1) } } catch {
            close(fd)
            throw .io(error.description)
        }
        if connected != 0 {
            let code = errno
            close(fd)
            if code == ENOENT || code == ECONNREFUSED || code == ENOTDIR { throw .noDaemon(path: path) }
            throw .io("connect \(path): \(String(cString: strerror(code)))")
        }
        guard let server = peerCheck.credentials(fd), server.uid == peerCheck.allowedUID else {
            let uid = peerCheck.credentials(fd)?.uid
            close(fd)
            throw .foreignServer(path: path, uid: uid)
        }
        self.fd = fd
        setReadTimeout(timeout)
    }

    deinit { close(fd) }

    /// `nil` waits forever (following events).
    package func setReadTimeout(_ timeout: Duration?) {
        let seconds = timeout.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 0
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A send that cannot proceed this long fails (`timedOut`) instead of blocking.
    package func setSendTimeout(_ timeout: Duration) {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends a request and returns the daemon's response to it.
    package func call(_ cmd: String, args: [String: ControlJSON] = [:]) throws(ControlClientError) -> ControlResponse {
        let id = ControlJSON.number(Double(nextID))
        nextID += 1
        do { try send(ControlRequest(id: id, cmd: cmd, args: args).line) } catch .connectionClosed {
            // The daemon may have said why before closing (a refused peer): read that rather than "closed".
        }
        while true {
            let value = try readJSONLine()
            guard let response = ControlResponse.parse(value) else { continue }  // an event line
            if response.id == id || response.id == .null { return response }
        }
    }

    package func send(_ bytes: [UInt8]) throws(ControlClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                throw errno == EPIPE ? .connectionClosed : .io(String(cString: strerror(errno)))
            }
            offset += n
        }
    }

    /// The next line the daemon sent, parsed.
    package func readJSONLine() throws(ControlClientError) -> ControlJSON {
        let line = try readLine()
        guard let value = try? JSONDecoder().decode(ControlJSON.self, from: Data(line)) else {
            throw .badReply(String(decoding: line, as: UTF8.self))
        }
        return value
    }

    package func readLine() throws(ControlClientError) -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, chunk.count)
            if n > 0 { buffer += chunk[..<n] }
            else if n == 0 { throw .connectionClosed }
            else if errno == EINTR { continue }
            else if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
            else { throw .io(String(cString: strerror(errno))) }
        }
    }
}
