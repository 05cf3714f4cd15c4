extension OpenClawTalk {
    /// Benchmarks: `bench audio`, `bench aec`, `bench speech MANIFEST.tsv` (the default), `bench gateway`, `bench synth`, `bench talk`, `bench soak`.
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
                Talk.self,
                Soak.self,
            ],
            defaultSubcommand: Speech.self
        )
    }
}
