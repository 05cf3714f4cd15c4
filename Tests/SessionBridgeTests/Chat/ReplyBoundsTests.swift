import Foundation
import Testing

@testable import SessionBridge

/// A reply's text is bounded whatever the deltas add up to, and a reader that falls behind finds the newest text
/// once, not every partial copy of it.
struct ReplyBoundsTests {
    static func delta(_ seq: Int64, _ text: String, replace: Bool = false) throws -> ChatEventPayload {
        try ChatEventPayload(json: ["runId": "r", "sessionKey": "main", "seq": .int(seq), "state": "delta",
                                    "deltaText": .string(text), "replace": .bool(replace)])
    }

    @Test func `deltas each under the cap do not add up past it`() throws {
        var state = ChatReplyState()
        let chunk = String(repeating: "word ", count: 40_000)  // 200 kB
        var last: ChatReplyUpdate?
        for seq in 0..<10 { last = state.apply(try Self.delta(Int64(seq), chunk)) ?? last }
        #expect(state.text.utf8.count <= ChatEventPayload.maxTextBytes, "\(state.text.utf8.count) bytes")
        #expect(state.text.hasPrefix(chunk), "the start of the reply is kept, it is what is spoken first")
        if case .partial(let text, _)? = last { #expect(text.utf8.count <= ChatEventPayload.maxTextBytes) }
        // A replacement starts over within the same bound.
        _ = state.apply(try Self.delta(10, "short", replace: true))
        #expect(state.text == "short")
    }

    @Test func `a reader that has not read keeps only the newest partial`() async {
        let (reply, sink) = ChatReply.makeStream(idempotencyKey: "k")
        sink.yield(.accepted(runId: "r", status: "started"))
        var text = ""
        for i in 0..<1000 {
            text += "word \(i) "
            sink.yield(.partial(text, replaced: i == 500))
        }
        sink.yield(.final(text, source: .events))
        sink.finish()
        var seen: [ChatReplyUpdate] = []
        for await update in reply { seen.append(update) }
        #expect(seen.count == 3, "\(seen.count) updates kept")
        #expect(seen.first == .accepted(runId: "r", status: "started"))
        // The one partial kept is the newest, and says a replacement happened among those it stands for.
        #expect(seen.dropFirst().first == .partial(text, replaced: true))
        #expect(seen.last == .final(text, source: .events))
    }
}
