/// Collects the elements of an `AsyncStream` in the background so a test can wait for them with a deadline
/// rather than hang on `next()`.
actor StreamRecorder<Element: Sendable> {
    private(set) var items: [Element] = []
    private var consumer: Task<Void, Never>?

    /// A recorder already consuming `stream`.
    static func recording(_ stream: AsyncStream<Element>) async -> StreamRecorder {
        let recorder = StreamRecorder()
        await recorder.consume(stream)
        return recorder
    }

    private func consume(_ stream: AsyncStream<Element>) {
        consumer = Task { [weak self] in
            for await item in stream { await self?.append(item) }
        }
    }

    private func append(_ item: Element) { items.append(item) }

    /// Waits until at least `count` items arrived, polling every 10 ms; returns what arrived by then.
    func first(_ count: Int, within timeout: Duration) async -> [Element] {
        let deadline = ContinuousClock.now + timeout
        while items.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return items
    }
}
