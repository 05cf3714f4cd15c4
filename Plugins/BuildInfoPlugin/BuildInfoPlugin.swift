import Foundation
import PackagePlugin

/// Gives the executable `BuildInfo.commit` (what `openclaw-talk --version` prints): before each build
/// scripts/build-info.sh writes the checkout's commit into BuildInfo.swift, only when it changed.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildInfo")
        let package = context.package.directoryURL
        return [
            .prebuildCommand(
                displayName: "BuildInfo.swift (the commit of this build)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [package.appendingPathComponent("scripts/build-info.sh").path, package.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
