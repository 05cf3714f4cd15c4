import Foundation
import SessionBridge

/// What `bench soak` counts from the Gateway's side, free of I/O so a table can test it: each utterance spoken
/// into the virtual microphone against the `chat.send` requests the Gateway recorded (`chat-transcripts`).
///
/// A request belongs to the last utterance spoken before the Gateway accepted it (utterances are 20 s apart, a
/// request held through an outage arrives seconds late, never a whole period). Requests are told apart by their
/// idempotency key: a resend of one key (after a dropped connection, or to the restarted Gateway) is one request.
struct SoakTally: Equatable {
    struct Utterance: Equatable {
        /// Wall-clock milliseconds when its playback started and ended (the Gateway stamps in wall-clock ms).
        var startedAtMs: Int64
        var endedAtMs: Int64
    }

    struct Delivery: Equatable {
        var idempotencyKey: String
        var message: String
        var acceptedAtMs: Int64
    }

    var spoken = 0
    /// Distinct idempotency keys the Gateway recorded that answer an utterance.
    var delivered = 0
    /// Utterances no request answers.
    var lost = 0
    /// Utterances two or more distinct keys answer (the same words sent twice as new requests).
    var duplicated = 0
    /// Requests whose words are not the utterance's (the grammar allows one sentence only).
    var wrongText = 0
    /// Requests before any utterance was spoken.
    var unprompted = 0
    /// From the end of each utterance to the Gateway's first acceptance of its request.
    var deliveryMs: [Double] = []
    /// Per utterance (in order): how many distinct keys answered it, and its delivery time (nil: lost).
    var keysPerUtterance: [Int] = []
    var delayPerUtterance: [Double?] = []

    /// Counts `deliveries` (every record, resends included, from every Gateway process of the run) against
    /// `utterances`, whose words are all `expected`.
    static func count(utterances: [Utterance], deliveries: [Delivery], expected: String) -> SoakTally {
        var tally = SoakTally()
        let spoken = utterances.sorted { $0.startedAtMs < $1.startedAtMs }
        tally.spoken = spoken.count
        var firstByKey: [String: Delivery] = [:]
        for d in deliveries where firstByKey[d.idempotencyKey].map({ d.acceptedAtMs < $0.acceptedAtMs }) ?? true {
            firstByKey[d.idempotencyKey] = d
        }
        var answers = [[Delivery]](repeating: [], count: spoken.count)
        let want = normalized(expected)
        for d in firstByKey.values.sorted(by: { $0.acceptedAtMs < $1.acceptedAtMs }) {
            guard let index = spoken.lastIndex(where: { $0.startedAtMs <= d.acceptedAtMs }) else {
                tally.unprompted += 1
                continue
            }
            answers[index].append(d)
            tally.delivered += 1
            if normalized(d.message) != want { tally.wrongText += 1 }
        }
        for (utterance, keys) in zip(spoken, answers) {
            tally.keysPerUtterance.append(keys.count)
            if keys.isEmpty { tally.lost += 1 }
            if keys.count > 1 { tally.duplicated += 1 }
            let delay = keys.first.map { Double(max(0, $0.acceptedAtMs - utterance.endedAtMs)) }
            tally.delayPerUtterance.append(delay)
            if let delay { tally.deliveryMs.append(delay) }
        }
        return tally
    }

    /// Lower case, letters, digits and single spaces: "Go forward, ten meters." is "go forward ten meters".
    static func normalized(_ text: String) -> String {
        String(text.lowercased().map { $0.isLetter || $0.isNumber || $0 == "'" ? $0 : " " })
            .split(separator: " ").joined(separator: " ")
    }

    var json: JSONValue {
        [
            "spoken": .int(Int64(spoken)), "delivered": .int(Int64(delivered)), "lost": .int(Int64(lost)),
            "duplicated": .int(Int64(duplicated)), "wrongText": .int(Int64(wrongText)), "unprompted": .int(Int64(unprompted)),
            "deliveryMs": TalkBenchReport.summary(deliveryMs),
        ]
    }
}

/// The daemon's resources, sampled every 10 s, and how they grew from the start of the run to its end.
struct SoakResourceSample: Equatable {
    var t: Double
    var rssMB: Double
    var cpuPercent: Double
    var fds: Int

    var json: JSONValue {
        ["t": .double((t * 10).rounded() / 10), "rssMB": .double((rssMB * 100).rounded() / 100),
         "cpuPercent": .double((cpuPercent * 10).rounded() / 10), "fds": .int(Int64(fds))]
    }

    /// The window compared at each end: the ten minutes, or a third of a shorter run.
    static let growthWindowSeconds = 600.0

    /// Growth in percent of the median of `value` over the last window against the first (nil with too few samples).
    static func growthPercent(_ samples: [SoakResourceSample], _ value: (SoakResourceSample) -> Double) -> Double? {
        guard let last = samples.last?.t, samples.count >= 3 else { return nil }
        let window = min(growthWindowSeconds, last / 3)
        let first = samples.filter { $0.t <= samples[0].t + window }.map(value)
        let final = samples.filter { $0.t >= last - window }.map(value)
        guard let a = BenchStatistics.percentile(first, 0.5), let b = BenchStatistics.percentile(final, 0.5), a > 0 else { return nil }
        return (b - a) * 100 / a
    }
}
