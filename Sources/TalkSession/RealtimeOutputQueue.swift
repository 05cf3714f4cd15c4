import AudioIO

/// What the realtime relay's output waits in before it plays (no I/O): audio, and marks behind the audio they
/// follow, with the turns cut off by barge-in whose late audio is dropped. Everything a Gateway can add is bounded:
/// audio counted in samples (a relay may send deltas of a few samples each, which whole milliseconds counted as
/// nothing), marks and their names, and the turn ids remembered. Upstream's relay sends the provider's playback
/// marks to the client, one behind each audio delta (openclaw/openclaw src/gateway/talk/relay/session-create.ts,
/// `markStrategy: "transport"`; extensions/openai/realtime-voice-provider.ts `sendMark`): a turn's audio still plays
/// as one buffer, carrying the marks between and behind its deltas, to be acknowledged once it has been heard.
struct RealtimeOutputQueue {
    struct Limits: Sendable {
        /// Audio beyond this is cut (`cancelOutput` reason `playback-overflow`), as the browser client does.
        var maxQueuedMs = 10_000
        var sampleRate = 24_000
        /// Marks waiting at once; one more is refused (and logged). A relay sends one behind each audio delta, so
        /// 10 s of queued audio in deltas of 10 ms holds this many; upstream's xAI bridge ends a session with as
        /// many outstanding (openclaw/openclaw PR #119045).
        var maxQueuedMarks = 1_024
        /// Turns cut off by barge-in whose late audio is still dropped; the oldest is forgotten first (its audio is
        /// long over by then).
        var maxRememberedTurns = 64
        /// Longer mark names and turn ids are refused: ours are short tokens.
        var maxNameBytes = 256
        init() {}

        var maxQueuedSamples: Int { maxQueuedMs * sampleRate / 1000 }
    }

    enum Item {
        /// Audio of one turn, and the marks that came between and behind its deltas: acknowledged once it is heard.
        case audio(PCMBuffer, turnId: String?, marks: [String])
        /// A mark with no audio queued before it (its audio played, or was flushed): acknowledged at once.
        case mark(String)
    }

    enum Admission: Equatable {
        case queued
        /// More audio than the queue holds: the output is cut (the caller flushes and tells the relay).
        case overflow
        case refused(String)
    }

    let limits: Limits
    private(set) var items: [Item] = []
    private var queuedSamples = 0
    private var marks = 0
    /// Oldest first.
    private var droppedTurns: [String] = []

    init(limits: Limits) { self.limits = limits }

    var isEmpty: Bool { items.isEmpty }
    var droppedTurnCount: Int { droppedTurns.count }

    mutating func appendAudio(_ samples: [Int16], turnId: String?) -> Admission {
        if let turnId, turnId.utf8.count > limits.maxNameBytes { return .refused("a turn id of \(turnId.utf8.count) bytes") }
        if queuedSamples + samples.count > limits.maxQueuedSamples { return .overflow }
        items.append(.audio(PCMBuffer(sampleRate: limits.sampleRate, samples: samples), turnId: turnId, marks: []))
        queuedSamples += samples.count
        return .queued
    }

    mutating func appendMark(_ name: String) -> Admission {
        guard name.utf8.count <= limits.maxNameBytes else { return .refused("a mark name of \(name.utf8.count) bytes") }
        guard marks < limits.maxQueuedMarks else { return .refused("more than \(limits.maxQueuedMarks) marks waiting") }
        items.append(.mark(name))
        marks += 1
        return .queued
    }

    /// The next item; the audio of one turn queued so far comes as one buffer, so it plays without gaps, with the
    /// marks between and behind it (up to the next turn's audio).
    mutating func next() -> Item? {
        guard !items.isEmpty else { return nil }
        switch items.removeFirst() {
        case .mark(let name):
            marks -= 1
            return .mark(name)
        case .audio(var buffer, let turn, var carried):
            while let item = items.first {
                if case .mark(let name) = item {
                    carried.append(name)
                    marks -= 1
                } else if case .audio(let more, let nextTurn, _) = item, nextTurn == turn {
                    buffer.samples += more.samples
                } else {
                    break
                }
                items.removeFirst()
            }
            queuedSamples = max(0, queuedSamples - buffer.samples.count)
            return .audio(buffer, turnId: turn, marks: carried)
        }
    }

    /// Drops the queued audio (a clear, a barge-in, an overflow); marks stay, to be acknowledged in order.
    mutating func flushAudio() {
        items.removeAll { if case .audio = $0 { true } else { false } }
        queuedSamples = 0
    }

    mutating func removeAll() {
        items = []
        queuedSamples = 0
        marks = 0
    }

    mutating func dropTurn(_ turnId: String) {
        guard turnId.utf8.count <= limits.maxNameBytes, !droppedTurns.contains(turnId) else { return }
        droppedTurns.append(turnId)
        if droppedTurns.count > limits.maxRememberedTurns { droppedTurns.removeFirst(droppedTurns.count - limits.maxRememberedTurns) }
    }

    func isDropped(_ turnId: String?) -> Bool { turnId.map(droppedTurns.contains) ?? false }
}
