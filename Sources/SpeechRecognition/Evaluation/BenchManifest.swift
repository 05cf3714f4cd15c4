import Foundation

/// One clip of a benchmark manifest.
package struct ManifestEntry: Sendable, Equatable {
    /// Line of the manifest it came from (the header is line 1).
    package var line: Int
    /// As written in the manifest, relative to its folder.
    package var file: String
    /// Resolved against the manifest's folder.
    package var path: String
    package var transcript: String
}

/// A TSV manifest: a header row naming the columns, `file` and `transcript` required (others ignored),
/// `file` relative to the manifest's folder.
package struct BenchManifest: Sendable, Equatable {
    package var path: String
    package var entries: [ManifestEntry]

    /// Reads and checks a manifest: every row well formed and every audio file present.
    package static func load(path: String) throws -> BenchManifest {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ManifestError.unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(text, path: path, folder: folder) { FileManager.default.fileExists(atPath: $0) }
    }

    /// Parses manifest text; `fileExists` decides whether a clip is present.
    package static func parse(_ text: String, path: String, folder: String, fileExists: (String) -> Bool) throws -> BenchManifest {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard let headerLine = lines.first, !headerLine.allSatisfy(\.isWhitespace) else { throw ManifestError.empty(path: path) }
        let header = headerLine.split(separator: "\t", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let fileColumn = header.firstIndex(of: "file") else { throw ManifestError.missingColumn(path: path, column: "file", header: header) }
        guard let textColumn = header.firstIndex(of: "transcript") else {
            throw ManifestError.missingColumn(path: path, column: "transcript", header: header)
        }
        var entries: [ManifestEntry] = []
        for (index, line) in lines.enumerated().dropFirst() where !line.allSatisfy(\.isWhitespace) {
            let number = index + 1
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let needed = max(fileColumn, textColumn) + 1
            guard fields.count >= needed else {
                throw ManifestError.malformedRow(path: path, line: number, reason: "it has \(fields.count) tab-separated field(s), the header needs at least \(needed)")
            }
            let file = fields[fileColumn].trimmingCharacters(in: .whitespaces)
            guard !file.isEmpty else { throw ManifestError.malformedRow(path: path, line: number, reason: "its 'file' field is empty") }
            let resolved = file.hasPrefix("/") ? file : URL(fileURLWithPath: folder).appendingPathComponent(file).path
            guard fileExists(resolved) else { throw ManifestError.missingAudio(path: path, line: number, file: resolved) }
            entries.append(ManifestEntry(line: number, file: file, path: resolved, transcript: fields[textColumn]))
        }
        guard !entries.isEmpty else { throw ManifestError.noRows(path: path) }
        return BenchManifest(path: path, entries: entries)
    }
}

/// What is wrong with a benchmark manifest; row problems name the line.
package enum ManifestError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case empty(path: String)
    case missingColumn(path: String, column: String, header: [String])
    case malformedRow(path: String, line: Int, reason: String)
    case missingAudio(path: String, line: Int, file: String)
    case noRows(path: String)

    package var description: String {
        switch self {
        case .unreadable(let p, let r): return "Cannot read manifest \(p): \(r)"
        case .empty(let p): return "Manifest \(p) is empty; it needs a header row with the columns 'file' and 'transcript'"
        case .missingColumn(let p, let c, let h):
            return "Manifest \(p) has no '\(c)' column (header: \(h.joined(separator: ", "))); the columns 'file' and 'transcript' are required, tab-separated"
        case .malformedRow(let p, let l, let r): return "Manifest \(p), row at line \(l) is malformed: \(r)"
        case .missingAudio(let p, let l, let f): return "Manifest \(p), row at line \(l): audio file \(f) does not exist (paths are relative to the manifest's folder)"
        case .noRows(let p): return "Manifest \(p) has a header but no rows"
        }
    }
}
