import Foundation

/// What a setup code tells us: where the Gateway is and how to authenticate the first time.
/// Parsed from a bare base64url code, an `oc-pair://` link, the raw JSON, a pasted message that
/// contains a code, an `openclaw://gateway?...` link, or a plain `ws(s)://` URL.
package struct SetupCode: Sendable, Equatable {
    /// The Gateway's WebSocket URL (`ws://host:port` or `wss://host[:port][/path]`).
    package var url: String
    /// Alternative routes to the same Gateway, in order.
    package var alternateURLs: [String] = []
    package var bootstrapToken: String?
    package var token: String?
    package var password: String?
    /// The expected SHA-256 of the Gateway's leaf certificate, normalized to lowercase hex.
    package var tlsFingerprint: String?
    package var expiresAtMs: Int64?

    package init(url: String) { self.url = url }

    /// Whether the code carries any credential (otherwise `--token`/`--password` must give one).
    package var hasCredential: Bool { bootstrapToken != nil || token != nil || password != nil }

    /// Parses what a user pasted. Never crashes; a `SetupCodeError` says what was wrong.
    /// The error text never repeats the input, which may hold a secret.
    package static func parse(_ input: String) throws(SetupCodeError) -> SetupCode {
        var code = try parseUnchecked(input)
        let endpoint = try checkedEndpoint(code.url)
        code.url = endpoint.description
        code.alternateURLs = code.alternateURLs.compactMap { try? checkedEndpoint($0).description }
        return code
    }

    /// The endpoint of the code's URL; plaintext only to local-network hosts.
    package var endpoint: GatewayEndpoint {
        get throws(SetupCodeError) { try Self.checkedEndpoint(url) }
    }

    /// Fails with `.expired` when the code's expiry has passed.
    package func checkNotExpired(nowMs: Int64) throws(SetupCodeError) {
        if let e = expiresAtMs, e < nowMs { throw .expired(expiresAtMs: e) }
    }

    private static func checkedEndpoint(_ url: String) throws(SetupCodeError) -> GatewayEndpoint {
        let endpoint: GatewayEndpoint
        do { endpoint = try GatewayEndpoint(parsing: url) } catch { throw .badURL }
        if endpoint.scheme == .ws, !endpoint.allowsPlaintext { throw .plaintextNotAllowed(host: endpoint.host) }
        return endpoint
    }

    private static func parseUnchecked(_ input: String) throws(SetupCodeError) -> SetupCode {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= 64 * 1024 else { throw .tooLong }
        let lower = text.lowercased()
        if text.hasPrefix("{") || text.hasPrefix("[") { return try fromJSON(Array(text.utf8)) }
        if lower.hasPrefix("oc-pair://") { return try fromLink(text) }
        if lower.hasPrefix("openclaw://") { return try fromOpenClawLink(text) }
        if lower.hasPrefix("ws://") || lower.hasPrefix("wss://") { return try fromURL(text) }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") { throw .joinLinkUnsupported }
        if !text.contains(where: \.isWhitespace) { return try fromCode(text) }
        return try fromMessage(text)
    }

    private static func fromCode(_ code: String) throws(SetupCodeError) -> SetupCode {
        guard code.allSatisfy(isCodeCharacter) else { throw .notBase64 }
        guard let bytes = Base64URL.decode(code) else { throw .notBase64 }
        guard bytes.first == UInt8(ascii: "{") else { throw .notJSON }
        return try fromJSON(bytes)
    }

    private static func fromLink(_ link: String) throws(SetupCodeError) -> SetupCode {
        var rest = String(link.dropFirst("oc-pair://".count))
        // Accept oc-pair://CODE, oc-pair:///CODE and oc-pair://pair?code=CODE.
        if let q = rest.range(of: "code=") { rest = String(rest[q.upperBound...]) }
        rest = String(rest.drop(while: { $0 == "/" }))
        if let end = rest.firstIndex(where: { $0 == "&" || $0 == "#" || $0 == "/" }) { rest = String(rest[..<end]) }
        guard !rest.isEmpty else { throw .emptyLink }
        return try fromCode(rest.removingPercentEncoding ?? rest)
    }

    private static func fromMessage(_ message: String) throws(SetupCodeError) -> SetupCode {
        var firstError: SetupCodeError?
        for raw in message.split(whereSeparator: \.isWhitespace) {
            let word = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\"'`<>()[],;."))
            let candidate: String
            if word.lowercased().hasPrefix("oc-pair://") {
                candidate = word
            } else if word.count >= 24, word.allSatisfy(isCodeCharacter) {
                candidate = word
            } else {
                continue
            }
            do { return try parseUnchecked(candidate) } catch { firstError = firstError ?? error }
        }
        throw firstError ?? .noCodeFound
    }

    private static func fromURL(_ text: String) throws(SetupCodeError) -> SetupCode {
        guard let comps = URLComponents(string: text), let host = comps.host, !host.isEmpty else { throw .badURL }
        guard comps.user == nil, comps.password == nil else { throw .credentialsInURL }
        var code = SetupCode(url: text)
        // Credentials in a query string leak into shell history; accept them but keep them out of the URL.
        let query = comps.queryItems ?? []
        code.token = query.first { $0.name == "token" }?.value
        code.password = query.first { $0.name == "password" }?.value
        code.bootstrapToken = query.first { $0.name == "bootstrapToken" }?.value
        var clean = comps
        clean.queryItems = nil
        code.url = clean.string ?? text
        if clean.port.map({ !(1...65535).contains($0) }) ?? false { throw .badPort }
        return code
    }

    private static func fromOpenClawLink(_ text: String) throws(SetupCodeError) -> SetupCode {
        guard let comps = URLComponents(string: text) else { throw .badURL }
        var object: [String: JSONValue] = [:]
        for item in comps.queryItems ?? [] {
            guard let value = item.value else { continue }
            switch item.name {
            case "port": object["port"] = Int64(value).map(JSONValue.int) ?? .string(value)
            case "tls": object["tls"] = .bool(["1", "true", "yes"].contains(value.lowercased()))
            default: object[item.name] = .string(value)
            }
        }
        return try fromJSONObject(object)
    }

    private static func fromJSON(_ bytes: [UInt8]) throws(SetupCodeError) -> SetupCode {
        guard let json = JSONValue.parse(bytes) else { throw .notJSON }
        guard case .object(let o) = json else { throw .notJSONObject }
        return try fromJSONObject(o)
    }

    private static func fromJSONObject(_ o: [String: JSONValue]) throws(SetupCodeError) -> SetupCode {
        func string(_ key: String, max: Int) throws(SetupCodeError) -> String? {
            guard let v = o[key], v != .null else { return nil }
            guard let s = v.stringValue else { throw .wrongType(field: key, expected: "a string") }
            guard !s.isEmpty else { return nil }
            guard s.count <= max else { throw .fieldTooLong(field: key, limit: max) }
            return s
        }
        var code: SetupCode
        if let url = try string("url", max: 2048) {
            code = try fromURL(url)
        } else if let host = try string("host", max: 255) {
            guard !host.contains(where: { "/?#@ ".contains($0) }) else { throw .badURL }
            let tls: Bool
            switch o["tls"] {
            case nil, .null?: tls = true
            case .bool(let b)?: tls = b
            default: throw .wrongType(field: "tls", expected: "true or false")
            }
            var port: Int64 = tls ? 443 : 18789
            if let p = o["port"], p != .null {
                guard let n = p.intValue else { throw .wrongType(field: "port", expected: "a number") }
                guard (1...65535).contains(n) else { throw .badPort }
                port = n
            }
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            code = SetupCode(url: "\(tls ? "wss" : "ws")://\(bracketed):\(port)")
        } else {
            throw .missingURL
        }
        if let urls = o["urls"], urls != .null {
            guard let list = urls.stringArray else { throw .wrongType(field: "urls", expected: "a list of URLs") }
            code.alternateURLs = try list.prefix(8).map { (u: String) throws(SetupCodeError) -> String in try fromURL(u).url }
                .filter { $0 != code.url }
        }
        code.bootstrapToken = try string("bootstrapToken", max: 256) ?? code.bootstrapToken
        code.token = try string("token", max: 4096) ?? code.token
        code.password = try string("password", max: 4096) ?? code.password
        if let fp = try string("tlsFingerprint", max: 200) {
            do { code.tlsFingerprint = try CertificateFingerprint.normalize(fp) } catch { throw .badFingerprint }
        }
        if let e = o["expiresAtMs"], e != .null {
            guard let ms = e.intValue, ms >= 0 else { throw .wrongType(field: "expiresAtMs", expected: "a time in milliseconds") }
            code.expiresAtMs = ms
        }
        return code
    }

    private static func isCodeCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == "=")
    }
}

