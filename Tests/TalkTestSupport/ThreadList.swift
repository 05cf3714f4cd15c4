import Foundation

/// This process's threads as the system lists them: the names thread sampling sees (`/proc/self/task/<tid>/comm`) and
/// each one's scheduling policy (`/proc/self/task/<tid>/stat`, field 41).
package enum ThreadList {
    package struct Entry: Sendable, Equatable {
        package let name: String
        /// 0: the normal class (`SCHED_OTHER`); 2: round-robin realtime (`SCHED_RR`).
        package let policy: Int
    }

    package static let roundRobin = 2

    package static func current() -> [Entry] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { tid in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the name in parentheses: field 3 (state) onwards, so field 41 is the 39th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let policy = Int(fields[38]) else { return nil }
            return Entry(name: comm.trimmingCharacters(in: .newlines), policy: policy)
        }
    }

    package static var names: [String] { current().map(\.name) }
}
