import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

extension ReferenceGatewayProcess {
    /// refgw from this package, killed when the value goes away whatever path the test takes.
    convenience init(_ arguments: [String]) throws {
        try self.init(repositoryRoot: TestInputs.packageRoot, arguments: arguments)
    }

    /// `control(_:)` off the cooperative pool: it blocks until refgw answers, which for `fuzz ... wait`
    /// takes seconds, and a blocked pool thread (one per core) stalls every suite running beside this one.
    @discardableResult
    func control(_ line: String) async throws -> JSONValue {
        try await offPool { try self.control(line) as JSONValue }
    }

    /// Schema violations in the frames sent to refgw so far. When refgw runs without the schema (no
    /// ../shared) the test ends here as skipped, counted by the runner, after all it checked before; under
    /// CI that is a failure. Call it last in a test.
    func schemaViolations() throws -> [JSONValue] {
        try TestInput.requireSchemaCheck(reportedByGateway: startup.schema, "the schema check of the frames sent")
        return try Self.violations(in: control("violations"))
    }

    /// Fails the test when any frame the client sent broke the schema (without the schema the test ends
    /// here as skipped, a failure under CI). Call it last in a test.
    func expectNoViolations(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let v = try schemaViolations()
        #expect(v.isEmpty, "schema violations: \(v)", sourceLocation: sourceLocation)
    }

    /// The list in a `violations` reply; a reply without one is an error, never "no violations".
    static func violations(in reply: JSONValue) throws -> [JSONValue] {
        guard let list = reply["violations"]?.arrayValue else {
            throw ControlError.malformedReply(command: "violations", reply: reply.description)
        }
        return list
    }

    /// Approves pending pairing requests as they appear, one round each, until `count` rounds were approved (a
    /// Linux client with a setup code asks node first, then operator); returns the ids approved.
    func approveRequests(count: Int, timeout: Duration = .seconds(30)) async throws -> [String] {
        var approved: [String] = []
        for _ in 0..<count {
            let round = try await approveWhenPending(timeout: timeout)
            guard !round.isEmpty else { break }
            approved += round
        }
        return approved
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
