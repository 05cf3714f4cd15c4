import Foundation
import TalkBench

/// `bench talk`'s condition options (`--voice`, `--reply-seconds`, `--server`, `--grammar`) as TalkBench's
/// `TalkBenchConditions`.
extension TalkBenchConditions {
    init(_ parsed: ParsedArguments) throws {
        var voice = Voice.local
        if let name = parsed.option("voice") {
            guard let chosen = Voice(rawValue: name) else { throw ValidationError("Invalid value '\(name)' for '--voice': expected local or gateway") }
            voice = chosen
        }
        var grammar: String?
        if let path = parsed.option("grammar") {
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            guard FileManager.default.isReadableFile(atPath: absolute) else {
                throw ValidationError("Invalid value '\(path)' for '--grammar': no readable file there")
            }
            grammar = absolute
        }
        self.init(
            voice: voice, replySeconds: try parsed.intOption("reply-seconds", range: 2...120), server: try SoundServerOption.kind(parsed),
            grammar: grammar)
    }
}
