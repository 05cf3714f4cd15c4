import AudioIO
import Foundation
import Synchronization
import TalkTestSupport

/// Collects what a capture stream delivers, so a test can wait for a condition with a deadline instead of
/// blocking on the stream. The stream is read on a thread of its own, not on the cooperative pool: beside eight
/// suites at once, CPU-heavy tests can hold both pool threads for seconds, and a reader there recorded nothing
/// meanwhile, so a wait that resumed after its deadline saw "no frames" that had been delivered long before (CI:
/// PulseRecoveryTests "capture resumes after the server is killed and restarted", PulseDeviceReturnTests "capture
/// goes back to its named source").
actor CaptureRecorder {
    private struct State {
        var frames: [AudioFrame] = []
        var events: [CaptureEvent] = []
        var framesBeforeEvent: [Int] = []
    }

    private final class Box: Sendable {
        let state = Mutex(State())
        func record(_ event: CaptureEvent) {
            state.withLock { state in
                if case .frame(let frame) = event {
                    state.frames.append(frame)
                } else {
                    state.events.append(event)
                    state.framesBeforeEvent.append(state.frames.count)
                }
            }
        }
    }

    private let box = Box()

    var frames: [AudioFrame] { box.state.withLock { $0.frames } }
    var events: [CaptureEvent] { box.state.withLock { $0.events } }
    /// For each entry of `events`, how many frames had arrived before it: where the event sits in the stream.
    var framesBeforeEvent: [Int] { box.state.withLock { $0.framesBeforeEvent } }
    /// Frame sequence numbers in arrival order, across interruptions.
    var sequences: [UInt64] { frames.map(\.sequence) }

    /// Starts consuming `stream` in the background, off the cooperative pool.
    func consume(_ stream: AsyncStream<CaptureEvent>) {
        let box = box
        Task(executorPreference: OffPoolExecutor()) {
            for await event in stream { box.record(event) }
        }
    }

    /// Waits until `condition` holds, polling every 10 ms; false when `timeout` passes first.
    func wait(upTo timeout: Duration, until condition: ([AudioFrame], [CaptureEvent]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if check(condition) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return check(condition)
    }

    private func check(_ condition: ([AudioFrame], [CaptureEvent]) -> Bool) -> Bool {
        let (frames, events) = box.state.withLock { ($0.frames, $0.events) }
        return condition(frames, events)
    }

    /// All samples delivered so far, in order.
    var samples: [Int16] { frames.flatMap(\.samples) }
}
