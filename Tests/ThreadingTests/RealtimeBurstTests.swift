import Testing
import Threading

/// A realtime thread doing CPU-heavy work sleeps once it has run its budget without blocking, so it never reaches the
/// process's `RLIMIT_RTTIME` (rtkit's 200 ms: the kernel kills the process there) and never holds a core from the
/// desktop for long; a thread that blocks between pieces of work is never held up.
@Suite struct RealtimeBurstTests {
    static let ms: UInt64 = 1_000_000

    @Test func `a thread that blocks between pieces of work never pauses`() {
        var burst = RealtimeBurst(budgetNanoseconds: 50 * Self.ms, cpu: 0, voluntarySwitches: 0)
        // 100 pieces of 10 ms, a block after each: a second of work, no stretch over 10 ms.
        let pauses = (1...100).filter { piece in burst.mustPause(cpu: UInt64(piece) * 10 * Self.ms, voluntarySwitches: piece) }
        #expect(pauses.isEmpty)
        #expect(burst.longestNanoseconds == 10 * Self.ms)
    }

    @Test func `a thread that runs without blocking pauses once it has run its budget, not before`() {
        var burst = RealtimeBurst(budgetNanoseconds: 50 * Self.ms, cpu: 0, voluntarySwitches: 0)
        let looks = (1...6).map { piece in burst.mustPause(cpu: UInt64(piece) * 10 * Self.ms, voluntarySwitches: 0) }
        #expect(looks == [false, false, false, false, true, true])
    }

    @Test func `after the pause, the next stretch is counted from the pause`() {
        var burst = RealtimeBurst(budgetNanoseconds: 50 * Self.ms, cpu: 0, voluntarySwitches: 0)
        let atBudget = burst.mustPause(cpu: 50 * Self.ms, voluntarySwitches: 0)
        // The pause was a block: 40 ms more is a stretch of 40 ms, 50 ms more the budget again.
        let after40 = burst.mustPause(cpu: 90 * Self.ms, voluntarySwitches: 1)
        let after50 = burst.mustPause(cpu: 100 * Self.ms, voluntarySwitches: 1)
        #expect([atBudget, after40, after50] == [true, false, true])
    }

    /// The thread blocked somewhere between two looks, and the count cannot know where: the stretch counts from the
    /// earlier look, so it is never shorter than the thread's real run.
    @Test func `a block between two looks counts the stretch from the earlier look`() {
        var burst = RealtimeBurst(budgetNanoseconds: 50 * Self.ms, cpu: 0, voluntarySwitches: 0)
        let before = burst.mustPause(cpu: 30 * Self.ms, voluntarySwitches: 0)
        let after = burst.mustPause(cpu: 80 * Self.ms, voluntarySwitches: 1)
        #expect([before, after] == [false, true])
        #expect(burst.longestNanoseconds == 50 * Self.ms)
    }

    @Test func `the budget is a quarter of a process time limit under 200 ms, and 50 ms otherwise`() {
        #expect(RealtimeBurst.budget(timeLimitMicroseconds: 200_000) == 50 * Self.ms)
        #expect(RealtimeBurst.budget(timeLimitMicroseconds: .max) == 50 * Self.ms)
        #expect(RealtimeBurst.budget(timeLimitMicroseconds: 40_000) == 10 * Self.ms)
    }
}
