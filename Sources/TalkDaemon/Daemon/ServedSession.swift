import TalkService

/// A session `DaemonRuntime.serve` runs as the daemon: the control commands (`ControlledSession`), and what the
/// runtime does around them: following the Gateway's sockets for the status, closing at shutdown, and a config
/// reloaded on SIGHUP. `DaemonSession` over either loop.
protocol ServedSession: ControlledSession {
    func watchGateway() async
    func close() async
    /// The settings of a reloaded config that apply to this session; `flagKeys` are those the command line set.
    func reload(_ config: ServiceConfig, flagKeys: Set<String>) async
}
