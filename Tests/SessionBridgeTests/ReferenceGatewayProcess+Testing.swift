import Foundation

@testable import SessionBridge

extension ReferenceGatewayProcess {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// refgw from this package, killed when the value goes away whatever path the test takes.
    convenience init(_ arguments: [String]) throws {
        try self.init(repositoryRoot: Self.packageRoot, arguments: arguments)
    }

    /// Schema violations recorded so far, or nil (with a SKIPPED line) when refgw runs without the schema.
    func violations() throws -> [JSONValue]? {
        guard startup.schema != nil else {
            print("SKIPPED: ../shared not found: the schema check of sent frames was not run")
            return nil
        }
        return try control("violations")["violations"]?.arrayValue ?? []
    }

    /// Approves every pending pairing request once one exists (bounded wait).
    func approveWhenPending(timeout: Duration = .seconds(5)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let pending = try control("pending")["pending"]?.arrayValue ?? []
            if !pending.isEmpty { return try control("approve")["approved"]?.stringArray ?? [] }
            try await Task.sleep(for: .milliseconds(20))
        }
        return []
    }
}
