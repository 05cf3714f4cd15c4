import Foundation
import TalkService

/// `say TEXT` while a daemon runs: the text goes to it as a typed turn (as if it had been said), and the daemon
/// speaks the reply. Without a daemon `say` speaks the text here, as it always did, so it stays a voice test.
enum SayToDaemon {
    /// The daemon's answer, or nil when no daemon listens (the caller speaks locally).
    static func send(_ text: String, paths: RuntimePaths = RuntimePaths()) -> ClientOutcome? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        do {
            let response = try ControlClient(path: paths.socketPath).call("say", args: ["text": .string(trimmed)])
            switch response.outcome {
            case .success: return ClientOutcome(stdout: "Sent to the assistant; the daemon speaks the reply.\n")
            case .failure(let e): return ClientOutcome(stderr: "Error: \(e.message) (\(e.code))\n", exitCode: 1)
            }
        } catch .noDaemon {
            return nil
        } catch {
            return ClientOutcome(stderr: "Error: \(error)\n", exitCode: error.exitCode)
        }
    }
}
