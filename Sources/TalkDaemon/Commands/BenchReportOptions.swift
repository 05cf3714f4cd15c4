import Foundation
import TalkBench

/// `--json` and `--report DIR`, shared by the bench commands as an option group: the figures as one JSON object on
/// stdout, written to a report folder (`BenchReportFolder`), or both; as text otherwise.
struct BenchReportOptions: Sendable {
    static let options: [OptionSpec] = [
        .flag("json", help: "Print the figures as one JSON object."),
        .option("report", value: "dir",
                help: "Also write the figures as DIR/bench-<name>.json (with the date, machine and command) and redraw the report page DIR/index.html."),
    ]

    /// `--json`: the JSON object instead of the text.
    var json: Bool
    /// `--report DIR`.
    var folder: BenchReportFolder?

    init(_ parsed: ParsedArguments) {
        json = parsed.flag("json")
        folder = parsed.option("report").map(BenchReportFolder.init(folder:))
    }

    /// Writes the figures to the report folder and prints them with `--json`; `make` runs only when either asks
    /// for it. Returns whether the JSON was printed (the text is then not).
    func publish(name: String, json make: () throws -> String) async throws -> Bool {
        guard json || folder != nil else { return false }
        let text = try make()
        let version = VersionText.describe().split(separator: "\n").prefix(2).joined(separator: "; ")
        try await folder?.write(text, name: name, run: BenchReportFolder.runRecord(arguments: Array(CommandLine.arguments.dropFirst()), version: version))
        if json { print(text) }
        return json
    }

    /// `value` as pretty JSON with sorted keys. No strategy for NaN: a figure that was not measured is null with a
    /// reason, never a number that is not one, so a NaN that slips through fails here instead of reaching a reader.
    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
