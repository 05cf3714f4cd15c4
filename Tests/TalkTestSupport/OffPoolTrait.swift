import Testing

/// Runs each test of the suite (or the test) it is given to with its task on a thread outside the cooperative
/// pool: the test body and the default actors it calls, as a PocketSphinx recogniser decoding frame after frame.
/// Dozens of recognition tests decoding at once on the pool (two threads here) queue every other suite's work
/// behind theirs; on threads of their own they share the cores through the kernel's scheduler instead, which
/// lets short waits (a socket's handshake, a unit suite) through. Tasks a test starts with `Task {}` stay on the pool.
package struct OffPoolTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Only around a test case: a suite's scope would put all its tests on one serial thread.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(OffPoolExecutor()) { try await function() }
    }
}

extension Trait where Self == OffPoolTrait {
    /// See `OffPoolTrait`.
    package static var offPool: Self { OffPoolTrait() }
}
