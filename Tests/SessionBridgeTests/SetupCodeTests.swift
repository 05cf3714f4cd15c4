import Foundation
import Testing

@testable import SessionBridge

@Suite struct SetupCodeTests {
    static let json = #"{"url":"wss://gw.example.com:8443","bootstrapToken":"boot-123","tlsFingerprint":"sha256:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89","expiresAtMs":1900000000000}"#
    static var code: String { Base64URL.encode(Array(json.utf8)) }

    @Test(arguments: [
        ("bare code", code),
        ("oc-pair link", "oc-pair://" + code),
        ("raw JSON", json),
        ("pasted message", "Hi! Here is your OpenClaw setup code:\n\n  \(code)\n\nIt expires in 10 minutes."),
        ("quoted in a message", "code: \"\(code)\"."),
    ])
    func `every accepted form gives the same Gateway and token`(_ form: String, _ input: String) throws {
        let parsed = try SetupCode.parse(input)
        #expect(parsed.url == "wss://gw.example.com:8443")
        #expect(parsed.bootstrapToken == "boot-123")
        #expect(parsed.tlsFingerprint == "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        #expect(parsed.expiresAtMs == 1_900_000_000_000)
    }

    @Test func `host port and tls fields build the URL with the right default port`() throws {
        let tls = try SetupCode.parse(#"{"host":"gw.example.com","token":"t"}"#)
        #expect(tls.url == "wss://gw.example.com")
        let plain = try SetupCode.parse(#"{"host":"192.168.1.5","tls":false,"password":"p"}"#)
        #expect(plain.url == "ws://192.168.1.5")
        #expect(plain.password == "p")
    }

    @Test(arguments: ["ws://127.0.0.1:18789", "ws://192.168.0.2:1", "ws://[::1]:5", "ws://kitchen.local:18789", "ws://10.0.2.2:18789"])
    func `plaintext is accepted for local-network hosts`(_ url: String) throws {
        #expect(try SetupCode.parse(url).url.hasPrefix("ws://"))
    }

    @Test func `an expired code says so`() throws {
        let code = try SetupCode.parse(Self.json)
        #expect(throws: SetupCodeError.expired(expiresAtMs: 1_900_000_000_000)) { try code.checkNotExpired(nowMs: 1_900_000_000_001) }
        try code.checkNotExpired(nowMs: 1_800_000_000_000)
    }

    @Test func `a plain ws URL keeps credentials out of the address`() throws {
        let code = try SetupCode.parse("ws://127.0.0.1:18789?token=secret")
        #expect(code.url == "ws://127.0.0.1")
        #expect(code.token == "secret")
    }

    @Test(arguments: [
        ("", SetupCodeError.empty),
        ("   \n", .empty),
        ("!!!!", .notBase64),
        ("aGVsbG8gd29ybGQgdGhpcyBpcyBub3QganNvbg", .notJSON),
        (#"{"token":"x"}"#, .missingURL),
        (#"{"url":5}"#, .wrongType(field: "url", expected: "a string")),
        (#"{"host":"h","port":70000}"#, .badPort),
        (#"{"url":"wss://h","tlsFingerprint":"zz"}"#, .badFingerprint),
        ("[1,2]", .notJSONObject),
        ("oc-pair://", .emptyLink),
        ("just some words, nothing useful", .noCodeFound),
        ("https://gw.example.com/j/abc", .joinLinkUnsupported),
        ("ws://gw.example.com:18789", .plaintextNotAllowed(host: "gw.example.com")),
        (#"{"host":"8.8.8.8","tls":false,"token":"t"}"#, .plaintextNotAllowed(host: "8.8.8.8")),
    ])
    func `malformed input names what was wrong`(_ input: String, _ expected: SetupCodeError) {
        #expect(throws: expected) { _ = try SetupCode.parse(input) }
    }

    @Test func `a truncated code is rejected, never crashes`() {
        let code = Self.code
        for n in stride(from: 1, to: code.count, by: 3) {
            let cut = String(code.prefix(n))
            do {
                let parsed = try SetupCode.parse(cut)
                Issue.record("a code cut to \(n) characters parsed as \(parsed.url)")
            } catch {
                #expect(!"\(error)".isEmpty)
                #expect(!"\(error)".contains(cut) || cut.count < 4)
            }
        }
    }

    @Test func `error text never repeats a secret from the input`() throws {
        let leaky = Base64URL.encode(Array(#"{"url":"wss://h","bootstrapToken":5,"token":"supersecret"}"#.utf8))
        let error = try #require(#expect(throws: SetupCodeError.self) { _ = try SetupCode.parse(leaky) })
        #expect(error == .wrongType(field: "bootstrapToken", expected: "a string"))
        #expect(!"\(error)".contains("supersecret"))
        #expect(!"\(error)".contains(leaky))
    }

    @Test func `fingerprints are shown in colon-separated pairs`() {
        #expect(CertificateFingerprint.display("abcdef01") == "AB:CD:EF:01")
    }
}
