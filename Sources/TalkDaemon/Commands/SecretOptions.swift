import Foundation

/// The Gateway's shared token and password, taken the ways that keep them out of `/proc/PID/cmdline`
/// (what `ps` shows every user) and shell history: `--token-file FILE` / `--password-file FILE` (`-` reads
/// standard input), or `OPENCLAW_TALK_TOKEN` / `OPENCLAW_TALK_PASSWORD`. The plain `--token` / `--password`
/// stay for compatibility. Shared by the commands that pair or connect (`setup`, `run`, `start`).
struct SecretOptions {
    static let tokenVariable = "OPENCLAW_TALK_TOKEN"
    static let passwordVariable = "OPENCLAW_TALK_PASSWORD"
    /// Longer than any token; a larger file is not a token file.
    static let maxFileBytes = 64 * 1024

    /// The option table entries, in the order `--help` lists them.
    static let options: [OptionSpec] = [
        .option("token-file", value: "file", help: "Read the Gateway's shared token from this file ('-': standard input). Recommended."),
        .option("password-file", value: "file", help: "Read the Gateway's shared password from this file ('-': standard input). Recommended."),
        .option("token", value: "token", help: "The shared token itself (visible in ps and shell history: prefer --token-file or $\(tokenVariable))."),
        .option("password", value: "password", help: "The shared password itself (prefer --password-file or $\(passwordVariable))."),
    ]

    /// The help paragraph the commands append to their discussion.
    static let discussion = "Secrets: give the shared token with --token-file FILE (or '-' for standard input) or the "
        + "\(tokenVariable) environment variable, the password with --password-file or \(passwordVariable); "
        + "--token/--password on the command line are seen by every user through ps."

    /// The token and password given. Flags and files always count; the environment only when
    /// `includeEnvironment` (when the command needs a secret and none came from elsewhere, e.g. a setup
    /// code without one). `standardInputTaken` says another argument already reads standard input.
    static func read(
        _ parsed: ParsedArguments, includeEnvironment: Bool, standardInputTaken: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        readStandardInput: () -> [UInt8] = { Array(FileHandle.standardInput.readDataToEndOfFile()) }
    ) throws -> (token: String?, password: String?) {
        let files = [parsed.option("token-file"), parsed.option("password-file")].compactMap { $0 }
        if files.filter({ $0 == "-" }).count + (standardInputTaken ? 1 : 0) > 1 {
            throw ValidationError("Only one thing can be read from standard input ('-'); put the others in files.")
        }
        func one(_ name: String, _ variable: String) throws -> String? {
            let plain = parsed.option(name)
            let file = parsed.option(name + "-file")
            if plain != nil, file != nil { throw ValidationError("Give '--\(name)' or '--\(name)-file', not both.") }
            if let plain { return try checked(plain, "--\(name)") }
            if let file {
                let bytes = file == "-" ? readStandardInput() : try contents(of: file, option: "--\(name)-file")
                guard bytes.count <= maxFileBytes else {
                    throw ValidationError("'--\(name)-file \(file)' holds more than 64 KiB; it is not a \(name) file.")
                }
                return try checked(String(decoding: bytes, as: UTF8.self), "--\(name)-file \(file)")
            }
            if includeEnvironment, let value = environment[variable], !value.isEmpty { return try checked(value, "$\(variable)") }
            return nil
        }
        return (try one("token", tokenVariable), try one("password", passwordVariable))
    }

    /// A secret without the line break a file or `echo` adds; empty or multi-line values are refused,
    /// with a message that never repeats them.
    private static func checked(_ raw: String, _ source: String) throws -> String {
        let value = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw ValidationError("\(source) is empty.") }
        guard !value.contains(where: \.isNewline) else { throw ValidationError("\(source) holds more than one line.") }
        return value
    }

    private static func contents(of path: String, option: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("Cannot read '\(option) \(path)': \(String(cString: strerror(errno))).") }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count <= maxFileBytes {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw ValidationError("Cannot read '\(option) \(path)': \(String(cString: strerror(errno))).") }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}
