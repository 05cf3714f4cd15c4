import Foundation
import Synchronization

@testable import SessionBridge

/// An in-memory `GatewayTransport`: the test plays the Gateway by answering what the client sends.
actor MemoryTransport: GatewayTransport {
    typealias Peer = @Sendable (_ sent: JSONValue, _ transport: MemoryTransport) async -> Void

    private let inbound: AsyncStream<[UInt8]>
    private let feed: AsyncStream<[UInt8]>.Continuation
    private var iterator: AsyncStream<[UInt8]>.Iterator
    private let peer: Peer
    private(set) var sent: [JSONValue] = []
    private(set) var maxMessageSize = 65536
    private(set) var pings = 0
    private(set) var isClosed = false

    init(peer: @escaping Peer = { _, _ in }) {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        inbound = stream
        feed = continuation
        iterator = stream.makeAsyncIterator()
        self.peer = peer
    }

    /// Queues a message from the "Gateway".
    nonisolated func deliver(_ bytes: [UInt8]) { feed.yield(bytes) }
    nonisolated func deliver(_ json: JSONValue) { feed.yield(Array(json.jsonText.utf8)) }

    func send(text: String) async throws {
        guard !isClosed else { throw MemoryTransportClosed() }
        let json = JSONValue.parse(Array(text.utf8)) ?? .null
        sent.append(json)
        await peer(json, self)
    }

    func receive() async throws -> [UInt8] {
        guard !isClosed else { throw MemoryTransportClosed() }
        var it = iterator
        let next = await it.next(isolation: self)
        iterator = it
        guard let next, !isClosed else { throw MemoryTransportClosed() }
        return next
    }

    func ping() async throws {
        guard !isClosed else { throw MemoryTransportClosed() }
        pings += 1
    }

    func setMaxMessageSize(_ bytes: Int) async { maxMessageSize = bytes }

    func close() async {
        isClosed = true
        feed.finish()
    }
}

struct MemoryTransportClosed: Error {}

/// Gateway-side helpers for scripted peers.
enum FakeGateway {
    static func challenge(nonce: String = "nonce-1", ts: Int64 = 1_737_264_000_000) -> JSONValue {
        ["type": "event", "event": "connect.challenge", "payload": ["nonce": .string(nonce), "ts": .int(ts)]]
    }

    static func helloOk(id: String, tickMs: Int64 = 15000, deviceToken: String? = nil, role: String = "node") -> JSONValue {
        var auth: [String: JSONValue] = ["role": .string(role), "scopes": []]
        if let deviceToken {
            auth["deviceToken"] = .string(deviceToken)
            auth["deviceTokens"] = [["deviceToken": .string(deviceToken + "-op"), "role": "operator",
                                     "scopes": ["operator.read", "operator.write"], "issuedAtMs": 1]]
        }
        return [
            "type": "res", "id": .string(id), "ok": true,
            "payload": [
                "type": "hello-ok", "protocol": 3, "server": ["version": "2026.5.1-ref", "connId": "c1"],
                "features": ["methods": ["chat.send"], "events": ["tick"]],
                "snapshot": ["presence": [], "health": [:], "stateVersion": ["presence": 0, "health": 0], "uptimeMs": 5,
                             "sessionDefaults": ["defaultAgentId": "a", "mainKey": "main", "mainSessionKey": "agent:a:main"]],
                "auth": .object(auth),
                "policy": ["maxPayload": 1_048_576, "maxBufferedBytes": 2_097_152, "tickIntervalMs": .int(tickMs)],
            ],
        ]
    }

    static func error(id: String, code: String, details: JSONValue? = nil, retryAfterMs: Int64? = nil) -> JSONValue {
        var e: [String: JSONValue] = ["code": "NOT_PAIRED", "message": "refused"]
        if let details { e["details"] = details } else { e["details"] = ["code": .string(code)] }
        if let retryAfterMs { e["retryAfterMs"] = .int(retryAfterMs) }
        return ["type": "res", "id": .string(id), "ok": false, "error": .object(e)]
    }

    /// Verifies the device proof of a `connect` request as the Gateway does; returns the payload version that matched.
    static func verify(_ connect: JSONValue) -> String? {
        guard let p = connect["params"], let d = p["device"], let c = p["client"],
              let pub = Base64URL.decode(d["publicKey"]?.stringValue ?? ""),
              let sig = Base64URL.decode(d["signature"]?.stringValue ?? "")
        else { return nil }
        let auth = p["auth"]
        let token = auth?["token"]?.stringValue ?? auth?["deviceToken"]?.stringValue ?? auth?["bootstrapToken"]?.stringValue ?? ""
        let fields = [d["id"]?.stringValue ?? "", c["id"]?.stringValue ?? "", c["mode"]?.stringValue ?? "",
                      p["role"]?.stringValue ?? "", (p["scopes"]?.stringArray ?? []).joined(separator: ","),
                      String(d["signedAt"]?.intValue ?? -1), token, d["nonce"]?.stringValue ?? ""]
        let v3 = (["v3"] + fields + [(c["platform"]?.stringValue ?? "").lowercased(),
                                     (c["deviceFamily"]?.stringValue ?? "").lowercased()]).joined(separator: "|")
        let v2 = (["v2"] + fields).joined(separator: "|")
        guard Digest.hex(Digest.sha256(pub)) == d["id"]?.stringValue else { return nil }
        if Ed25519.verify(sig, of: Array(v3.utf8), publicKey: pub) { return "v3" }
        if Ed25519.verify(sig, of: Array(v2.utf8), publicKey: pub) { return "v2" }
        return nil
    }
}
