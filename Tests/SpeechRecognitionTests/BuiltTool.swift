import Foundation
import TalkTestSupport

/// Runs the `openclaw-talk` built with these tests (`TestInput.builtBinary`), never another configuration's.
enum BuiltTool {
    static var path: String? { TestInput.builtBinary.location }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the tool to its end. stderr goes to a file, so a chatty log cannot block the tool on a full pipe.
    static func run(_ arguments: [String]) throws -> Outcome {
        let path = try TestInput.builtBinary.path()
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-stderr-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        guard let errHandle = FileHandle(forWritingAtPath: errPath) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errPath])
        }
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
}
