import Foundation

/// Writes the systemd user unit (contrib/systemd/openclaw-talk.service, with the binary's path filled
/// in) to `~/.config/systemd/user/` and says what to run next.
package struct UserServiceInstaller: Sendable {
    package static let unitName = "openclaw-talk.service"

    /// The unit, kept in step with contrib/systemd/openclaw-talk.service (a test compares them), with the binary's
    /// path as one quoted word of `ExecStart` (`execArgument`).
    package static func unit(binary: String) -> String {
        template.replacingOccurrences(of: "@BINARY@", with: execArgument(binary))
    }

    /// `path` as systemd reads the program of a command line (systemd.service(5), "Command lines"): in double
    /// quotes, so a space does not split it; `\` and `"` escaped; `%` doubled, so no specifier is expanded in it.
    /// (`$` stays: systemd expands variables in the arguments only, and would keep a doubled one in the program's path.)
    package static func execArgument(_ path: String) -> String {
        var out = "\""
        for c in path {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out + "\""
    }

    /// `$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`).
    package static func unitDirectory(environment: [String: String]) -> String {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return config + "/systemd/user"
    }

    /// Writes the unit and returns the lines to print: where it went and the commands to enable it.
    package static func install(binary: String, environment: [String: String]) throws -> [String] {
        let directory = unitDirectory(environment: environment)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + unitName
        try Data(unit(binary: binary).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return [
            "Wrote \(path)",
            "Start it now and at every login:  systemctl --user daemon-reload && systemctl --user enable --now openclaw-talk",
            "Keep it running while you are logged out:  loginctl enable-linger \(environment["USER"] ?? "$USER")",
        ]
    }

    static let template = """
        # openclaw-talk as a systemd user service. `openclaw-talk install-service` writes this file to
        # ~/.config/systemd/user/; then: systemctl --user enable --now openclaw-talk
        # (and `loginctl enable-linger` to keep it running without a login session).
        [Unit]
        Description=openclaw-talk: OpenClaw Talk mode daemon
        Documentation=https://github.com/openclaw/openclaw
        After=pipewire-pulse.service pulseaudio.service
        Wants=pipewire-pulse.service
        # No more than 5 restarts in 5 minutes, then systemd gives up and `systemctl --user status` says why.
        # ([Unit] options: in [Service] systemd ignores the interval.)
        StartLimitIntervalSec=300
        StartLimitBurst=5

        [Service]
        Type=notify
        ExecStart=@BINARY@ run
        # Recordings, logs and the runtime folder are the user's alone, whatever the session's umask.
        UMask=0077
        ExecReload=/bin/kill -HUP $MAINPID
        # The daemon pings at half this interval; a hung daemon is restarted.
        WatchdogSec=60
        Restart=on-failure
        RestartSec=5
        NotifyAccess=main

        [Install]
        WantedBy=default.target

        """
}
