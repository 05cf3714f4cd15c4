/// A value only touched on its loop's thread or under its loop's lock: the way to hand a loop-confined
/// engine to `@Sendable` code (a cancellation handler, a deinit).
struct PulseConfined<Value>: @unchecked Sendable {
    let loop: PulseMainloop
    private let value: Value

    init(_ value: Value, on loop: PulseMainloop) {
        self.value = value
        self.loop = loop
    }

    func withLock<T, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        try loop.withLock { () throws(E) -> T in try body(value) }
    }

    /// Releases the value's C handles under the lock, then shuts the loop down. Idempotent.
    func shutdown(releasing release: (Value) -> Void) {
        loop.shutdown { release(value) }
    }
}
