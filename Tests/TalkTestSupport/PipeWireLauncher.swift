import Foundation

/// Starts a private headless PipeWire (`scripts/pipewire-headless.sh`: pipewire, wireplumber and pipewire-pulse,
/// no sound card, no D-Bus) with the devices `scripts/with-pulse.sh` gives PulseAudio: null sink `vsink` at 16 kHz
/// mono and `vmic` on its monitor, loaded by the Pulse server at its start, so a restarted server has them again.
/// The script stops all three when told to (`stop`), or when the test process that started it is gone.
package enum PipeWireLauncher {
    /// The Pulse server's address for a server started in `directory`.
    package static func address(in directory: String) -> String { "unix:\(directory)/runtime/pulse/native" }

    /// Starts the server in `directory` (a 0700 folder of the caller's: its runtime folder, state and the three
    /// logs go there); returns the script's pid once the Pulse server answers and WirePlumber has made vsink and
    /// vmic the defaults, as PulseAudio has them when its socket opens. The wait ends at once if the script exits
    /// (one of the three died); its bound (`PulseAudioLauncher.hangBound`) only catches a server that hangs.
    /// Blocking: call it off the cooperative pool.
    package static func start(in directory: String, environment: [String: String]) throws -> pid_t {
        let script = TestInputs.packageRoot + "/scripts/pipewire-headless.sh"
        let pid = try ChildProcess.spawn("/bin/bash", [script, directory, String(getpid())], environment: environment)
        let pactl = { (arguments: [String]) in
            (try? ChildProcess.run("/usr/bin/pactl", ["--server", address(in: directory)] + arguments, environment: environment))
                .flatMap { $0.0 == 0 ? $0.1 : nil }
        }
        var info = ""
        var exited = false
        let deadline = ContinuousClock.now + PulseAudioLauncher.hangBound
        while ContinuousClock.now < deadline {
            info = pactl(["info"]) ?? "(no answer)"
            if Set(info.split(separator: "\n")).isSuperset(of: ["Default Sink: vsink", "Default Source: vmic"]) { return pid }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                break
            }
            usleep(25_000)
        }
        let devices = ["sinks", "sources", "modules"].map { "\($0): " + (pactl(["list", "short", $0]) ?? "-") }
        let logs = ["pipewire", "wireplumber", "pipewire-pulse"].map { name in
            let text = (try? String(contentsOfFile: "\(directory)/\(name).log", encoding: .utf8)) ?? "(none)"
            return "\(name).log: \(text.prefix(1500))"
        }
        if !exited { stop(pid, in: directory) }
        throw CommandFailure(
            "the test PipeWire \(exited ? "exited" : "did not answer with vsink and vmic within \(PulseAudioLauncher.hangBound)") at "
                + address(in: directory) + "; " + ([info] + devices + logs).joined(separator: "; "))
    }

    /// Stops the server the script `pid` runs (it SIGKILLs its three processes: to a Pulse client, a crash) and
    /// waits for the script. The stop file as well as SIGTERM: a script that inherited SIGTERM blocked still stops.
    package static func stop(_ pid: pid_t, in directory: String) {
        FileManager.default.createFile(atPath: directory + "/stop", contents: nil)
        kill(pid, SIGTERM)
        ChildProcess.wait(pid)
    }
}
