import Foundation
import TalkBench
import Testing

/// `OPENCLAW_TALK_BENCH_RUN`: the bench's sessions run another build's `openclaw-talk`. A wrong path is refused
/// by name, never replaced by this binary (which would report this build's figures as the other's).
@Suite struct TalkChildBinaryTests {
    @Test func `another build's binary that is not an executable file is refused by its path`() async throws {
        let home = NSTemporaryDirectory() + "talk-child-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let missing = home + "/before/openclaw-talk"
        await #expect(throws: ChildSpawn.StartError.cannotStart(path: missing, reason: "not an executable file")) {
            _ = try await TalkChild(["--help"], home: home, binary: missing)
        }
    }
}
