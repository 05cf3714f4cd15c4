import AudioIO
import Foundation
import SessionBridge
import TalkLogging

/// `bench talk --record DIR`: each session with echo cancellation leaves its recording in DIR/<session> for
/// `bench aec --replay`. A session that left none, or one that does not read back whole (`EchoCaptureRecording`), is
/// named with the reason as its session ends: on stderr at once and in the report (`LiveTalkFigures.recordings`), so a
/// set of recordings is never found short (empty folders) only when it is replayed.
package struct SessionRecordingCheck: Sendable, Equatable {
    /// Sessions whose recording was looked for.
    package var checked = 0
    /// By session name (`webrtc-3`, `bargein-7`): why its recording is missing or incomplete.
    package var missing: [String: String] = [:]

    package init() {}

    /// Looks for the recording of `child`'s session `name` under `record` (nil: none asked), once the child has ended.
    package mutating func check(_ name: String, in record: String?, child: TalkChild) {
        guard let record, !child.isRunning else { return }
        checked += 1
        let folder = record + "/" + name
        guard let problem = Self.problem(folder: folder, child: child) else { return }
        missing[name] = problem
        StandardStream.write("bench talk: \(name) left no complete echo recording in \(folder): \(problem)\n", to: STDERR_FILENO)
    }

    /// Why `folder` holds no recording that reads back whole; with how the session ended and what its log said
    /// of its recording (`EchoCancellingCapture` logs the write and a failure's reason).
    static func problem(folder: String, child: TalkChild) -> String? {
        do {
            _ = try EchoCaptureRecording(folder: folder)
            return nil
        } catch {
            let said = child.stderr.split(separator: "\n").last { $0.contains("Echo cancellation record") }
            let ended = child.exitStatus.map { "the session ended with status \($0)" } ?? "the session's end is unknown"
            return "\(error) (\(ended)" + (said.map { "; its log: \($0.prefix(400))" } ?? "; its log says nothing of the recording") + ")"
        }
    }

    mutating func merge(_ other: SessionRecordingCheck) {
        checked += other.checked
        missing.merge(other.missing) { $1 }
    }

    package var json: JSONValue {
        ["checked": .int(Int64(checked)), "missing": .object(missing.mapValues { .string($0) })]
    }
}
