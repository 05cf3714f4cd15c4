import Foundation
import TalkBench

/// `bench talk`'s condition options (`--mode`, `--voice`, `--reply-seconds`, `--rate`, `--server`, `--grammar`,
/// `--user-gain-db`, `--user-at-seconds`, `--live-stt`) as TalkBench's
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
        var realtime = false
        switch parsed.option("mode") {
        case nil, "talk": break
        case "realtime": realtime = true
        case let other?: throw ValidationError("Invalid value '\(other)' for '--mode': expected talk or realtime")
        }
        if realtime, let option = ["grammar", "voice"].first(where: { parsed.option($0) != nil }) {
            throw ValidationError("'--\(option)' goes with '--mode talk'; in realtime mode the Gateway's relay hears and speaks")
        }
        var liveSTT = LiveSTT.relay
        if let name = parsed.option("live-stt") {
            guard let chosen = LiveSTT(rawValue: name) else { throw ValidationError("Invalid value '\(name)' for '--live-stt': expected relay or local") }
            guard !realtime else { throw ValidationError("'--live-stt' goes with '--mode talk'; in realtime mode the Gateway's relay hears") }
            liveSTT = chosen
        }
        let rate = try parsed.intOption("rate", range: 80...450)
        if rate != nil, realtime || voice == .gateway {
            throw ValidationError("'--rate' is the local voice's speed; with \(realtime ? "'--mode realtime'" : "'--voice gateway'") the Gateway speaks")
        }
        self.init(
            voice: voice, replySeconds: try parsed.intOption("reply-seconds", range: 2...120), server: try SoundServerOption.kind(parsed),
            grammar: grammar, realtime: realtime, rateWPM: rate,
            userGainDb: try parsed.doubleOption("user-gain-db", range: TalkBenchConditions.userGainRange) ?? 0,
            userAtSeconds: try parsed.doubleOption("user-at-seconds", range: BargeInUserStart.pinnedRange), liveSTT: liveSTT)
    }
}
