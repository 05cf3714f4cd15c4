import Foundation

/// Debian's `pocketsphinx_continuous -infile`, run on the same model files as our recogniser, as the
/// reference the benchmark compares against: one process per file, so each run pays the model load.
package struct BaselineDecoder: Sendable {
    package static let engineName = "pocketsphinx_continuous"

    package var executable: String
    package var models: ModelPaths
    /// A JSGF grammar used instead of the language model.
    package var grammar: String?

    /// Finds the program on `PATH`. Throws when it is not installed.
    package init(models: ModelPaths, grammar: String? = nil, searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) throws {
        let dirs = (searchPath ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let found = dirs.map({ $0 + "/" + Self.engineName }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchmarkError.baselineMissing(searched: dirs)
        }
        self.executable = found
        self.models = models
        self.grammar = grammar
    }

    /// The program's arguments for one file.
    package func arguments(for file: String) -> [String] {
        var args = ["-infile", file, "-hmm", models.acousticModel, "-dict", models.dictionary]
        if let grammar {
            args += ["-jsgf", grammar]
        } else if let lm = models.languageModel {
            args += ["-lm", lm]
        }
        return args
    }

    /// Decodes one file; returns the hypothesis lines joined and the wall time the process took. The process is run
    /// and waited for on a thread of its own: a decode takes seconds, and the cooperative pool has one thread a core.
    package func transcribe(_ file: String) async throws -> (text: String, wallSeconds: Double) {
        let decoder = self
        return try await withCheckedThrowingContinuation { done in
            Thread { done.resume(with: Result { try decoder.transcribeBlocking(file) }) }.start()
        }
    }

    private func transcribeBlocking(_ file: String) throws -> (text: String, wallSeconds: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments(for: file)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let started = Date()
        do { try process.run() } catch {
            throw BenchmarkError.baselineFailed(file: file, reason: "cannot start \(executable): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let wall = Date().timeIntervalSince(started)
        guard process.terminationStatus == 0 else {
            throw BenchmarkError.baselineFailed(file: file, reason: "\(Self.engineName) exited with status \(process.terminationStatus)")
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        return (lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " "), wall)
    }
}

/// A benchmark could not run to the end.
package enum BenchmarkError: Error, Equatable, CustomStringConvertible {
    case baselineMissing(searched: [String])
    case baselineFailed(file: String, reason: String)

    package var description: String {
        switch self {
        case .baselineMissing(let dirs):
            return "--baseline needs \(BaselineDecoder.engineName), which is not on PATH (searched \(dirs.joined(separator: ":"))); install Debian's 'pocketsphinx' package"
        case .baselineFailed(let file, let reason): return "The baseline decoder failed on \(file): \(reason)"
        }
    }
}
