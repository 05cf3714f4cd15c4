import Foundation

/// Runs the built `openclaw-talk` (from `.build/debug` or `.build/release` under the package root).
enum BuiltTool {
    static var path: String? {
        ["debug", "release"].map { SpeechTestAudio.packageRoot.appendingPathComponent(".build/\($0)/openclaw-talk").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the tool to its end. stderr goes to a file, so a chatty log cannot block the tool on a full pipe.
    static func run(_ arguments: [String]) throws -> Outcome {
        guard let path else { throw ToolMissing() }
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-stderr-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        guard let errHandle = FileHandle(forWritingAtPath: errPath) else { throw ToolMissing() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errHandle
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errHandle.close()
        let errData = FileManager.default.contents(atPath: errPath) ?? Data()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                       stderr: String(decoding: errData, as: UTF8.self))
    }

    struct ToolMissing: Error, CustomStringConvertible {
        var description: String { "openclaw-talk is not built under .build/debug or .build/release; run 'swift build' first" }
    }
}
