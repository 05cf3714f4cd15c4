import Foundation
import TalkTestSupport
import Testing

@testable import TalkDaemon

/// What `make install` and `make deb` ship, checked where no build is needed: the package's version is the
/// program's, and the desktop entry is one desktop environments accept.
@Suite struct PackagingTests {
    @Test func `the Debian package's version is the one --version prints`() throws {
        let changelog = try String(contentsOfFile: TestInputs.packageRoot + "/debian/changelog", encoding: .utf8)
        let first = try #require(changelog.split(separator: "\n").first)
        let version = first.split(separator: "(").last?.split(separator: ")").first.map(String.init)
        #expect(version == OpenClawTalk.version.split(separator: " ").last.map(String.init), "debian/changelog: \(first)")
    }

    static let validator = TestInput.program("desktop-file-validate", package: "desktop-file-utils")

    @Test(.requires(validator)) func `the desktop entry validates`() async throws {
        let (status, output) = try await ChildProcess.output(
            try Self.validator.path(), [TestInputs.packageRoot + "/contrib/desktop/openclaw-talk.desktop"], mergeStderr: true)
        #expect(status == 0 && output.isEmpty, "\(output)")
    }
}
