import Foundation

/// Where the tests find what lives outside the package, by one rule for every test target (the Python
/// tests follow the same rule in tools/reference-gateway/shared_dir.py):
/// - `../shared` is `$OPENCLAW_TALK_SHARED` when set, else the folder `shared` beside the package root;
/// - CI is `$CI` set to anything but empty, `0` or `false`. CI always has `../shared`, PulseAudio and the
///   built binary, so there a missing input fails the test instead of skipping it.
package enum TestInputs {
    package static let environment = ProcessInfo.processInfo.environment

    /// The package root, from this file's path (Tests/TalkTestSupport/TestInputs.swift).
    package static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    package static let isCI: Bool = {
        let value = (environment["CI"] ?? "").lowercased()
        return !value.isEmpty && value != "0" && value != "false"
    }()

    /// The `shared` folder (reference material and corpus), or nil when it is not there.
    package static let sharedDirectory: String? = {
        let path = environment["OPENCLAW_TALK_SHARED"].flatMap { $0.isEmpty ? nil : $0 }
            ?? URL(fileURLWithPath: packageRoot).deletingLastPathComponent().appendingPathComponent("shared").path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            ? path : nil
    }()

    /// The folder of the test bundle that is running: `swift build --build-tests` puts the `openclaw-talk`
    /// it built for these tests beside it, so tests never pick another configuration's older binary.
    package static let buildDirectory: String = {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
    }()
}
