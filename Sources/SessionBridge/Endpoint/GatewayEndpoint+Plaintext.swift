import Glibc

extension GatewayEndpoint {
    /// Whether plaintext `ws://` may be used with this host (gateway-protocol.md 1.1, the setup-code rule):
    /// loopback, RFC 1918, link-local (169.254/16, fe80::/10), unique-local (fc00::/7), `.local` names and
    /// the Android emulator's 10.0.2.2. Tailscale (`*.ts.net`) and public hosts need `wss://`: the headless
    /// node host's `*.ts.net` and `OPENCLAW_ALLOW_INSECURE_PRIVATE_WS` exceptions are deliberately not taken.
    package var allowsPlaintext: Bool { Self.allowsPlaintext(host: host) }

    /// The plaintext rule for a bare host name or address.
    package static func allowsPlaintext(host rawHost: String) -> Bool {
        var host = rawHost.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        if host == "localhost" || host.hasSuffix(".localhost") || host.hasSuffix(".local") { return true }
        return IPAddress(host).map(allowsPlaintext(address:)) ?? false
    }

    /// The plaintext rule for an address actually reached (the connected socket's peer).
    package static func allowsPlaintext(address: IPAddress) -> Bool {
        switch address {
        case .v4(let a): return isLocalIPv4(a)
        case .v6(let b):
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }  // ::1
            if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return true }  // fe80::/10
            if b[0] & 0xFE == 0xFC { return true }  // fc00::/7
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {  // ::ffff:a.b.c.d
                return isLocalIPv4([b[12], b[13], b[14], b[15]])
            }
            return false
        }
    }

    /// Whether the host is this machine: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1` or `::ffff:127.x.y.z`.
    package var isLoopback: Bool { Self.isLoopback(host: host) }

    /// The loopback rule for a bare host name or address.
    package static func isLoopback(host rawHost: String) -> Bool {
        var host = rawHost.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        return IPAddress(host).map(isLoopback(address:)) ?? false
    }

    /// The loopback rule for an address actually reached.
    package static func isLoopback(address: IPAddress) -> Bool {
        switch address {
        case .v4(let a): return a[0] == 127
        case .v6(let b):
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
            return b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF && b[12] == 127
        }
    }

    private static func isLocalIPv4(_ a: [UInt8]) -> Bool {
        switch (a[0], a[1]) {
        case (127, _), (10, _), (192, 168), (169, 254): true
        case (172, let second): (16...31).contains(second)
        default: false
        }
    }
}

/// An IPv4 or IPv6 address parsed with `inet_pton`, as network-order bytes.
package enum IPAddress: Sendable, Equatable {
    case v4([UInt8])
    case v6([UInt8])

    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        // A zone index (fe80::1%eth0) is not part of the address.
        let bare = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }
}
