import Foundation
import Testing

/// Something a test needs that a machine may lack: it names itself and says how to get it.
///
/// Use it twice: `@Test(.requires(.sharedCorpus))` skips the test visibly when the input is absent (the
/// runner counts the skip), except under CI, where the test runs and `try TestInput.sharedCorpus.path()`
/// fails it with a message naming what is missing.
package struct TestInput: Sendable {
    package let name: String
    package let remedy: String
    private let locate: @Sendable () -> String?

    package init(name: String, remedy: String, locate: @escaping @Sendable () -> String?) {
        self.name = name
        self.remedy = remedy
        self.locate = locate
    }

    /// The input's path (or value), nil when absent.
    package var location: String? { locate() }
    package var isPresent: Bool { location != nil }

    /// Why a test needing this input did not run.
    package var missingReason: String { "\(name) is missing: \(remedy)" }

    /// The input's path, or an error naming what is missing (under CI this is how a test fails).
    package func path() throws -> String {
        guard let location else { throw Missing(reason: missingReason + (TestInputs.isCI ? " (CI=true requires it)" : "")) }
        return location
    }

    /// For an input a test can only ask about while it runs (a reference Gateway started without the
    /// schema): the path when present; when absent the test ends here as skipped, its reason naming the
    /// unchecked part (the runner counts it), or under CI it fails. Whatever the test checked before stands.
    /// Not for parameterised tests: Swift Testing does not report a test case that ends this way.
    package func pathOrSkip(_ unchecked: String) throws -> String {
        if let location { return location }
        if TestInputs.isCI { return try path() }
        try Test.cancel(Comment(rawValue: "\(unchecked) not run: \(missingReason)"))
    }

    package struct Missing: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { reason }
    }
}

extension TestInput {
    /// A path under `../shared`, when that file or folder exists.
    package static func shared(_ relative: String, what: String) -> TestInput {
        TestInput(name: "../shared/\(relative) (\(what))",
                  remedy: "put the project's shared/ folder beside the checkout or set OPENCLAW_TALK_SHARED") {
            guard let root = TestInputs.sharedDirectory else { return nil }
            let path = root + "/" + relative
            return FileManager.default.fileExists(atPath: path) ? path : nil
        }
    }

    /// The recorded speech corpus with transcripts (its folder; manifest.tsv inside).
    package static let sharedCorpus = shared("corpus/speech/manifest.tsv", what: "recorded speech corpus")
        .mapped { URL(fileURLWithPath: $0).deletingLastPathComponent().path }

    /// The Gateway's JSON Schema, which the reference Gateway validates every client frame against.
    package static let sharedSchema = shared("reference/openclaw-protocol.schema.json", what: "Gateway JSON Schema")

    /// Whether a reference Gateway checks the frames it receives, from the schema path it reported at start-up
    /// (nil: it runs without one). Without the schema the test ends as skipped through `pathOrSkip` (a failure
    /// under CI); a schema the tests can see but the Gateway did not load fails the test, since then every
    /// frame would pass unchecked.
    package static func requireSchemaCheck(reportedByGateway loaded: String?, _ unchecked: String) throws {
        guard loaded == nil else { return }
        let path = try sharedSchema.pathOrSkip(unchecked)
        throw Missing(reason: "the reference Gateway started without the schema at \(path), which the tests found: "
                      + "tools/reference-gateway/shared_dir.py and TestInputs.swift must follow the same rule")
    }

    /// A PulseAudio server to talk to (`scripts/with-pulse.sh` starts a private one and sets PULSE_SERVER).
    package static let pulseServer = TestInput(
        name: "PulseAudio (PULSE_SERVER)", remedy: "run the tests under scripts/with-pulse.sh, as make test does"
    ) { TestInputs.environment["PULSE_SERVER"].flatMap { $0.isEmpty ? nil : $0 } }

    /// The `openclaw-talk` built together with the running tests.
    package static let builtBinary = TestInput(
        name: "openclaw-talk beside the test bundle (\(TestInputs.buildDirectory))",
        remedy: "build it with the tests: swift build --build-tests"
    ) {
        let path = TestInputs.buildDirectory + "/openclaw-talk"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// A program on PATH (from a Debian package that scripts/install-deps.sh installs).
    package static func program(_ name: String, package: String) -> TestInput {
        TestInput(name: "\(name) (Debian package \(package))", remedy: "apt-get install \(package), or run make test") {
            let paths = (TestInputs.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            return paths.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
    }

    /// The same input, its location transformed (e.g. a file's folder).
    package func mapped(_ transform: @escaping @Sendable (String) -> String) -> TestInput {
        let locate = locate
        return TestInput(name: name, remedy: remedy) { locate().map(transform) }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when every input is present, and always under CI (where a missing one then fails the
    /// test through `TestInput.path()`); otherwise the test is skipped with the reason, and counted.
    package static func requires(_ inputs: TestInput...) -> Self {
        let missing = inputs.filter { !$0.isPresent }
        return .enabled(if: TestInputs.isCI || missing.isEmpty,
                        Comment(rawValue: missing.map(\.missingReason).joined(separator: "; ")))
    }
}
