import Testing

@testable import TalkBench

/// `bench soak`'s counting, from the Gateway's records: each row a run's utterances and the requests the Gateway
/// saw, and what the user would be told (lost, duplicated, wrong text).
@Suite struct SoakTallyTests {
    typealias U = SoakTally.Utterance
    typealias D = SoakTally.Delivery
    static let words = "go forward ten meters"

    /// Utterances at 0, 20 and 40 s (each 2 s long).
    static let three = [0, 20_000, 40_000].map { U(startedAtMs: Int64($0), endedAtMs: Int64($0 + 2_000)) }

    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var deliveries: [(String, String, Int64)]
        var delivered: Int
        var lost: Int
        var duplicated: Int
        var wrongText: Int
        var unprompted = 0
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "each utterance one request", deliveries: [("a", words, 3_000), ("b", words, 23_000), ("c", words, 43_000)],
            delivered: 3, lost: 0, duplicated: 0, wrongText: 0),
        Row(name: "a request the Gateway never saw is a loss", deliveries: [("a", words, 3_000), ("c", words, 43_000)],
            delivered: 2, lost: 1, duplicated: 0, wrongText: 0),
        Row(name: "a resend of one key (after a drop, to the restarted Gateway) is one request",
            deliveries: [("a", words, 3_000), ("b", words, 23_000), ("b", words, 29_000), ("c", words, 43_000)],
            delivered: 3, lost: 0, duplicated: 0, wrongText: 0),
        Row(name: "two keys for one utterance are a duplicate",
            deliveries: [("a", words, 3_000), ("b", words, 23_000), ("b2", words, 27_000), ("c", words, 43_000)],
            delivered: 4, lost: 0, duplicated: 1, wrongText: 0),
        Row(name: "a request held through an outage counts for its utterance",
            deliveries: [("a", words, 3_000), ("b", words, 31_000), ("c", words, 43_000)],
            delivered: 3, lost: 0, duplicated: 0, wrongText: 0),
        Row(name: "other words are wrong text, in any case and punctuation the words are right",
            deliveries: [("a", "Go forward, ten meters.", 3_000), ("b", "go forward", 23_000), ("c", words, 43_000)],
            delivered: 3, lost: 0, duplicated: 0, wrongText: 1),
        Row(name: "a request before anything was said is unprompted, not a delivery",
            deliveries: [("z", words, -500), ("a", words, 3_000), ("b", words, 23_000), ("c", words, 43_000)],
            delivered: 3, lost: 0, duplicated: 0, wrongText: 0, unprompted: 1),
    ]

    @Test(arguments: rows) func `the Gateway's records are counted as the user would`(row: Row) {
        let tally = SoakTally.count(
            utterances: Self.three, deliveries: row.deliveries.map { D(idempotencyKey: $0.0, message: $0.1, acceptedAtMs: $0.2) },
            expected: Self.words)
        #expect(tally.spoken == 3)
        #expect(tally.delivered == row.delivered)
        #expect(tally.lost == row.lost)
        #expect(tally.duplicated == row.duplicated)
        #expect(tally.wrongText == row.wrongText)
        #expect(tally.unprompted == row.unprompted)
    }

    @Test func `delivery time runs from the end of the utterance to the first acceptance of its key`() {
        let tally = SoakTally.count(
            utterances: Self.three,
            deliveries: [D(idempotencyKey: "b", message: Self.words, acceptedAtMs: 29_000),
                         D(idempotencyKey: "b", message: Self.words, acceptedAtMs: 25_000)],
            expected: Self.words)
        #expect(tally.deliveryMs == [3_000])
        #expect(tally.keysPerUtterance == [0, 1, 0])
    }

    @Test func `growth compares the median of the first and last windows`() {
        // 30 samples over 290 s: windows of a third (96.7 s); RSS 100 MB then 110 MB at the end.
        let samples = (0..<30).map { i in
            SoakResourceSample(t: Double(i * 10), rssMB: i < 20 ? 100 : 110, cpuPercent: 1, fds: 40)
        }
        #expect(SoakResourceSample.growthPercent(samples, \.rssMB) == 10)
        #expect(SoakResourceSample.growthPercent(samples, { Double($0.fds) }) == 0)
        #expect(SoakResourceSample.growthPercent(Array(samples.prefix(2)), \.rssMB) == nil)
    }
}
