import Foundation

/// Where a benchmark keeps its sessions, identities and tracks while it runs.
package enum BenchFolder {
    /// A new private folder (mkdtemp: 0700) under the temporary folder; the caller removes it.
    package static func temporary() throws -> String {
        var template = Array((NSTemporaryDirectory() + "openclaw-talk-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TalkBenchFailure("Could not make a temporary folder for the benchmark: errno \(errno)") }
        return String(cString: made)
    }
}

/// A benchmark that could not run: "Error: <description>" on stderr, exit status 1.
package struct TalkBenchFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
