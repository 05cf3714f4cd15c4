import Foundation
import SessionBridge
import SpeechRecognition

/// A benchmark report folder (`bench ... --report DIR`): the benchmark's JSON goes to `DIR/bench-NAME.json` with the
/// run's date, machine and command beside the figures, and the report page (`DIR/index.html`, plots drawn by
/// tools/bench-report/report.py with matplotlib) is drawn again from every benchmark in the folder. `make bench`
/// runs each with the same DIR.
package struct BenchReportFolder: Sendable {
    package var folder: String

    package init(folder: String) { self.folder = folder }

    /// Writes `json` (one benchmark's object) with `run` (`runRecord`), then redraws the page (on a thread of its
    /// own: matplotlib takes seconds, which must not block the cooperative pool). A page that cannot be drawn (no
    /// python3 or matplotlib) is reported on stderr; the JSON is written regardless.
    package func write(_ json: String, name: String, run: JSONValue) async throws {
        let path = try record(json, name: name, run: run)
        FileHandle.standardError.write(Data("Wrote \(path)\n".utf8))
        let folder = self
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread { folder.drawPage(); done.resume() }.start()
        }
    }

    /// Writes `json` with `run` beside its figures to `bench-NAME.json` (atomically, the folder made if missing);
    /// returns its path.
    /// - Throws: `TalkBenchFailure` when `json` is not one JSON object; the file system's error.
    package func record(_ json: String, name: String, run: JSONValue) throws -> String {
        guard case .object(var object)? = JSONValue.parse(Array(json.utf8)) else {
            throw TalkBenchFailure("bench \(name) made no JSON object to report")
        }
        object["run"] = run
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/bench-\(name).json"
        try Data((JSONValue.object(object).jsonText + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return path
    }

    private func drawPage() {
        guard let script = Self.reportScript() else {
            FileHandle.standardError.write(Data("Report page not drawn: tools/bench-report/report.py not found (a source checkout has it).\n".utf8))
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, folder]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.standardError
        do {
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                FileHandle.standardError.write(Data("Report page not drawn: \(script) failed (python3 -m pip install matplotlib?)\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("Report page not drawn: python3: \(error)\n".utf8))
        }
    }

    /// tools/bench-report/report.py in the checkout this binary was built in (or the current folder), else the copy
    /// `make install` puts beside the models.
    package static func reportScript() -> String? {
        let checkout = ModelLocator.appModelDirectories().map { ($0 as NSString).deletingLastPathComponent + "/tools/bench-report/report.py" }
        let installed = ModelLocator.installedModelDirectories().map { ($0 as NSString).deletingLastPathComponent + "/bench-report.py" }
        return (checkout + installed).first { FileManager.default.fileExists(atPath: $0) }
    }

    /// When, where and how the benchmark ran: what the figures page prints above its figures. `arguments`: the
    /// command's (without the program's name); `version`: the program's version line.
    package static func runRecord(arguments: [String], version: String, now: Date = Date()) -> JSONValue {
        let command = ["openclaw-talk"] + arguments
        return [
            "date": .string(ISO8601DateFormatter().string(from: now)),
            "machine": .string(machine()),
            "command": .string(command.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")),
            "version": .string(version),
        ]
    }

    /// "AMD EPYC 7B13, 2 cores, 23.5 GiB, Debian GNU/Linux 12 (bookworm)".
    package static func machine() -> String {
        func read(_ path: String) -> String {
            String(decoding: FileHandle(forReadingAtPath: path)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        }
        func field(_ text: String, _ key: String, separator: Character) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(key) }
                .flatMap { $0.split(separator: separator, maxSplits: 1).last }
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")) }
        }
        let cpu = field(read("/proc/cpuinfo"), "model name", separator: ":") ?? "unknown CPU"
        let memory = field(read("/proc/meminfo"), "MemTotal", separator: ":").flatMap { Double($0.split(separator: " ").first ?? "") }
            .map { String(format: "%.1f GiB", $0 / 1_048_576) } ?? "? GiB"
        let system = field(read("/etc/os-release"), "PRETTY_NAME", separator: "=") ?? "Linux"
        return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory), \(system)"
    }
}
