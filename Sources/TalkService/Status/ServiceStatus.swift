import Foundation

/// The document `status --json` prints and status.json holds. Absent values are written as `null`
/// so readers (bars, scripts) see every key.
package struct ServiceStatus: Codable, Sendable, Equatable {
    package struct Talk: Codable, Sendable, Equatable {
        package var active: Bool
        package var mode: String?
        package var sessionKey: String?

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(active, forKey: .active)
            try c.encode(mode, forKey: .mode)
            try c.encode(sessionKey, forKey: .sessionKey)
        }
    }

    package struct Gateway: Codable, Sendable, Equatable {
        package var url: String?
        package var connected: Bool
        package var `protocol`: Int?
        package var version: String?
        package var state: String
        package var nextRetryAt: Date?
        /// The connection state's own stale date while connecting or reconnecting; null once connected.
        package var staleAt: Date?

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(url, forKey: .url)
            try c.encode(connected, forKey: .connected)
            try c.encode(`protocol`, forKey: .protocol)
            try c.encode(version, forKey: .version)
            try c.encode(state, forKey: .state)
            try c.encode(nextRetryAt, forKey: .nextRetryAt)
            try c.encode(staleAt, forKey: .staleAt)
        }
    }

    package struct Audio: Codable, Sendable, Equatable {
        package var source: String?
        package var sink: String?
        package var uplink: String?
        /// The uplink's bytes per second on the wire, when a relay streams.
        package var uplinkBytesPerSecond: Int?
        /// Which echo cancellation is active ("webrtc", "pulse", "off"), when known.
        package var echoCancellation: String?

        package init(source: String? = nil, sink: String? = nil, uplink: String? = nil, uplinkBytesPerSecond: Int? = nil,
                     echoCancellation: String? = nil) {
            self.source = source
            self.sink = sink
            self.uplink = uplink
            self.uplinkBytesPerSecond = uplinkBytesPerSecond
            self.echoCancellation = echoCancellation
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(source, forKey: .source)
            try c.encode(sink, forKey: .sink)
            try c.encode(uplink, forKey: .uplink)
            try c.encode(uplinkBytesPerSecond, forKey: .uplinkBytesPerSecond)
            try c.encode(echoCancellation, forKey: .echoCancellation)
        }
    }

    package var state: String
    package var talk: Talk
    package var gateway: Gateway
    package var audio: Audio
    package var pid: Int32
    package var heartbeatAt: Date?
    package var staleAt: Date?
    package var stale: Bool
    package var lastTranscript: String?
    package var lastReply: String?
    package var error: String?

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(state, forKey: .state)
        try c.encode(talk, forKey: .talk)
        try c.encode(gateway, forKey: .gateway)
        try c.encode(audio, forKey: .audio)
        try c.encode(pid, forKey: .pid)
        try c.encode(heartbeatAt, forKey: .heartbeatAt)
        try c.encode(staleAt, forKey: .staleAt)
        try c.encode(stale, forKey: .stale)
        try c.encode(lastTranscript, forKey: .lastTranscript)
        try c.encode(lastReply, forKey: .lastReply)
        try c.encode(error, forKey: .error)
    }

    package func jsonData() throws -> Data { try JSONEncoder.serviceEncoder.encode(self) }
}

extension ServiceStatus {
    /// The most of a transcript, reply or error the status holds: status.json is rewritten and broadcast to every
    /// subscriber on each event, and a bar shows a line or two (a realtime transcript grew to 25 MiB).
    package static let maxTextCharacters = 600
    /// The most of a name, version, device or URL.
    package static let maxNameCharacters = 200

    /// `text` cut to `limit` characters, "…" marking the cut.
    package static func shortened(_ text: String, limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    /// Every field a peer can fill, shortened.
    package func bounded() -> ServiceStatus {
        func name(_ s: String?) -> String? { s.map { Self.shortened($0, limit: Self.maxNameCharacters) } }
        func text(_ s: String?) -> String? { s.map { Self.shortened($0, limit: Self.maxTextCharacters) } }
        var s = self
        s.state = Self.shortened(state, limit: Self.maxNameCharacters)
        s.talk.mode = name(talk.mode)
        s.talk.sessionKey = name(talk.sessionKey)
        s.gateway.url = name(gateway.url)
        s.gateway.version = name(gateway.version)
        s.gateway.state = Self.shortened(gateway.state, limit: Self.maxNameCharacters)
        s.audio.source = name(audio.source)
        s.audio.sink = name(audio.sink)
        s.audio.uplink = name(audio.uplink)
        s.audio.echoCancellation = name(audio.echoCancellation)
        s.lastTranscript = text(lastTranscript)
        s.lastReply = text(lastReply)
        s.error = text(error)
        return s
    }
}
