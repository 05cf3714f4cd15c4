import Foundation
import SessionBridge
import TalkLogging

extension GatewayBenchmark {
    /// `chat.send` to its ack and to the reply's first delta, through `ChatClient` on a connected
    /// operator socket, against refgw's scripted agent answering at once (no agent think time: these are
    /// the client's and the transport's own costs).
    package static func measureChat(rounds: Int, repository: String, logger: Logger) async throws -> (toAck: Stats, toFirstDelta: Stats) {
        let gateway = try await ReferenceGatewayProcess.forBenchmark(
            repositoryRoot: repository, arguments: ["--print-setup-code", "--auto-approve", "--tick-interval-ms", "1000"])
        defer { gateway.stop() }
        try gateway.control(#"{"cmd":"chat-script","delayMs":0,"chunkChars":12,"reply":"A short spoken answer, in three deltas."}"#)
        let root = try BenchFolder.temporary()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = try await pair(with: gateway, under: root, logger: logger)
        let session = try GatewaySession.fromStoredSetup(paths: paths, version: "bench", logger: logger)
        let chat = ChatClient(connection: session.operatorConnection, outbox: ChatOutbox(file: ChatOutbox.file(in: paths), logger: logger),
                              logger: logger)
        return try await withThrowingTaskGroup(of: (Stats, Stats)?.self) { group in
            group.addTask {
                await session.run()
                return nil
            }
            group.addTask {
                await chat.run()
                return nil
            }
            group.addTask {
                try await waitConnected(session.operatorConnection)
                var acks: [Double] = []
                var deltas: [Double] = []
                for i in 0..<rounds {
                    let start = ContinuousClock.now
                    for await update in await chat.send("benchmark utterance \(i)") {
                        switch update {
                        case .accepted: acks.append(milliseconds(ContinuousClock.now - start))
                        case .partial where deltas.count == i: deltas.append(milliseconds(ContinuousClock.now - start))
                        case .failed(let why): throw BenchError.chatFailed(why.description)
                        default: break
                        }
                    }
                }
                return (Stats(values: acks), Stats(values: deltas))
            }
            defer { group.cancelAll() }
            while let r = try await group.next() { if let r { return r } }
            throw BenchError.sessionEnded
        }
    }
}

extension GatewayBenchmark.Stats {
    package var p95: Double { percentile(0.95) }
    /// p50/p95, the figures the chat section reports.
    package var percentilesJSON: JSONValue { ["p50": .double(round1(median)), "p95": .double(round1(p95))] }
    package var percentilesText: String { String(format: "p50 %.1f ms, p95 %.1f ms", median, p95) }
}
