import Foundation
import SpeechRecognition
import SpeechSynthesis

/// `openclaw-talk --version`: the version, which build this is, and where it finds its models and voice,
/// so a bug report says which binary ran with which files.
enum VersionText {
    static func describe() -> String {
        var lines = [OpenClawTalk.version]
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        var build = "build: \(configuration), commit \(BuildInfo.commit)"
        build += swiftRuntimeIsShared() ? ", Swift runtime from the toolchain (shared)" : ", Swift runtime linked in (static)"
        lines.append(build)
        let executable = ModelLocator.runningExecutable() ?? "unknown"
        lines.append("binary: \(executable)")
        let folders = ModelLocator.appModelDirectories(executable: executable)
        lines.append("models: " + (folders.isEmpty ? "none found (grammars and wake phrases built in)" : folders.joined(separator: ", ")))
        if let paths = try? ModelLocator(modelDirectory: nil).locate(for: .dictation()) {
            lines.append("speech model: \(paths.acousticModel) (dictionary \(paths.dictionary), language model \(paths.languageModel ?? "none"))")
        } else {
            lines.append("speech model: not found (apt-get install pocketsphinx-en-us)")
        }
        let voice = (try? EspeakDataLocator.locate()) ?? "not found (apt-get install espeak-ng-data)"
        lines.append("voice data: \(voice)")
        return lines.joined(separator: "\n")
    }

    /// Whether the Swift runtime came from a shared library (a toolchain build) rather than being linked in.
    static func swiftRuntimeIsShared() -> Bool {
        // /proc files report size 0: read them to the end rather than by their size.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() else { return false }
        return String(decoding: data, as: UTF8.self).contains("libswiftCore.so")
    }
}
