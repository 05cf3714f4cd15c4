import TalkBench

/// `--server pulse|pipewire`, shared by the bench commands that run on a sound server: `bench soak` starts the one
/// named, `bench talk` checks that the one answering is it. One spelling, one error.
enum SoundServerOption {
    static func spec(help: String) -> OptionSpec { .option("server", value: "pulse|pipewire", help: help) }

    /// The server named, or nil when `--server` was not given.
    static func kind(_ parsed: ParsedArguments) throws -> SoundServerKind? {
        guard let name = parsed.option("server") else { return nil }
        guard let kind = SoundServerKind(rawValue: name) else {
            throw ValidationError("Invalid value '\(name)' for '--server': expected pulse or pipewire")
        }
        return kind
    }
}
