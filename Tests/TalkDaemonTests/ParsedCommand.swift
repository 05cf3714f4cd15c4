@testable import TalkDaemon

extension CommandParser {
    /// The command `argv` names, built from its parsed options, as `main` builds it (without running it).
    func command(_ argv: [String]) throws -> any ParsableCommand {
        let result = try parse(argv)
        return try result.command.init(result.parsed)
    }
}
