import Testing

@testable import SessionBridge
@testable import TalkDaemon

/// `setup`'s line for a role waiting for approval says when the Gateway asks for a role upgrade: the Gateway's
/// reason is read into `PairingReason` once, and the line is decided by it.
@Suite struct SetupPairingLineTests {
    static func refusal(_ reason: String) -> ConnectError {
        .rejected(GatewayErrorShape(code: "NOT_PAIRED", message: "pairing required", details: ["reason": .string(reason), "requestId": "req-1"]))
    }

    @Test func `the Gateway's pairing reasons are read by their wire words, others are none`() {
        let words: [PairingReason: String] = [
            .notPaired: "not-paired", .roleUpgrade: "role-upgrade", .scopeUpgrade: "scope-upgrade", .metadataUpgrade: "metadata-upgrade",
        ]
        #expect(Set(words.keys) == Set(PairingReason.allCases))
        for (reason, word) in words { #expect(GatewaySetup.RolePairing.pairingReason(Self.refusal(word)) == reason, "\(word)") }
        #expect(GatewaySetup.RolePairing.pairingReason(Self.refusal("device-revoked")) == nil)
    }

    @Test(arguments: [PairingReason?.none] + PairingReason.allCases.map(Optional.some))
    func `only a role upgrade is called one`(reason: PairingReason?) {
        let line = OpenClawTalk.Setup.line(for: .pairingPending(role: .operator, requestId: "req-1", reason: reason, waitsOnNode: false))
        let named = reason == .roleUpgrade ? "operator role (a role upgrade): req-1\n" : "operator role: req-1\n"
        #expect(line.hasPrefix("Pairing request for the " + named), "\(line)")
    }
}
