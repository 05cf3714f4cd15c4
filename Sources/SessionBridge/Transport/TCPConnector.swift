import Glibc

/// Resolves a host with `getaddrinfo` and connects a non-blocking TCP socket to the first address that
/// answers (IPv4 or IPv6, in the resolver's order), within the waiter's deadline.
enum TCPConnector {
    static func connect(host: String, port: Int, waiter: SocketWaiter) throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolveFailed(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }

        var lastError = "no addresses"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
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
                if code == 0 { return fd }
                lastError = String(cString: strerror(code))
                close(fd)
            }
        }
        throw .connectFailed(host: host, port: port, reason: lastError)
    }
}
