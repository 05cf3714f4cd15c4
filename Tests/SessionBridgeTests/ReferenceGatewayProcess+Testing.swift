import Foundation

@testable import SessionBridge

extension ReferenceGatewayProcess {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// refgw from this package, killed when the value goes away whatever path the test takes.
    convenience init(_ arguments: [String]) throws {
        try self.init(repositoryRoot: Self.packageRoot, arguments: arguments)
    }

    /// `control(_:)` off the cooperative pool: it blocks until refgw answers, which for `fuzz ... wait`
    /// takes seconds, and a blocked pool thread (one per core) stalls every suite running beside this one.
    @discardableResult
    func control(_ line: String) async throws -> JSONValue {
        try await offPool { try self.control(line) as JSONValue }
    }

    /// Schema violations recorded so far, or nil (with a SKIPPED line) when refgw runs without the schema.
    func violations() throws -> [JSONValue]? {
        guard startup.schema != nil else {
            print("SKIPPED: ../shared not found: the schema check of sent frames was not run")
            return nil
        }
        return try control("violations")["violations"]?.arrayValue ?? []
    }

    /// Approves every pending pairing request once one exists (bounded wait). The bound is long: a setup
    /// waiting for approval waits as long as a user would, so giving up early leaves the test hanging.
    func approveWhenPending(timeout: Duration = .seconds(30)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let pending = try await control("pending")["pending"]?.arrayValue ?? []
            if !pending.isEmpty { return try await control("approve")["approved"]?.stringArray ?? [] }
            try await Task.sleep(for: .milliseconds(20))
        }
        return []
    }
}
