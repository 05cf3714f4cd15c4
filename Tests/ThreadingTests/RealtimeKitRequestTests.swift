import Testing
import Threading

/// What is asked of rtkit: never more than it allows (it refuses the whole request), and an `RLIMIT_RTTIME` it accepts.
@Suite struct RealtimeKitRequestTests {
    static let unlimited = RealtimeKitRequest.TimeLimit(soft: .max, hard: .max)

    @Test func `an unlimited process gets 200 ms as its realtime time limit, soft and hard`() throws {
        let request = try RealtimeKitRequest(wanted: 3, maxPriority: 20, maxTimeMicroseconds: 200_000, current: Self.unlimited)
        #expect(request.priority == 3)
        #expect(request.newTimeLimit == .init(soft: 200_000, hard: 200_000))
    }

    @Test func `rtkit's lower maximums lower the priority and the time limit`() throws {
        let request = try RealtimeKitRequest(wanted: 3, maxPriority: 2, maxTimeMicroseconds: 50_000, current: Self.unlimited)
        #expect(request.priority == 2)
        #expect(request.newTimeLimit == .init(soft: 50_000, hard: 50_000))
    }

    @Test func `a time limit the process already has within rtkit's maximum is kept`() throws {
        let request = try RealtimeKitRequest(
            wanted: 3, maxPriority: 20, maxTimeMicroseconds: 200_000, current: .init(soft: 20_000, hard: 100_000))
        #expect(request.newTimeLimit == nil)
    }

    @Test func `a lower soft limit stays lower`() throws {
        let request = try RealtimeKitRequest(
            wanted: 3, maxPriority: 20, maxTimeMicroseconds: 200_000, current: .init(soft: 20_000, hard: .max))
        #expect(request.newTimeLimit == .init(soft: 20_000, hard: 200_000))
    }

    @Test func `an rtkit that allows no priority is not asked`() {
        #expect(throws: RealtimeKitError.nothingAllowed("its MaxRealtimePriority is 0")) {
            try RealtimeKitRequest(wanted: 3, maxPriority: 0, maxTimeMicroseconds: 200_000, current: Self.unlimited)
        }
    }
}
