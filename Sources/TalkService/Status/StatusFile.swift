import Foundation
import Glibc

/// status.json, rewritten atomically: a temporary file in the same folder renamed over it, so a reader
/// finds the old document or the new one, never half of either.
package struct StatusFile: Sendable {
    package let path: String

    package init(path: String) { self.path = path }

    package func write(_ status: ServiceStatus) throws {
        var data = try status.jsonData()
        data.append(UInt8(ascii: "\n"))
        let temporary = path + ".tmp"
        // Made afresh, never through a link: whatever was planted under that name is removed, not written through.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UnixSocket.Failure(call: "open \(temporary)", code: errno) }
        defer { close(fd) }
        var offset = 0
        while offset < data.count {
            let n = data[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw UnixSocket.Failure(call: "write \(temporary)", code: errno) }
            offset += n
        }
        guard rename(temporary, path) == 0 else { throw UnixSocket.Failure(call: "rename \(path)", code: errno) }
    }

    package func remove() { unlink(path) }

    package func read() throws -> ServiceStatus {
        try JSONDecoder.serviceDecoder.decode(ServiceStatus.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// How a reader (the CLI, a bar) should show a status it read: live, stale (its `staleAt` passed), or
/// not running (the pid is gone but the file was left behind).
package enum StatusReading: Equatable, Sendable {
    case live(ServiceStatus)
    case stale(ServiceStatus)
    case notRunning(ServiceStatus)

    package static func evaluate(_ status: ServiceStatus, now: Date,
                                 pidAlive: (Int32) -> Bool = StatusReading.processExists) -> StatusReading {
        var s = status
        if !pidAlive(s.pid) {
            s.stale = true
            s.state = "stopped"
            return .notRunning(s)
        }
        if let staleAt = s.staleAt, staleAt < now {
            s.stale = true
            return .stale(s)
        }
        s.stale = false
        return .live(s)
    }

    /// A zombie counts as gone: a daemon killed after its parent (`start`) exited waits there until something
    /// reaps it, and is dead all the same.
    package static func processExists(_ pid: Int32) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }

    package var status: ServiceStatus {
        switch self { case .live(let s), .stale(let s), .notRunning(let s): s }
    }

    /// One line for `status` without flags.
    package var summary: String {
        let s = status
        let when = (s.heartbeatAt ?? s.staleAt).map { $0.formatted(.iso8601) } ?? "unknown time"
        switch self {
        case .notRunning: return "not running (stale status from \(when))"
        case .stale: return "\(s.state) (stale: no heartbeat since \(when))"
        case .live:
            // Not connected: why (a pairing waiting for approval, no operator credential), when the status says.
            let gateway = s.gateway.connected ? "connected to \(s.gateway.url ?? "the Gateway")"
                : s.gateway.state + (s.error.map { ": \($0)" } ?? "")
            return "\(s.state), \(gateway)"
        }
    }

    /// The one-line JSON waybar (and similar bars) read: `text`, `tooltip`, `class`.
    package var waybarLine: String {
        let s = status
        let cssClass: String = switch self {
        case .notRunning: "stopped"
        case .stale: "stale"
        case .live: s.state.replacingOccurrences(of: " ", with: "-")   // "approval needed" → approval-needed
        }
        let text: String = switch self {
        case .notRunning: "Talk off"
        case .stale: "Talk \(s.state) (stale)"
        case .live: "Talk \(s.state)"
        }
        var tooltip = [summary]
        if let t = s.lastTranscript { tooltip.append("You: \(t)") }
        if let r = s.lastReply { tooltip.append("Reply: \(r)") }
        if let e = s.error { tooltip.append("Error: \(e)") }
        // waybar reads `text` and `tooltip` as Pango markup: what the user said and the agent replied is escaped, so
        // `&` and `<` show as themselves and no markup of theirs takes effect.
        let value = ControlJSON.object([
            "text": .string(Self.pangoEscaped(text)), "tooltip": .string(Self.pangoEscaped(tooltip.joined(separator: "\n"))),
            "class": .string(cssClass),
        ])
        return String(decoding: value.line().dropLast(), as: UTF8.self)
    }
}

extension StatusReading {
    /// Text as Pango markup shows it literally: `&`, `<`, `>`, `'` and `"` as entities.
    package static func pangoEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&apos;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
