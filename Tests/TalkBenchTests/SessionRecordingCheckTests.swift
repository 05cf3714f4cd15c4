import Foundation
import TalkBench
import Testing

@testable import AudioIO

/// `bench talk --record DIR`: a session that left no recording that reads back whole is named, with the reason its
/// own log gave, as it ends; one that left its recording whole is not.
@Suite struct SessionRecordingCheckTests {
    @Test func `a session that left an empty recording folder is named with its log's reason, a whole one is not`() async throws {
        let home = NSTemporaryDirectory() + "recording-check-\(UUID().uuidString)"
        let record = home + "/record"
        try FileManager.default.createDirectory(atPath: record + "/bargein-0", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        // A session binary that logs its recording's failure, as `EchoCancellingCapture` does, and exits.
        let binary = home + "/openclaw-talk"
        try "#!/bin/sh\necho 'error: Echo cancellation recording not written audio.error=\"the disk is full\"' >&2\n"
            .write(toFile: binary, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
        var whole = EchoCaptureRecorder()
        let frame = [Int16](repeating: 100, count: AudioFrame.samplesPerFrame)
        for _ in 0..<10 { whole.append(raw: frame, far: frame, playedAround: 0, mark: .none) }
        try whole.write(to: record + "/bargein-1")

        var check = SessionRecordingCheck()
        for trial in 0..<2 {
            let session = home + "/session-\(trial)"
            try FileManager.default.createDirectory(atPath: session, withIntermediateDirectories: true)
            let child = try await TalkChild([], home: session, binary: binary)
            _ = await child.exited()
            check.check("bargein-\(trial)", in: record, child: child)
        }
        #expect(check.checked == 2)
        #expect(Array(check.missing.keys) == ["bargein-0"])
        #expect(check.missing["bargein-0"]?.contains("the disk is full") == true, "\(check.missing)")
    }
}
