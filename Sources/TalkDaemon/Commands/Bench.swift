extension OpenClawTalk {
    /// Benchmarks: `bench audio`, `bench aec`, `bench speech MANIFEST.tsv` (the default), `bench gateway`, `bench synth`.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench",
            abstract: "Measure speed, latency and accuracy on this machine.",
            subcommands: [
                Speech.self,
                Audio.self,
                Aec.self,
                GatewayBench.self,
                Synth.self,
                UplinkBench.self,
            ],
            defaultSubcommand: Speech.self
        )
    }
}
