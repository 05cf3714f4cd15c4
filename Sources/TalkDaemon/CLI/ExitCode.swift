import Foundation

/// Process exit statuses. Usage errors are 2 (the shell convention), runtime failures 1.
struct ExitCode: Error, Equatable, Sendable {
    var rawValue: Int32
    static let success = ExitCode(rawValue: 0)
    static let failure = ExitCode(rawValue: 1)
    static let validationFailure = ExitCode(rawValue: 2)
}

/// A user error in the arguments that the parser could not see (a bad value, two options that exclude each other).
struct ValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Ends the program successfully with a message on stdout (help, version).
enum CleanExit: Error, Equatable, Sendable {
    case helpRequest(commandPath: [String])
    case message(String)
}

/// What the argument parser rejects. Messages quote the input, as argument-parser's do.
enum ParserError: Error, Equatable, Sendable {
    case unknownOption(String, suggestion: String?)
    case unknownCommand(String, suggestion: String?)
    case missingValueForOption(String)
    case flagTakesNoValue(String)
    case missingArgument(String)
    case unexpectedExtraValues([String])
    case duplicateOption(String)
    case missingSubcommand

    var message: String {
        switch self {
        case .unknownOption(let o, let s): return "Unknown option '\(o)'" + (s.map { ". Did you mean '\($0)'?" } ?? "")
        case .unknownCommand(let c, let s): return "Unknown command '\(c)'" + (s.map { ". Did you mean '\($0)'?" } ?? "")
        case .missingValueForOption(let o): return "Missing value for '\(o)'"
        case .flagTakesNoValue(let o): return "Option '\(o)' takes no value"
        case .missingArgument(let a): return "Missing expected argument '<\(a)>'"
        case .unexpectedExtraValues(let v): return "Unexpected argument\(v.count > 1 ? "s" : "") '\(v.joined(separator: "' '"))'"
        case .duplicateOption(let o): return "Option '\(o)' given more than once"
        case .missingSubcommand: return "Missing subcommand"
        }
    }
}

/// A parser or validation error tied to the command it happened in, so usage text can name that command.
struct CommandError: Error, Sendable {
    var commandPath: [String]
    var underlying: any Error
}
