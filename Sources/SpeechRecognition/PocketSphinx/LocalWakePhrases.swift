import Foundation

/// The local wake list for the Talk loop's wake-phrase mode: the phrases of `keyphrases/wake.kws` in the model
/// folder given, else in the project's `models/` folder (checkout or installed), else the ones that file ships with.
package enum LocalWakePhrases {
    package static let builtIn = ["hey open claw", "okay claw"]

    package static func load(modelDirectory: String? = nil) -> [String] {
        let folders = (modelDirectory.map { [$0] } ?? []) + ModelLocator.appModelDirectories()
        for folder in folders {
            let path = (folder as NSString).appendingPathComponent("keyphrases/wake.kws")
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let phrases = WakePhrases.parseKeywordList(text)
            if !phrases.isEmpty { return phrases }
        }
        return builtIn
    }
}
