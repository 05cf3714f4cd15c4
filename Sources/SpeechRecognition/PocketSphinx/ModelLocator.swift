import Foundation

/// The files one decoder needs, found on disk.
package struct ModelPaths: Sendable, Equatable {
    /// Folder holding `mdef`, `means`, `variances`, `transition_matrices`, `feat.params`.
    package var acousticModel: String
    package var dictionary: String
    /// The n-gram language model; only looked for in dictation mode.
    package var languageModel: String?
}

/// Finds the acoustic model, dictionary and language model: in `--model-dir` first, then the project's
/// `models/` (in a checkout, or installed under `PREFIX/share/openclaw-talk/models`), then Debian's
/// `pocketsphinx-en-us` location. Each part is searched for on its own, so a custom
/// dictionary in `models/en-us/` can sit beside Debian's acoustic model.
package struct ModelLocator: Sendable {
    /// Folders searched in order.
    package var searchDirectories: [String]
    package var language: String
    /// A folder the user named (`--model-dir`): it must exist and hold the acoustic model, rather than being
    /// skipped silently in favour of another model.
    package var requiredDirectory: String?

    /// Where Debian's pocketsphinx-en-us package puts the model.
    package static let debianModelDirectory = "/usr/share/pocketsphinx/model"

    package init(searchDirectories: [String], language: String = "en-us", requiredDirectory: String? = nil) {
        self.searchDirectories = searchDirectories
        self.language = language
        self.requiredDirectory = requiredDirectory
    }

    /// The standard order: the given directory, the project's `models/` folders, then Debian's.
    package init(modelDirectory: String?, language: String = "en-us") {
        var dirs: [String] = []
        if let modelDirectory { dirs.append(modelDirectory) }
        dirs += Self.appModelDirectories()
        dirs.append(Self.debianModelDirectory)
        self.init(searchDirectories: dirs, language: language, requiredDirectory: modelDirectory)
    }

    /// Files a usable acoustic model folder must hold.
    static let requiredAcousticFiles = ["mdef", "means", "variances", "transition_matrices"]

    /// Finds every part the mode needs, checking each one is complete.
    package func locate(for mode: RecognitionMode, dictionary explicitDictionary: String? = nil) throws -> ModelPaths {
        var isDirectory: ObjCBool = false
        if let requiredDirectory,
            !FileManager.default.fileExists(atPath: requiredDirectory, isDirectory: &isDirectory)
                || !isDirectory.boolValue
        {
            throw SpeechRecognitionError.modelDirectoryNotFound(path: requiredDirectory)
        }
        let acoustic = try findAcousticModel(in: requiredDirectory.map { [$0] } ?? searchDirectories)
        let dictionary =
            try explicitDictionary.map { try checkedFile($0) }
            ?? findFile(
                part: "pronunciation dictionary (\(language) .dict)",
                names: ["cmudict-\(language).dict", "\(language).dict", "cmudict.dict"]
            )
        var languageModel: String?
        if case .dictation(let explicitLM) = mode {
            languageModel =
                try explicitLM.map { try checkedFile($0) }
                ?? findFile(
                    part: "language model (\(language).lm.bin)",
                    names: ["\(language).lm.bin", "\(language).lm", "\(language).lm.dmp"]
                )
        }
        return ModelPaths(acousticModel: acoustic, dictionary: dictionary, languageModel: languageModel)
    }

    /// Candidate folders for a language inside one search directory: `DIR/en-us` then `DIR` itself.
    private func languageFolders(in dir: String) -> [String] {
        [(dir as NSString).appendingPathComponent(language), dir]
    }

    private func findAcousticModel(in directories: [String]) throws -> String {
        var searched: [String] = []
        for dir in directories {
            for folder in languageFolders(in: dir) {
                // Debian nests the acoustic model in a folder named like the language: en-us/en-us/mdef.
                for candidate in [(folder as NSString).appendingPathComponent(language), folder] {
                    searched.append(candidate)
                    let mdef = (candidate as NSString).appendingPathComponent("mdef")
                    if FileManager.default.fileExists(atPath: mdef) {
                        try checkAcousticModel(candidate)
                        return candidate
                    }
                }
            }
        }
        throw SpeechRecognitionError.modelNotFound(
            part: "acoustic model (a folder with mdef, means, variances)",
            searched: unique(searched)
        )
    }

    private func findFile(part: String, names: [String]) throws -> String {
        var searched: [String] = []
        for dir in searchDirectories {
            for folder in languageFolders(in: dir) {
                for name in names {
                    let path = (folder as NSString).appendingPathComponent(name)
                    searched.append(path)
                    if FileManager.default.fileExists(atPath: path) { return try checkedFile(path) }
                }
            }
        }
        throw SpeechRecognitionError.modelNotFound(part: part, searched: unique(searched))
    }

    /// Catches what PocketSphinx would otherwise report only as a vague load failure: missing or empty parts.
    private func checkAcousticModel(_ folder: String) throws {
        for name in Self.requiredAcousticFiles {
            let path = (folder as NSString).appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: path) else {
                throw SpeechRecognitionError.modelBroken(path: folder, reason: "it has no \(name) file")
            }
            _ = try checkedFile(path)
        }
    }

    private func checkedFile(_ path: String) throws -> String {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw SpeechRecognitionError.modelNotFound(part: "file", searched: [path])
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        if size == 0 { throw SpeechRecognitionError.modelBroken(path: path, reason: "the file is empty") }
        return path
    }

    private func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    /// The project's model folders in the order they are searched: a checkout's `models/`
    /// (`projectModelDirectories`), then the installed copy (`installedModelDirectories`).
    package static func appModelDirectories(
        currentDirectory: String = FileManager.default.currentDirectoryPath, executable: String? = runningExecutable()
    ) -> [String] {
        var seen = Set<String>()
        return (projectModelDirectories(currentDirectory: currentDirectory, executable: executable)
            + installedModelDirectories(executable: executable)).filter { seen.insert($0).inserted }
    }

    /// The project's `models/` folder: beside the current directory, or above the running executable
    /// (a `swift build` binary lives in `.build/<config>/`).
    static func projectModelDirectories(
        currentDirectory: String = FileManager.default.currentDirectoryPath,
        executable: String? = runningExecutable()
    ) -> [String] {
        var candidates = [currentDirectory]
        var dir = (executable.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath() })?
            .deletingLastPathComponent()
        for _ in 0..<4 {
            guard let current = dir else { break }
            candidates.append(current.path)
            dir = current.deletingLastPathComponent()
        }
        var seen = Set<String>()
        return candidates.map { ($0 as NSString).appendingPathComponent("models") }
            .filter { FileManager.default.fileExists(atPath: $0) && seen.insert($0).inserted }
    }

    /// Where `make install` and the Debian package put the models: `PREFIX/share/openclaw-talk/models` for a
    /// binary in `PREFIX/bin` (`/usr/share/...` for the package, `~/.local/share/...` for a user's install).
    package static func installedModelDirectories(executable: String? = runningExecutable()) -> [String] {
        guard let executable else { return [] }
        let prefix = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        let folder = prefix.appendingPathComponent("share/openclaw-talk/models").path
        return FileManager.default.fileExists(atPath: folder) ? [folder] : []
    }

    /// The running binary's path: `/proc/self/exe`, as `argv[0]` is only a name when the shell found it on PATH.
    package static func runningExecutable() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }
}
