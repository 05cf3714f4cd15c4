/// Runs `operation`, giving up after `timeout`: then `onTimeout` runs (typically closing the transport
/// so a blocked receive returns) and the result is nil.
func withDeadline<T: Sendable>(
    _ timeout: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void,
    onTimeout: @escaping @Sendable () async -> Void,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await sleep(timeout)
            return nil
        }
        defer { group.cancelAll() }
        let first: T??
        do { first = try await group.next() } catch {
            // The operation may be blocked in a receive that ignores cancellation: unblock it.
            await onTimeout()
            throw error
        }
        guard let first, let value = first else {
            await onTimeout()
            return nil
        }
        return value
    }
}
