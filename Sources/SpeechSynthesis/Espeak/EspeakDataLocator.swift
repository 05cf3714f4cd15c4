import Foundation

/// Finds espeak-ng's data folder before espeak-ng is asked to load it: a missing or partial folder then gives a
/// clear error naming every place looked at, instead of espeak-ng's bare errno (or, through its older API, exit()).
package enum EspeakDataLocator {
    /// The files espeak-ng cannot start without.
    static let requiredFiles = ["phontab", "phonindex", "phondata", "intonations"]

    /// Where Debian and upstream builds put the data, after `ESPEAK_DATA_PATH` (espeak-ng's own variable).
    static func candidates(environment: [String: String]) -> [String] {
        var folders: [String] = []
        if let path = environment["ESPEAK_DATA_PATH"], !path.isEmpty {
            folders += [path + "/espeak-ng-data", path]
        }
        #if arch(x86_64)
        folders.append("/usr/lib/x86_64-linux-gnu/espeak-ng-data")
        #elseif arch(arm64)
        folders.append("/usr/lib/aarch64-linux-gnu/espeak-ng-data")
        #endif
        folders += ["/usr/lib/espeak-ng-data", "/usr/share/espeak-ng-data", "/usr/local/share/espeak-ng-data"]
        return folders
    }

    /// The data folder: `explicit` when given (and only it), else the first complete candidate.
    /// - Throws: `SpeechSynthesisError.dataNotFound` listing what was searched.
    package static func locate(
        explicit: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        let searched = explicit.map { [$0] } ?? candidates(environment: environment)
        if let found = searched.first(where: isComplete) { return found }
        throw SpeechSynthesisError.dataNotFound(searched: searched)
    }

    static func isComplete(_ folder: String) -> Bool {
        requiredFiles.allSatisfy { FileManager.default.isReadableFile(atPath: folder + "/" + $0) }
    }
}
