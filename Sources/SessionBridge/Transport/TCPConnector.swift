import Glibc

/// Connects a non-blocking TCP socket to the first address of a host that answers (IPv4 or IPv6, in the
/// resolver's order), within the waiter's deadline. With an `allowed` rule (plaintext `ws://`), an
/// address outside it is never connected to, and the connected peer (`getpeername`) is checked again:
/// the rule is about the address reached, not the name that was written.
enum TCPConnector {
    static func connect(
        host: String, port: Int, waiter: SocketWaiter, resolver: HostResolver = .system,
        allowed: (@Sendable (SocketAddress) -> Bool)? = nil
    ) throws(TransportError) -> (fd: Int32, peer: SocketAddress) {
        let addresses = try resolver.resolve(host, port)
        var lastError = "no addresses"
        var refused: [SocketAddress] = []
        for address in addresses {
            if let allowed, !allowed(address) {
                refused.append(address)
                continue
            }
            let fd = socket(Int32(address.family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let started = address.storage.withUnsafeBytes { raw in
                Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            var connected = started == 0
            if !connected {
                guard errno == EINPROGRESS else {
                    lastError = String(cString: strerror(errno))
                    close(fd)
                    continue
                }
                switch waiter.wait(for: fd, .writable) {
                case .timedOut:
                    close(fd)
                    throw .timedOut(host: host, port: port, stage: "TCP connect")
                case .aborted:
                    close(fd)
                    throw .streamClosed
                case .ready:
                    var code: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
                    if code == 0 {
                        connected = true
                    } else {
                        lastError = String(cString: strerror(code))
                    }
                }
            }
            guard connected else {
                close(fd)
                continue
            }
            guard let peer = peerAddress(fd) else {
                lastError = "the connected socket has no peer address"
                close(fd)
                continue
            }
            if let allowed, !allowed(peer) {
                close(fd)
                throw .plaintextPeerNotAllowed(host: host, address: peer.description)
            }
            return (fd, peer)
        }
        if !refused.isEmpty {
            throw .plaintextPeerNotAllowed(host: host, address: refused.map(\.description).joined(separator: ", "))
        }
        throw .connectFailed(host: host, port: port, reason: lastError)
    }

    /// The address the socket is connected to.
    static func peerAddress(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return withUnsafeBytes(of: &storage) { SocketAddress(bytes: $0.baseAddress!, length: Int(length)) }
    }
}
