import Foundation

/// Parses argv, runs the chosen command, and maps every outcome to output and an exit status:
/// help and version on stdout (0); usage errors on stderr with the synopsis (2); runtime errors as
/// "Error: <description>" on stderr (1).
enum CommandRunner {
    static func main(root: any ParsableCommand.Type, argv: [String]) async -> Int32 {
        do {
            let result = try CommandParser(root: root).parse(argv)
            let command: any ParsableCommand
            do { command = try result.command.init(result.parsed) } catch {
                throw CommandError(commandPath: result.parsed.commandPath, underlying: error)
            }
            try await command.run()
            return ExitCode.success.rawValue
        } catch {
            let (text, code, toStdout) = render(error, root: root)
            if !text.isEmpty {
                (toStdout ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
            }
            return code
        }
    }

    static func render(_ error: any Error, root: any ParsableCommand.Type) -> (String, Int32, Bool) {
        switch error {
        case CleanExit.helpRequest(let path):
            let p = path.isEmpty ? [root.configuration.commandName] : path
            return (UsageText.help(UsageText.resolve(p, root: root), path: p), 0, true)
        case CleanExit.message(let m):
            return (m + "\n", 0, true)
        case let e as ExitCode:
            return ("", e.rawValue, false)
        case let e as CommandError:
            let message: String
            switch e.underlying {
            case let p as ParserError: message = p.message
            case let v as ValidationError: message = v.message
            case let exit as CleanExit: return render(exit, root: root)
            default: return render(e.underlying, root: root)
            }
            let command = UsageText.resolve(e.commandPath, root: root)
            let name = e.commandPath.joined(separator: " ")
            let text = "Error: \(message)\nUsage: \(UsageText.synopsis(command, path: e.commandPath))\n"
                + "  See '\(name) --help' for more information.\n"
            return (text, ExitCode.validationFailure.rawValue, false)
        case let v as ValidationError:
            return ("Error: \(v.message)\n", ExitCode.validationFailure.rawValue, false)
        default:
            return ("Error: \(String(describing: error))\n", ExitCode.failure.rawValue, false)
        }
    }
}
