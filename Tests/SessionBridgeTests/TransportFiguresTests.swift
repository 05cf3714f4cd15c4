import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

/// Prints loopback figures for the report (round trip and connect time, ws and wss). No timing
/// assertions: the machine is shared. Run alone for steadier numbers:
/// `swift test --filter TransportFiguresTests`.
@Suite(.serialized) struct TransportFiguresTests {
    let logger = Logger(label: "test.figures")

    @Test(arguments: ["ws", "wss"])
    func `loopback round trip and connect time are printed`(scheme: String) async throws {
        let peer = try await (scheme == "ws" ? SharedPeer.websockets : SharedPeer.tls).get()
        let endpoint = try GatewayEndpoint(parsing: "\(scheme)://127.0.0.1:\(peer.port)/echo")
        let options = WebSocketClient.Options(tlsPinSHA256: peer.info.fingerprint)

        var connectTimes: [Duration] = []
        for _ in 0..<20 {
            let start = ContinuousClock.now
            let client = try await WebSocketClient.connect(to: endpoint, options: options, logger: logger)
            connectTimes.append(ContinuousClock.now - start)
            await client.close()
        }

        let client = try await WebSocketClient.connect(to: endpoint, options: options, logger: logger)
        var roundTrips: [Duration] = []
        for index in 0..<500 {
            let start = ContinuousClock.now
            let message = "{\"type\":\"req\",\"id\":\"\(index)\"}"
            try await client.send(text: message)
            let echo = try await client.receive()
            roundTrips.append(ContinuousClock.now - start)
            // A timed round trip counts only if it brought our own message back.
            #expect(echo == .text(message), "round trip \(index)")
        }
        await client.close()

        print("FIGURE \(scheme) connect (TCP\(scheme == "wss" ? "+TLS" : "")+upgrade, loopback): \(Self.summary(connectTimes))")
        print("FIGURE \(scheme) round trip of a 30-byte text message (loopback): \(Self.summary(roundTrips))")
    }

    static func summary(_ values: [Duration]) -> String {
        let micros = values.map { Double($0.components.seconds) * 1e6 + Double($0.components.attoseconds) / 1e12 }.sorted()
        func at(_ q: Double) -> String { String(format: "%.0f µs", micros[min(micros.count - 1, Int(q * Double(micros.count)))]) }
        return "median \(at(0.5)), p90 \(at(0.9)), min \(at(0)) over \(micros.count)"
    }
}
