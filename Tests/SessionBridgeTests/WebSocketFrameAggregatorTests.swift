import Testing

@testable import SessionBridge

@Suite struct WebSocketFrameAggregatorTests {
    @Test func `fragments are reassembled into one text message`() throws {
        var aggregator = WebSocketFrameAggregator(maxMessageSize: 100)
        #expect(try aggregator.append(WebSocketFrame(fin: false, opcode: .text, data: Array("wö".utf8.prefix(2)))) == nil)
        #expect(try aggregator.append(WebSocketFrame(fin: false, opcode: .continuation, data: Array("wö".utf8.dropFirst(2)))) == nil)
        #expect(try aggregator.append(WebSocketFrame(opcode: .continuation, data: Array("rld".utf8))) == .text("wörld"))
        #expect(try aggregator.append(WebSocketFrame(opcode: .binary, data: [9])) == .binary([9]))
    }

    @Test func `a message over the size limit fails with 1009`() throws {
        var aggregator = WebSocketFrameAggregator(maxMessageSize: 10)
        _ = try aggregator.append(WebSocketFrame(fin: false, opcode: .binary, data: Array(repeating: 0, count: 6)))
        #expect(aggregator.remainingCapacity == 4)
        #expect(throws: WebSocketError.messageTooLarge(limit: 10)) {
            try aggregator.append(WebSocketFrame(opcode: .continuation, data: Array(repeating: 0, count: 5)))
        }
        #expect(WebSocketError.messageTooLarge(limit: 10).closeCode == .messageTooLarge)
    }

    @Test func `too many fragments fail with 1008`() throws {
        var aggregator = WebSocketFrameAggregator(maxMessageSize: 100, maxFragmentCount: 3)
        _ = try aggregator.append(WebSocketFrame(fin: false, opcode: .binary, data: [1]))
        _ = try aggregator.append(WebSocketFrame(fin: false, opcode: .continuation, data: [2]))
        _ = try aggregator.append(WebSocketFrame(fin: false, opcode: .continuation, data: [3]))
        #expect(throws: WebSocketError.tooManyFragments(limit: 3)) {
            try aggregator.append(WebSocketFrame(opcode: .continuation, data: [4]))
        }
    }

    @Test func `out-of-order fragments are protocol errors`() throws {
        var aggregator = WebSocketFrameAggregator(maxMessageSize: 100)
        #expect(throws: WebSocketError.unexpectedContinuationFrame) {
            try aggregator.append(WebSocketFrame(opcode: .continuation, data: [1]))
        }
        _ = try aggregator.append(WebSocketFrame(fin: false, opcode: .text, data: [65]))
        #expect(throws: WebSocketError.expectedContinuationFrame) {
            try aggregator.append(WebSocketFrame(opcode: .binary, data: [1]))
        }
    }

    @Test func `text that is not UTF-8 fails with 1007`() {
        var aggregator = WebSocketFrameAggregator(maxMessageSize: 100)
        #expect(throws: WebSocketError.invalidUTF8) {
            try aggregator.append(WebSocketFrame(opcode: .text, data: [0x61, 0xFF, 0xFE]))
        }
        #expect(WebSocketError.invalidUTF8.closeCode == .dataInconsistentWithMessage)
    }
}