/// Why a setup code could not be used. The text says what was wrong without repeating the code.
package enum SetupCodeError: Error, Equatable, CustomStringConvertible {
    case empty
    case tooLong
    case notBase64
    case notJSON
    case notJSONObject
    case emptyLink
    case noCodeFound
    case joinLinkUnsupported
    case missingURL
    case badURL
    case badPort
    case credentialsInURL
    case wrongType(field: String, expected: String)
    case fieldTooLong(field: String, limit: Int)
    case badFingerprint
    case expired(expiresAtMs: Int64)
    case plaintextNotAllowed(host: String)

    package var description: String {
        switch self {
        case .empty: "The setup code is empty; paste the code from 'openclaw qr' or the Control UI."
        case .tooLong: "The setup code is longer than 64 KiB; that is not a setup code."
        case .notBase64: "The setup code is not valid base64url; copy it again, completely."
        case .notJSON: "The setup code does not decode to JSON; it may be cut short, copy it again completely."
        case .notJSONObject: "The setup code's JSON is not an object with a 'url' field."
        case .emptyLink: "The oc-pair:// link holds no code after the scheme."
        case .noCodeFound: "No setup code found in the pasted text; paste the code itself (a long base64url word)."
        case .joinLinkUnsupported:
            "http(s) links are not supported; paste the setup code, or give a ws:// or wss:// URL with --token or --password."
        case .missingURL: "The setup code has no Gateway address ('url' or 'host')."
        case .badURL: "The Gateway address in the setup code is not a valid ws:// or wss:// URL."
        case .badPort: "The Gateway port in the setup code is outside 1-65535."
        case .credentialsInURL: "The Gateway URL contains a user name or password; give them with --token or --password instead."
        case .wrongType(let f, let t): "The setup code's '\(f)' should be \(t)."
        case .fieldTooLong(let f, let n): "The setup code's '\(f)' is longer than \(n) characters."
        case .badFingerprint: "The setup code's TLS fingerprint is not a SHA-256 (64 hex digits)."
        case .expired:
            "The setup code has expired (codes are valid for 10 minutes); make a new one with 'openclaw qr'."
        case .plaintextNotAllowed(let host):
            "The Gateway at \(host) is not on a local network, so an unencrypted ws:// connection is refused; use wss://."
        }
    }
}
