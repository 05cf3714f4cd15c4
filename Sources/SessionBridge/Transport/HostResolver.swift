import Glibc

/// One address a host resolved to, as the kernel takes it (`sockaddr_in` / `sockaddr_in6`, with the
/// IPv6 zone in its scope id).
package struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    package var storage: [UInt8]

    package init(bytes: UnsafeRawPointer, length: Int) {
        storage = Array(UnsafeRawBufferPointer(start: bytes, count: min(length, MemoryLayout<sockaddr_storage>.size)))
    }

    /// An address from its numeric text (`127.0.0.1`, `::1`, `fe80::1%lo`), for tests and the resolver.
    package init?(numeric text: String, port: Int) {
        guard let first = try? HostResolver.numeric(text, port: port).first else { return nil }
        self = first
    }

    package var family: Int32 {
        storage.withUnsafeBytes { Int32($0.load(fromByteOffset: 0, as: sa_family_t.self)) }
    }

    /// The address bytes, without port or zone.
    package var ip: IPAddress? {
        storage.withUnsafeBytes { raw -> IPAddress? in
            switch family {
            case AF_INET where raw.count >= MemoryLayout<sockaddr_in>.size:
                let a = raw.loadUnaligned(as: sockaddr_in.self)
                return .v4(withUnsafeBytes(of: a.sin_addr) { Array($0) })
            case AF_INET6 where raw.count >= MemoryLayout<sockaddr_in6>.size:
                let a = raw.loadUnaligned(as: sockaddr_in6.self)
                return .v6(withUnsafeBytes(of: a.sin6_addr) { Array($0) })
            default: return nil
            }
        }
    }

    /// The address as numeric text (with `%zone` for scoped IPv6 addresses).
    package var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = storage.withUnsafeBytes { raw in
            getnameinfo(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count),
                        &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
        }
        return status == 0 ? String(cString: host) : "?"
    }
}

/// Turns a host into the addresses to connect to. Address literals go through numeric-only
/// resolution (no DNS for `127.0.0.1.` or `0x7f.1`); names through the system resolver. Tests swap it
/// to see what a name resolving elsewhere would do without touching DNS or sending a packet.
package struct HostResolver: Sendable {
    package var resolve: @Sendable (_ host: String, _ port: Int) throws(TransportError) -> [SocketAddress]

    package init(resolve: @escaping @Sendable (_ host: String, _ port: Int) throws(TransportError) -> [SocketAddress]) {
        self.resolve = resolve
    }

    package static let system = HostResolver { host, port throws(TransportError) in
        if let literal = literalAddress(host) { return try numeric(literal, port: port) }
        return try lookup(host, port: port, flags: AI_ADDRCONFIG | AI_NUMERICSERV)
    }

    /// `host` as an address literal (a trailing dot dropped), or nil when it is a name.
    static func literalAddress(_ host: String) -> String? {
        var h = host
        if h.hasSuffix(".") { h.removeLast() }
        return IPAddress(h) != nil ? h : nil
    }

    static func numeric(_ text: String, port: Int) throws(TransportError) -> [SocketAddress] {
        try lookup(text, port: port, flags: AI_NUMERICHOST | AI_NUMERICSERV)
    }

    private static func lookup(_ host: String, port: Int, flags: Int32) throws(TransportError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, list != nil else {
            throw .resolveFailed(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var out: [SocketAddress] = []
        var cursor = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            if let addr = info.pointee.ai_addr { out.append(SocketAddress(bytes: addr, length: Int(info.pointee.ai_addrlen))) }
        }
        return out
    }
}
