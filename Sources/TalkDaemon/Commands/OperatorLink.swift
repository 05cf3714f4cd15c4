import Foundation
import SessionBridge
import TalkLogging

/// One operator socket for a command that asks the Gateway something and ends (`approvals`, `approve`, `send`): the
/// stored setup's identity and credentials, connected, used, and closed. It works with or without a running daemon
/// (a device may hold several sockets).
enum OperatorLink {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How long a command waits for `hello-ok` before it gives up.
    static let connectTimeout: Duration = .seconds(20)

    static func with<T: Sendable>(logger: Logger, _ body: @escaping @Sendable (GatewayConnection) async throws -> T) async throws -> T {
        let version = OpenClawTalk.version.split(separator: " ").last.map(String.init) ?? "0.1.0"
        let session = try GatewaySession.fromStoredSetup(paths: StoragePaths.standard(), version: version, logger: logger)
        let connection = session.operatorConnection
        let states = await connection.stateUpdates()
        let runner = Task { await connection.run() }
        defer { runner.cancel() }
        let outcome: Result<Void, Failure> = await withTaskGroup(of: Result<Void, Failure>?.self) { group in
            group.addTask {
                for await state in states {
                    switch state {
                    case .connected: return .success(())
                    case .disconnected(let reason):
                        return .failure(Failure(description: "Could not connect to the Gateway: \(reason)"))
                    case .waitingForApproval(let id, _):
                        return .failure(Failure(description: "This device's operator access waits for approval"
                            + (id.map { " (request \(GatewayText.neutralized($0, limit: 80)))" } ?? "")
                            + "; approve it on the Gateway (openclaw devices approve), then try again."))
                    default: continue
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: connectTimeout)
                return .failure(Failure(description: "The Gateway did not answer within \(connectTimeout.components.seconds) s; is it running? ('openclaw-talk status')"))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(Failure(description: "The connection to the Gateway ended."))
        }
        do {
            try outcome.get()
            let result = try await body(connection)
            runner.cancel()
            await runner.value
            return result
        } catch {
            runner.cancel()
            await runner.value
            throw error
        }
    }
}
