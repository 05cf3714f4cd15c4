import Foundation

/// The processes under a process, from /proc: what a command started (and what those started), to check that
/// nothing of it outlives it.
package enum ProcessTree {
    /// Every live descendant of `pid` (children, their children, ...) with its command line, words joined by spaces.
    package static func descendants(of pid: pid_t) -> [pid_t: String] {
        var children: [pid_t: [pid_t]] = [:]
        for (child, parent) in parents() { children[parent, default: []].append(child) }
        var found: [pid_t: String] = [:]
        var next = children[pid] ?? []
        while let child = next.popLast() {
            guard found[child] == nil, isAlive(child) else { continue }
            found[child] = commandLine(child)
            next += children[child] ?? []
        }
        return found
    }

    /// Whether `pid` runs (a zombie, ended and not yet reaped, does not).
    package static func isAlive(_ pid: pid_t) -> Bool {
        guard let state = stat(pid)?.state else { return false }
        return state != "Z" && state != "X"
    }

    /// `pid`'s command line, its words joined by spaces ("" once it is gone).
    package static func commandLine(_ pid: pid_t) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    /// Each live process's parent.
    private static func parents() -> [(pid: pid_t, parent: pid_t)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name in
            guard let pid = pid_t(name), let parent = stat(pid)?.parent else { return nil }
            return (pid, parent)
        }
    }

    /// The state letter and parent of /proc/PID/stat (the fields after the command name, which may hold spaces).
    private static func stat(_ pid: pid_t) -> (state: Character, parent: pid_t)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 1, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (state, parent)
    }
}
