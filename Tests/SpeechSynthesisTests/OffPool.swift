import Foundation

/// Runs blocking work on a thread of its own, so it never holds one of the few cooperative threads the other
/// tests' async code needs.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        let thread = Thread { c.resume(with: Result { try body() }) }
        thread.start()
    }
}
