import Foundation

/// The client side of the HTTP/1.1 upgrade (RFC 6455 section 4): the request, and the checks on the
/// server's answer (status 101, `Upgrade: websocket`, `Connection: Upgrade`, exactly one correct
/// `Sec-WebSocket-Accept`, no extension the client did not offer).
package struct WebSocketHandshake: Sendable {
    /// The GUID RFC 6455 appends to the key before hashing.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The upgrade response head may not exceed this many bytes.
    package static let maxResponseHeadSize = 16_384

    /// The `Sec-WebSocket-Key` sent: 16 random bytes in base64.
    package let key: String

    /// Makes a handshake with a fresh random key, or a given key (for the RFC's test vector).
    package init(key: String = Data(Digest.randomBytes(16)).base64EncodedString()) {
        self.key = key
    }

    /// base64(SHA-1(key + GUID)), what the server must answer with.
    package static func acceptValue(forKey key: String) -> String {
        Data(Digest.sha1(Array((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// The upgrade request for `endpoint`, with extra headers appended.
    package func request(for endpoint: GatewayEndpoint, extraHeaders: [WebSocketHeader]) -> [UInt8] {
        let hostName = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        let defaultPort = endpoint.scheme == .wss ? 443 : 80
        let hostHeader = endpoint.port == defaultPort ? hostName : "\(hostName):\(endpoint.port)"
        var lines = [
            "GET \(endpoint.path) HTTP/1.1",
            "Host: \(hostHeader)",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
        for header in extraHeaders where header.isValid {
            lines.append("\(header.name): \(header.value)")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// The length of the response head (through the blank line) in `bytes`, or `nil` if incomplete.
    package static func responseHeadLength(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Checks the server's response head; throws with the status line or the header at fault.
    package func validate(responseHead: [UInt8]) throws(WebSocketError) {
        guard let text = String(validating: responseHead, as: UTF8.self) else {
            throw .malformedUpgradeResponse(reason: "the response head is not UTF-8")
        }
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let statusParts = statusLine.split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformedUpgradeResponse(reason: "bad status line \"\(statusLine.prefix(120))\"")
        }
        guard status == 101 else { throw .upgradeRejected(statusLine: String(statusLine.prefix(200))) }

        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw .malformedUpgradeResponse(reason: "header line without a colon")
            }
            headers.append(
                (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }

        guard values("upgrade").contains(where: { $0.lowercased() == "websocket" }) else {
            throw .malformedUpgradeResponse(reason: "no \"Upgrade: websocket\" header")
        }
        let connectionTokens = values("connection").flatMap { $0.lowercased().split(separator: ",") }
        guard connectionTokens.contains(where: { $0.trimmingCharacters(in: .whitespaces) == "upgrade" }) else {
            throw .malformedUpgradeResponse(reason: "no \"Connection: Upgrade\" header")
        }
        let expected = Self.acceptValue(forKey: key)
        let accepts = values("sec-websocket-accept")
        guard accepts == [expected] else { throw .acceptKeyMismatch(expected: expected, received: accepts) }
        if let extensions = values("sec-websocket-extensions").first(where: { !$0.isEmpty }) {
            throw .malformedUpgradeResponse(reason: "extension \"\(extensions)\" was not offered")
        }
    }
}

/// One extra HTTP header sent with the upgrade request (for example an access-proxy credential).
package struct WebSocketHeader: Sendable, Equatable {
    package var name: String
    package var value: String

    /// Makes a header.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Names must be HTTP tokens and values free of line breaks (checked per scalar: "\r\n" is one
    /// `Character`), so a header cannot inject another.
    var isValid: Bool {
        let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~")
            .union(.alphanumerics)
        return !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && tokenCharacters.contains($0) }
            && !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
    }
}
