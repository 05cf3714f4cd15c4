import Foundation

/// Where a Gateway listens: `ws://` or `wss://`, host, port and an optional context path.
package struct GatewayEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The URL scheme; `http` and `https` input maps to these.
    package enum Scheme: String, Sendable {
        case ws, wss
    }

    package var scheme: Scheme
    /// The host name or IP address, without IPv6 brackets, lowercased.
    package var host: String
    package var port: Int
    /// The request target, starting with `/` (`/` when the URL had no path).
    package var path: String

    /// The default Gateway port for `ws://`.
    package static let defaultPlaintextPort = 18_789
    /// The default port for `wss://`.
    package static let defaultTLSPort = 443

    /// Makes an endpoint from its parts.
    package init(scheme: Scheme, host: String, port: Int? = nil, path: String = "/") {
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? (scheme == .wss ? Self.defaultTLSPort : Self.defaultPlaintextPort)
        self.path = path.hasPrefix("/") ? path : "/" + path
    }

    /// Parses `ws://host[:port][/path]` or `wss://...`; `http(s)://` maps to `ws(s)://`. The default port
    /// is 18789 for `ws` and 443 for `wss`. IPv6 literals go in brackets: `ws://[fe80::1]:18789`.
    package init(parsing text: String) throws(TransportError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        func invalid(_ reason: String) -> TransportError { .invalidEndpoint(text: trimmed, reason: reason) }

        guard let schemeEnd = trimmed.range(of: "://") else {
            throw invalid("it has no scheme; write ws://host:port or wss://host")
        }
        let schemeText = trimmed[..<schemeEnd.lowerBound].lowercased()
        let scheme: Scheme
        switch schemeText {
        case "ws", "http": scheme = .ws
        case "wss", "https": scheme = .wss
        default: throw invalid("the scheme \"\(schemeText)\" is not ws, wss, http or https")
        }

        var rest = Substring(trimmed[schemeEnd.upperBound...])
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.hasPrefix("?") { path = "/" + path }
        if path.isEmpty { path = "/" }
        // The path goes verbatim into the request line: nothing that could end or split it.
        guard path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw invalid("the path must be printable ASCII without spaces (percent-encode the rest)")
        }
        guard !authority.contains("@") else { throw invalid("credentials in the URL are not supported") }

        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 address lacks its ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:%".contains($0)) }) else {
            throw invalid("the host \"\(host)\" contains characters a host name cannot have")
        }
        if authority.hasPrefix("[") == false && host.contains(":") {
            throw invalid("write IPv6 addresses in brackets, e.g. ws://[::1]:18789")
        }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw invalid("the port \"\(portText)\" is not a number from 1 to 65535")
            }
            port = value
        }
        self.init(scheme: scheme, host: String(host), port: port, path: path)
    }

    /// Whether the host is written as an IPv4 or IPv6 address rather than a name.
    package var hostIsIPAddress: Bool { IPAddress(host) != nil }

    package var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == .wss ? Self.defaultTLSPort : Self.defaultPlaintextPort
        let portPart = port == defaultPort ? "" : ":\(port)"
        return "\(scheme.rawValue)://\(hostPart)\(portPart)\(path == "/" ? "" : path)"
    }
}
