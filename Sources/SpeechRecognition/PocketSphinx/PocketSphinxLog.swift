import CPocketSphinx
import Foundation
import Synchronization

/// PocketSphinx writes a great deal to stderr and reports failures only there. Its log goes through one
/// process-wide callback; this keeps it silent, except while a decoder is being built, when error lines are
/// collected so they can be surfaced in a `SpeechRecognitionError`.
enum PocketSphinxLog {
    private struct Capture {
        var active = false
        var installed = false
        var messages: [String] = []
    }

    private static let capture = Mutex(Capture())
    /// Held while a decoder is built, so captured lines belong to that build.
    private static let buildLock = Mutex(())

    /// Runs `body` (a decoder build) with PocketSphinx's errors and warnings collected.
    static func collectingMessages<T>(_ body: () -> T) -> (result: T, messages: [String]) {
        buildLock.withLock { _ in
            capture.withLock { state in
                if !state.installed {
                    ocl_ps_set_log_sink(sink)
                    state.installed = true
                }
                state.active = true
                state.messages = []
            }
            let result = body()
            let messages = capture.withLock { state in
                state.active = false
                defer { state.messages = [] }
                return state.messages
            }
            return (result, messages)
        }
    }

    private static let sink: ocl_ps_log_sink = { level, message in
        // Only warnings and errors carry anything a user can act on.
        guard level >= Int32(ERR_WARN.rawValue), let message else { return }
        let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return }
        PocketSphinxLog.capture.withLock { state in
            if state.active && state.messages.count < 50 { state.messages.append(text) }
        }
    }
}
