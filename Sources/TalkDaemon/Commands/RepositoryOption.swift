import Foundation

/// `--repository DIR`, shared by the bench commands that start the reference Gateway: the checkout that holds
/// tools/reference-gateway.
enum RepositoryOption {
    static let spec = OptionSpec.option("repository", value: "dir", help: "The openclaw-talk source folder (default: the current folder).")

    /// The folder given, else the current one.
    static func folder(_ parsed: ParsedArguments) -> String { parsed.option("repository") ?? FileManager.default.currentDirectoryPath }
}
