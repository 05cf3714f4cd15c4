/// A whole application message, reassembled from its fragments.
package enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}
