import AudioIO
import Foundation

/// Collects what a capture stream delivers, with arrival times, so a test can wait for a condition with a
/// deadline instead of blocking on the stream.
actor CaptureRecorder {
    private(set) var frames: [AudioFrame] = []
    private(set) var events: [CaptureEvent] = []
    /// For each entry of `events`, how many frames had arrived before it: where the event sits in the stream.
    private(set) var framesBeforeEvent: [Int] = []
    /// Frame sequence numbers in arrival order, across interruptions.
    var sequences: [UInt64] { frames.map(\.sequence) }

    private var consumer: Task<Void, Never>?

    /// Starts consuming `stream` in the background.
    func consume(_ stream: AsyncStream<CaptureEvent>) {
        consumer = Task { [weak self] in
            for await event in stream {
                await self?.record(event)
            }
        }
    }

    private func record(_ event: CaptureEvent) {
        if case .frame(let frame) = event {
            frames.append(frame)
        } else {
            events.append(event)
            framesBeforeEvent.append(frames.count)
        }
    }

    /// Waits until `condition` holds, polling every 10 ms; false when `timeout` passes first.
    func wait(upTo timeout: Duration, until condition: ([AudioFrame], [CaptureEvent]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(frames, events) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(frames, events)
    }

    /// All samples delivered so far, in order.
    var samples: [Int16] { frames.flatMap(\.samples) }
}
